package inspect

import (
	"fmt"
	"runtime"
	"testing"
)

// virtualAr is an ar archive of n zero-filled members of size each, served
// without ever existing in memory: a stand-in for a 100 MB libcrypto.a.
type virtualAr struct{ n, size int64 }

func (v virtualAr) stride() int64 { return arHeaderSize + v.size } // size is even: no padding
func (v virtualAr) Size() int64   { return int64(len(ArMagic)) + v.n*v.stride() }

func (v virtualAr) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	overlay := func(b []byte, at int64) {
		if at+int64(len(b)) <= off || at >= off+int64(len(p)) {
			return
		}
		for i := range b {
			if j := at + int64(i) - off; j >= 0 && j < int64(len(p)) {
				p[j] = b[i]
			}
		}
	}
	overlay([]byte(ArMagic), 0)
	first := max(0, (off-int64(len(ArMagic)))/v.stride())
	for i := first; i < v.n; i++ {
		at := int64(len(ArMagic)) + i*v.stride()
		if at >= off+int64(len(p)) {
			break
		}
		overlay([]byte(fmt.Sprintf("m%-15d%-12s%-6s%-6s%-8s%-10d`\n", i, "0", "0", "0", "644", v.size)), at)
	}
	return len(p), nil
}

// TestLargeArchiveStreams inspects a 1 GiB archive and checks that memory
// allocated stays far below its size: parsers stream, never slurp.
func TestLargeArchiveStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1 GiB through the scanner")
	}
	v := virtualAr{n: 1024, size: 1 << 20}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := InspectReader("big.a", v, v.Size())
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.Slices[0].Objects); got != 1024 {
		t.Fatalf("%d members", got)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("inspected %d MiB with %d KiB allocated", v.Size()>>20, alloc>>10)
	if alloc > 16<<20 {
		t.Errorf("allocated %d bytes for a %d-byte archive; parsers must stream", alloc, v.Size())
	}
}
