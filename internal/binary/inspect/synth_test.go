package inspect

import (
	"debug/macho"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// Hand-made inputs for cases the real toolchain never writes.

// machoObject is testfixture's, typed as this package's tests call it.
func machoObject(t testing.TB, cmd macho.LoadCmd, p Platform, minos Version) []byte {
	t.Helper()
	return testfixture.MachOObject(t, cmd, uint32(p), uint32(minos))
}

// patch32 returns a copy of b with a little-endian uint32 v at off.
func patch32(b []byte, off int, v uint32) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c[off:], v)
	return c
}

type arEntry struct {
	name string // written verbatim into the 16-byte name field
	data []byte
}

// buildAr is testfixture.BuildAr for the unkeyed tables here.
func buildAr(entries ...arEntry) []byte {
	es := make([]testfixture.ArEntry, len(entries))
	for i, e := range entries {
		es[i] = testfixture.ArEntry{Name: e.name, Data: e.data}
	}
	return testfixture.BuildAr(es...)
}

// patchArSize overwrites the size field of the member header at hdrOff.
func patchArSize(ar []byte, hdrOff int, size string) []byte {
	c := append([]byte(nil), ar...)
	copy(c[hdrOff+48:hdrOff+58], fmt.Sprintf("%-10s", size))
	return c
}

type fatSlice struct {
	cpu    macho.Cpu
	data   []byte
	offset int64 // 0: next 4096-aligned offset
	noData bool  // point the entry at offset but do not write the data (past EOF)
}

// fatFile writes a FAT_MAGIC universal file.
func fatFile(t testing.TB, slices ...fatSlice) []byte {
	t.Helper()
	be := binary.BigEndian
	out := make([]byte, 8+20*len(slices))
	be.PutUint32(out, FatMagic)
	be.PutUint32(out[4:], uint32(len(slices)))
	end := int64(len(out))
	for i, s := range slices {
		off := s.offset
		if off == 0 {
			off = (end + 4095) &^ 4095
		}
		e := out[8+20*i:]
		be.PutUint32(e, uint32(s.cpu))
		be.PutUint32(e[8:], uint32(off))
		be.PutUint32(e[12:], uint32(len(s.data)))
		be.PutUint32(e[16:], 12)
		if s.noData {
			continue
		}
		if need := off + int64(len(s.data)); need > int64(len(out)) {
			out = append(out, make([]byte, need-int64(len(out)))...)
		}
		copy(out[off:], s.data)
		end = max(end, off+int64(len(s.data)))
	}
	return out
}

// fatFile64 writes a FAT_MAGIC_64 header with one entry and 4 KiB of zeros.
func fatFile64(t testing.TB, cpu macho.Cpu, off, size uint64) []byte {
	t.Helper()
	be := binary.BigEndian
	b := make([]byte, 8192)
	be.PutUint32(b, FatMagic64)
	be.PutUint32(b[4:], 1)
	be.PutUint32(b[8:], uint32(cpu))
	be.PutUint64(b[16:], off)
	be.PutUint64(b[24:], size)
	return b
}
