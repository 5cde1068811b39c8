package codeclass

import (
	"encoding/binary"
	"flag"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

var plainTable = flag.Bool("plaintable", false, "TestARM64PlainDecodes: try every arm64 word (minutes) and print plainPrefixes")

// TestARM64PlainDecodes holds arm64Plain to the decoder it stands in for:
// in every prefix of plainPrefixes, arm64asm decodes each word and none
// needs an extension (a sample of 64 a prefix and its extremes; with
// -plaintable, every word of all 4,096 prefixes, the table found held to
// the one in the code, and printed); B.cond is taken, and words beside
// the classes, which arm64asm does not decode or which need an
// extension, are not.
func TestARM64PlainDecodes(t *testing.T) {
	decodes := func(w uint32) bool {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], w)
		_, err := arm64asm.Decode(b[:])
		return err == nil
	}
	plain := func(w uint32) bool { return decodes(w) && arm64Ext(w) == extNone }
	if *plainTable {
		var found [64]uint64
		var mu sync.Mutex
		var all sync.WaitGroup
		next := make(chan uint32)
		for range runtime.GOMAXPROCS(0) {
			all.Go(func() {
				for p := range next {
					ok := true
					for i := uint32(0); i < 1<<20 && ok; i++ {
						ok = plain(p<<20 | i)
					}
					if ok {
						mu.Lock()
						found[p>>6] |= 1 << (p & 63)
						mu.Unlock()
					}
				}
			})
		}
		for p := range uint32(4096) {
			next <- p
		}
		close(next)
		all.Wait()
		if found != plainPrefixes {
			t.Errorf("plainPrefixes is not what every word gives")
		}
		t.Logf("plainPrefixes:\n%#016x", found)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for p := range uint32(4096) {
		if plainPrefixes[p>>6]>>(p&63)&1 == 0 {
			continue
		}
		for i := range 66 {
			w := p<<20 | r.Uint32()>>12
			switch i {
			case 0:
				w = p << 20
			case 1:
				w = p<<20 | 1<<20 - 1
			}
			if !arm64Plain(w) || !plain(w) {
				t.Fatalf("%08x: taken %v; arm64asm decodes it %v; extension %s", w, arm64Plain(w), decodes(w), extNames[arm64Ext(w)])
			}
		}
	}
	for _, w := range []uint32{
		0x54000000, // B.EQ
		0x54ffffef, // B.NV, the farthest back
	} {
		if !arm64Plain(w) || !decodes(w) {
			t.Errorf("%08x: B.cond not taken, or not decoded", w)
		}
	}
	for _, w := range []uint32{
		0x00000000, // UDF #0
		0x54000010, // BC.cond (FEAT_HBC), not B.cond
		0xf9c00000, // LDR X's unallocated opc=11
		0xb2800000, // MOV wide's unallocated opc=01
		0x52c00000, // MOVZ W with hw=2, unallocated
		0xd61f081f, // BRAAZ: pointer authentication, which arm64asm does not decode
		0x4e80a400, // SMMLA: I8MM
	} {
		if arm64Plain(w) {
			t.Errorf("%08x taken", w)
		}
	}
}
