package inspect

import (
	"bytes"
	"encoding/binary"
	"io"
)

// FormatPE is a Windows PE/COFF image: a .pyd extension module or a .dll
// (libcrypto-3-x64.dll) in a Windows wheel.
const FormatPE Format = "pe"

// PE is what check reads of a PE/COFF image: its machine. The build
// information is found by the same scan as in every other format; the
// machine code is not read (no classifier for it yet), which the report
// says.
type PE struct {
	Machine uint16
	Arch    string // "x86_64", "arm64", "i386", "arm"; "" for another machine
	// sections are [offset, size] of the image's headers and of each
	// section's raw data: what the Windows loader maps. None when the
	// section table cannot be read.
	sections [][2]uint64
}

// isPE matches the DOS stub every PE image starts with.
func isPE(b []byte) bool { return bytes.HasPrefix(b, []byte("MZ")) }

// peArchs are the COFF machine types of the CPUs Windows wheels ship.
var peArchs = map[uint16]string{0x8664: "x86_64", 0xaa64: "arm64", 0x14c: "i386", 0x1c4: "arm"}

// ParsePE reads the PE signature at the offset the DOS header gives and
// the COFF header's machine behind it, and where the image's sections lie.
func ParsePE(r io.ReaderAt, size int64) (*PE, error) {
	le := binary.LittleEndian
	var dos [64]byte
	if size < int64(len(dos)) {
		return nil, Malformed(0, "PE image of %d bytes is shorter than its DOS header (64)", size)
	}
	if _, err := r.ReadAt(dos[:], 0); err != nil {
		return nil, err
	}
	off := int64(le.Uint32(dos[0x3c:]))
	if off < 64 || off > size-6 {
		return nil, Malformed(0x3c, "PE signature offset %d lies outside the %d-byte file", off, size)
	}
	var coff [24]byte // signature and COFF file header
	if _, err := r.ReadAt(coff[:min(int64(len(coff)), size-off)], off); err != nil {
		return nil, err
	}
	if !bytes.Equal(coff[:4], []byte("PE\x00\x00")) {
		return nil, Malformed(off, "expected the PE signature \"PE\\0\\0\" at offset %d, found %q (a DOS program, not a PE image)", off, coff[:4])
	}
	m := le.Uint16(coff[4:])
	pe := &PE{Machine: m, Arch: peArchs[m]}
	if off > size-int64(len(coff)) {
		return pe, nil
	}
	nsec, opt := int64(le.Uint16(coff[6:])), int64(le.Uint16(coff[20:]))
	if opt >= 64 { // SizeOfHeaders at 60 in PE32 and PE32+ alike
		var h [4]byte
		if _, err := r.ReadAt(h[:], off+24+60); err == nil {
			pe.sections = append(pe.sections, [2]uint64{0, uint64(le.Uint32(h[:]))})
		}
	}
	tab := off + 24 + opt
	if tab > size || nsec*40 > size-tab {
		return pe, nil
	}
	raw := make([]byte, nsec*40)
	if _, err := r.ReadAt(raw, tab); err != nil {
		return pe, nil
	}
	for i := int64(0); i < nsec; i++ {
		s := raw[i*40:]
		pe.sections = append(pe.sections, [2]uint64{uint64(le.Uint32(s[20:])), uint64(le.Uint32(s[16:]))})
	}
	return pe, nil
}
