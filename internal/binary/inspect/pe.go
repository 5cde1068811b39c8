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
}

// isPE matches the DOS stub every PE image starts with.
func isPE(b []byte) bool { return bytes.HasPrefix(b, []byte("MZ")) }

// peArchs are the COFF machine types of the CPUs Windows wheels ship.
var peArchs = map[uint16]string{0x8664: "x86_64", 0xaa64: "arm64", 0x14c: "i386", 0x1c4: "arm"}

// ParsePE reads the PE signature at the offset the DOS header gives and
// the COFF header's machine behind it.
func ParsePE(r io.ReaderAt, size int64) (*PE, error) {
	var dos [64]byte
	if size < int64(len(dos)) {
		return nil, Malformed(0, "PE image of %d bytes is shorter than its DOS header (64)", size)
	}
	if _, err := r.ReadAt(dos[:], 0); err != nil {
		return nil, err
	}
	off := int64(binary.LittleEndian.Uint32(dos[0x3c:]))
	if off < 64 || off > size-6 {
		return nil, Malformed(0x3c, "PE signature offset %d lies outside the %d-byte file", off, size)
	}
	var hdr [6]byte
	if _, err := r.ReadAt(hdr[:], off); err != nil {
		return nil, err
	}
	if !bytes.Equal(hdr[:4], []byte("PE\x00\x00")) {
		return nil, Malformed(off, "expected the PE signature \"PE\\0\\0\" at offset %d, found %q (a DOS program, not a PE image)", off, hdr[:4])
	}
	m := binary.LittleEndian.Uint16(hdr[4:])
	return &PE{Machine: m, Arch: peArchs[m]}, nil
}
