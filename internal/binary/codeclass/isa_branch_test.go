package codeclass

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// TestARM64BranchDecodes holds arm64Branch to the decoder it stands in
// for: every word it accepts arm64asm decodes (a sample of a million, and
// each class's extremes; every one of the 411 million was tried once),
// and words just outside its classes are not taken for them.
func TestARM64BranchDecodes(t *testing.T) {
	decodes := func(w uint32) bool {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], w)
		_, err := arm64asm.Decode(b[:])
		return err == nil
	}
	classes := []struct{ mask, value uint32 }{
		{0x7c000000, 0x14000000}, {0xff000010, 0x54000000}, {0x7c000000, 0x34000000}, {0x1f000000, 0x10000000},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range classes {
		for i := range 250_000 {
			w := c.value | r.Uint32()&^c.mask
			switch i {
			case 0:
				w = c.value
			case 1:
				w = c.value | ^c.mask
			}
			if !arm64Branch(w) {
				t.Fatalf("%08x: in class %08x/%08x but not taken", w, c.mask, c.value)
			}
			if !decodes(w) {
				t.Fatalf("%08x: taken for a branch, but arm64asm does not decode it", w)
			}
		}
	}
	// B.cond with bit 4 set (BC.cond, FEAT_HBC) and words of no class.
	for _, w := range []uint32{0x54000010, 0x00000000, 0xd65f03c0, 0x91000000} {
		if arm64Branch(w) {
			t.Errorf("%08x taken for a branch", w)
		}
	}
}
