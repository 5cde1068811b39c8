package codeclass

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
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
	// sweep returns the prefixes of the given width every word of which
	// is plain, leaving out those skip says.
	sweep := func(width uint, skip func(q uint32) bool) []uint64 {
		found := make([]uint64, 1<<width/64)
		var mu sync.Mutex
		var all sync.WaitGroup
		next := make(chan uint32)
		for range runtime.GOMAXPROCS(0) {
			all.Go(func() {
				for q := range next {
					ok := !skip(q)
					for i := uint32(0); i < 1<<(32-width) && ok; i++ {
						ok = plain(q<<(32-width) | i)
					}
					if ok {
						mu.Lock()
						found[q>>6] |= 1 << (q & 63)
						mu.Unlock()
					}
				}
			})
		}
		for q := range uint32(1 << width) {
			next <- q
		}
		close(next)
		all.Wait()
		return found
	}
	if *plainTable {
		if found := sweep(12, func(uint32) bool { return false }); !slices.Equal(found, plainPrefixes[:]) {
			t.Errorf("plainPrefixes is not what every word gives:\n%#016x", found)
		}
		found := sweep(22, func(q uint32) bool { return bitSet(plainPrefixes[:], q>>10) })
		if !slices.Equal(found, plainWords()) {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
			for _, v := range found {
				binary.Write(zw, binary.LittleEndian, v)
			}
			zw.Close()
			if err := os.WriteFile("plain22.bin.gz", b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Errorf("plainWords is not what every word gives: plain22.bin.gz written again")
		}
	}
	// sample gives check the first and last word and n-2 more of each
	// prefix of the given width that table marks.
	r := rand.New(rand.NewPCG(1, 2))
	sample := func(width uint, table []uint64, n int, check func(w uint32)) {
		low := uint32(1)<<(32-width) - 1
		for q := range uint32(1 << width) {
			if !bitSet(table, q) {
				continue
			}
			check(q << (32 - width))
			check(q<<(32-width) | low)
			for range n - 2 {
				check(q<<(32-width) | r.Uint32()&low)
			}
		}
	}
	sample(12, plainPrefixes[:], 66, func(w uint32) {
		if !arm64Plain(w) || !plain(w) {
			t.Fatalf("%08x: taken %v; arm64asm decodes it %v; extension %s", w, arm64Plain(w), decodes(w), extNames[arm64Ext(w)])
		}
	})
	sample(22, plainWords(), 3, func(w uint32) {
		if ok, e := new(insnCache).word(w); !ok || e != extNone || !plain(w) {
			t.Fatalf("%08x: its 22-bit prefix is plain, but arm64asm decodes it %v, extension %q", w, decodes(w), extNames[arm64Ext(w)])
		}
	})
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
