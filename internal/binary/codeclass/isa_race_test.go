package codeclass

import (
	"sync"
	"testing"
)

// TestARM64DecodeConcurrently: check's workers walk several arm64 images
// at once, and arm64asm.Decode writes a package-level slice on every
// match. Under go test -race this fails unless the decodes are
// serialised (decoding).
func TestARM64DecodeConcurrently(t *testing.T) {
	words := []uint32{0xd65f03c0, 0xa9bf7bfd, 0x910003fd, 0x94000001, 0xf9400000} // ret, stp, mov, bl, ldr
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				for _, w := range words {
					if !arm64Known(w) {
						t.Errorf("%08x: not an instruction", w)
						return
					}
				}
			}
			describeInst([]byte{0xc0, 0x03, 0x5f, 0xd6}, true)
		})
	}
	wg.Wait()
}
