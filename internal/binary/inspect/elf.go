package inspect

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
)

// ELF holds the facts of one ELF file.
type ELF struct {
	Machine elf.Machine
	Arch    string // "x86_64", "aarch64", ...
	Type    elf.Type
	Class   elf.Class
	Data    elf.Data // byte order
	// The section header table as the header announces it (checked to lie
	// inside the file); the code classifier reads it, Inspect does not.
	Shoff                      uint64
	Shentsize, Shnum, Shstrndx uint16
}

// TypeName is "relocatable", "executable", "shared object" or "core".
func (e *ELF) TypeName() string {
	switch e.Type {
	case elf.ET_REL:
		return "relocatable"
	case elf.ET_EXEC:
		return "executable"
	case elf.ET_DYN:
		return "shared object"
	case elf.ET_CORE:
		return "core"
	}
	return e.Type.String()
}

var elfArch = map[elf.Machine]string{
	elf.EM_X86_64: "x86_64", elf.EM_AARCH64: "aarch64", elf.EM_386: "i386", elf.EM_ARM: "arm",
	elf.EM_PPC64: "ppc64", elf.EM_S390: "s390x", elf.EM_RISCV: "riscv", elf.EM_MIPS: "mips",
}

// ParseELF reads an ELF file's header: the identification, type and
// machine, and checks that the program and section header tables it
// announces lie inside the file. It reads 64 bytes and allocates nothing
// more: a library of a thousand objects is a thousand headers, and
// debug/elf would read every section table and name (the check target
// needs none of them).
func ParseELF(r io.ReaderAt, size int64) (*ELF, error) {
	var h [64]byte
	n, err := r.ReadAt(h[:min(size, 64)], 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read ELF header: %w", err)
	}
	if n < 16 || string(h[:4]) != elf.ELFMAG {
		return nil, Malformed(0, "ELF header: expected at least 16 bytes starting with %q, found %d bytes", elf.ELFMAG, n)
	}
	class, data := elf.Class(h[elf.EI_CLASS]), elf.Data(h[elf.EI_DATA])
	var bo binary.ByteOrder
	switch data {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return nil, Malformed(int64(elf.EI_DATA), "ELF data encoding %d: expected 1 (little-endian) or 2 (big-endian)", h[elf.EI_DATA])
	}
	hdrSize := map[elf.Class]int{elf.ELFCLASS32: 52, elf.ELFCLASS64: 64}[class]
	if hdrSize == 0 {
		return nil, Malformed(int64(elf.EI_CLASS), "ELF class %d: expected 1 (32-bit) or 2 (64-bit)", h[elf.EI_CLASS])
	}
	if n < hdrSize {
		return nil, Malformed(0, "truncated ELF header: expected %d bytes, file is %d bytes", hdrSize, size)
	}
	if v := elf.Version(h[elf.EI_VERSION]); v != elf.EV_CURRENT {
		return nil, Malformed(int64(elf.EI_VERSION), "ELF version %d: expected 1", v)
	}
	e := &ELF{Class: class, Data: data, Type: elf.Type(bo.Uint16(h[16:])), Machine: elf.Machine(bo.Uint16(h[18:]))}
	// The tables' offsets, entry sizes and counts (e_phoff, e_shoff, ...).
	var phoff, shoff uint64
	var phent, phnum, shent, shnum uint16
	if class == elf.ELFCLASS64 {
		phoff, shoff = bo.Uint64(h[32:]), bo.Uint64(h[40:])
		phent, phnum, shent, shnum = bo.Uint16(h[54:]), bo.Uint16(h[56:]), bo.Uint16(h[58:]), bo.Uint16(h[60:])
		e.Shstrndx = bo.Uint16(h[62:])
	} else {
		phoff, shoff = uint64(bo.Uint32(h[28:])), uint64(bo.Uint32(h[32:]))
		phent, phnum, shent, shnum = bo.Uint16(h[42:]), bo.Uint16(h[44:]), bo.Uint16(h[46:]), bo.Uint16(h[48:])
		e.Shstrndx = bo.Uint16(h[50:])
	}
	e.Shoff, e.Shentsize, e.Shnum = shoff, shent, shnum
	for _, t := range []struct {
		name       string
		off        uint64
		ent, count uint16
	}{{"program header", phoff, phent, phnum}, {"section header", shoff, shent, shnum}} {
		end := uint64(t.ent) * uint64(t.count)
		if t.count > 0 && (t.off > uint64(size) || end > uint64(size)-t.off) {
			return nil, Malformed(0, "ELF %s table at offset %d (%d entries of %d bytes) runs past the end of the file (%d bytes)", t.name, t.off, t.count, t.ent, size)
		}
	}
	e.Arch = elfArch[e.Machine]
	if e.Arch == "" {
		e.Arch = fmt.Sprintf("elf-machine(%d)", uint16(e.Machine))
	}
	return e, nil
}
