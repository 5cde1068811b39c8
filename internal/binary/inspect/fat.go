package inspect

import (
	"debug/macho"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
)

// Universal ("fat") file magic numbers, stored big-endian.
const (
	FatMagic   uint32 = 0xcafebabe // fat_arch with 32-bit offsets and sizes
	FatMagic64 uint32 = 0xcafebabf // fat_arch_64 with 64-bit offsets and sizes
)

// MaxFatArch caps nfat_arch. Apple's tools ship at most a handful of slices;
// the cap also tells a Java class file (same 0xcafebabe magic, whose next
// word is a class-file version of 45 or more) from a universal binary.
const MaxFatArch = 32

// FatArch is one slice of a universal file, as its fat_arch entry says.
type FatArch struct {
	CPU    macho.Cpu
	SubCPU uint32
	Offset int64 // from the start of the universal file
	Size   int64
}

// Arch is the slice's architecture name ("arm64", "x86_64", ...).
func (a FatArch) Arch() string { return CPUName(a.CPU, a.SubCPU) }

// ParseFat parses a universal file's header and validates every slice's
// offset and size against the file size. It does not look inside slices.
func ParseFat(r io.ReaderAt, size int64) (is64 bool, arches []FatArch, err error) {
	var hdr [8]byte
	if size < int64(len(hdr)) {
		return false, nil, Malformed(0, "truncated fat header: expected 8 bytes, file is %d bytes", size)
	}
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return false, nil, fmt.Errorf("read fat header: %w", err)
	}
	magic := binary.BigEndian.Uint32(hdr[0:])
	n := binary.BigEndian.Uint32(hdr[4:])
	entSize := int64(20) // fat_arch: cputype, cpusubtype, offset, size, align (log2)
	switch magic {
	case FatMagic:
	case FatMagic64:
		is64 = true
		entSize = 32 // fat_arch_64: cputype, cpusubtype, offset(8), size(8), align, reserved
	default:
		return false, nil, Malformed(0, "expected fat magic %#x or %#x, found %#x", FatMagic, FatMagic64, magic)
	}
	if n == 0 {
		return is64, nil, Malformed(4, "nfat_arch is 0: expected at least one slice")
	}
	if n > MaxFatArch {
		return is64, nil, Malformed(4, "nfat_arch %d exceeds the limit of %d (a Java class file shares the 0xcafebabe magic)", n, MaxFatArch)
	}
	tableEnd := 8 + int64(n)*entSize
	if tableEnd > size {
		return is64, nil, Malformed(8, "truncated fat header: %d fat_arch entries need %d bytes, file is %d bytes", n, tableEnd, size)
	}
	table := make([]byte, tableEnd-8)
	if _, err := r.ReadAt(table, 8); err != nil {
		return is64, nil, fmt.Errorf("read fat_arch table: %w", err)
	}
	be := binary.BigEndian
	for i := 0; i < int(n); i++ {
		e := table[int64(i)*entSize:]
		a := FatArch{CPU: macho.Cpu(be.Uint32(e[0:])), SubCPU: be.Uint32(e[4:])}
		var off, sz uint64
		if is64 {
			off, sz = be.Uint64(e[8:]), be.Uint64(e[16:])
		} else {
			off, sz = uint64(be.Uint32(e[8:])), uint64(be.Uint32(e[12:]))
		}
		entOff := 8 + int64(i)*entSize
		// Check in uint64 before converting, so huge fat_arch_64 values cannot wrap.
		if off > uint64(size) || sz > uint64(size)-off {
			return is64, nil, &FormatError{Slice: a.Arch(), Offset: entOff,
				Msg: fmt.Sprintf("slice %d (%s) at offset %d with size %d runs past end of file: expected offset+size <= %d", i, a.Arch(), off, sz, size)}
		}
		if int64(off) < tableEnd {
			return is64, nil, &FormatError{Slice: a.Arch(), Offset: entOff,
				Msg: fmt.Sprintf("slice %d (%s) at offset %d overlaps the fat header: expected offset >= %d", i, a.Arch(), off, tableEnd)}
		}
		if sz == 0 {
			return is64, nil, &FormatError{Slice: a.Arch(), Offset: entOff,
				Msg: fmt.Sprintf("slice %d (%s) is empty: expected a Mach-O file or ar archive", i, a.Arch())}
		}
		a.Offset, a.Size = int64(off), int64(sz)
		arches = append(arches, a)
	}
	// Slices must not overlap one another: lipo never writes that, and an
	// overlap lets one set of bytes masquerade as two architectures.
	sorted := append([]FatArch(nil), arches...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Offset < sorted[j].Offset })
	for i := 1; i < len(sorted); i++ {
		p, c := sorted[i-1], sorted[i]
		if c.Offset < p.Offset+p.Size {
			return is64, nil, &FormatError{Slice: c.Arch(), Offset: c.Offset,
				Msg: fmt.Sprintf("slice %s at offset %d overlaps slice %s (offset %d, size %d)", c.Arch(), c.Offset, p.Arch(), p.Offset, p.Size)}
		}
	}
	return is64, arches, nil
}
