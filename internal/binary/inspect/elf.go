package inspect

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ELF holds the facts of one ELF file.
type ELF struct {
	Machine elf.Machine
	Arch    string // "x86_64", "aarch64", ...
	Type    elf.Type
	Class   elf.Class
	Data    elf.Data // byte order
	bo      binary.ByteOrder
	// The section header table as the header announces it (checked to lie
	// inside the file); the code classifier reads it, Inspect does not.
	Shoff                      uint64
	Shentsize, Shnum, Shstrndx uint16
	// Loads are the PT_LOAD segments of a linked image (ET_EXEC, ET_DYN)
	// that lie inside the file: the bytes its loader maps.
	Loads []ELFLoad
	// Dynamic is what a linked image's dynamic section says of its
	// linking; nil for a file without one (an object, a static program,
	// a split-off debug file) or one that could not be read.
	Dynamic *ELFDynamic
	// DynamicErr is why the dynamic section the program headers announce
	// could not be read (wrapping a *FormatError); the rest of the file is
	// still what ParseELF says. Shared-library validation refuses it.
	DynamicErr error
}

// ELFDynamic is a linked ELF image's dynamic section: its name, the
// libraries the loader must find for it and where it tells the loader to
// look. Strings are as the file holds them.
type ELFDynamic struct {
	Soname  string   // DT_SONAME, "" without one
	Needed  []string // DT_NEEDED, in order
	Rpath   []string // DT_RPATH, split at ':'
	Runpath []string // DT_RUNPATH, split at ':'
}

// RunPaths are every directory the section tells the loader to search,
// DT_RPATH's then DT_RUNPATH's.
func (d *ELFDynamic) RunPaths() []string {
	return append(slices.Clone(d.Rpath), d.Runpath...)
}

var elfTypeNames = map[elf.Type]string{elf.ET_REL: "relocatable", elf.ET_EXEC: "executable", elf.ET_DYN: "shared object", elf.ET_CORE: "core"}

// TypeName is "relocatable", "executable", "shared object" or "core".
func (e *ELF) TypeName() string {
	if s, ok := elfTypeNames[e.Type]; ok {
		return s
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
	e := &ELF{Class: class, Data: data, bo: bo, Type: elf.Type(bo.Uint16(h[16:])), Machine: elf.Machine(bo.Uint16(h[18:]))}
	// The tables' offsets, entry sizes and counts (e_phoff, e_shoff, ...).
	var phoff uint64
	var phent, phnum uint16
	if class == elf.ELFCLASS64 {
		phoff, e.Shoff = bo.Uint64(h[32:]), bo.Uint64(h[40:])
		phent, phnum, e.Shentsize, e.Shnum = bo.Uint16(h[54:]), bo.Uint16(h[56:]), bo.Uint16(h[58:]), bo.Uint16(h[60:])
		e.Shstrndx = bo.Uint16(h[62:])
	} else {
		phoff, e.Shoff = uint64(bo.Uint32(h[28:])), uint64(bo.Uint32(h[32:]))
		phent, phnum, e.Shentsize, e.Shnum = bo.Uint16(h[42:]), bo.Uint16(h[44:]), bo.Uint16(h[46:]), bo.Uint16(h[48:])
		e.Shstrndx = bo.Uint16(h[50:])
	}
	for _, t := range []struct {
		name       string
		off        uint64
		ent, count uint16
	}{{"program header", phoff, phent, phnum}, {"section header", e.Shoff, e.Shentsize, e.Shnum}} {
		end := uint64(t.ent) * uint64(t.count)
		if t.count > 0 && (t.off > uint64(size) || end > uint64(size)-t.off) {
			return nil, Malformed(0, "ELF %s table at offset %d (%d entries of %d bytes) runs past the end of the file (%d bytes)", t.name, t.off, t.count, t.ent, size)
		}
	}
	e.Arch = cmp.Or(elfArch[e.Machine], fmt.Sprintf("elf-machine(%d)", uint16(e.Machine)))
	if phnum > 0 && (e.Type == elf.ET_DYN || e.Type == elf.ET_EXEC) {
		var dyn *ELFLoad
		if e.Loads, dyn, e.DynamicErr = programHeaders(r, size, bo, class, phoff, phent, phnum); e.DynamicErr == nil {
			e.Dynamic, e.DynamicErr = readDynamic(r, size, bo, class, e.Loads, dyn)
		}
	}
	return e, nil
}

// Caps on what a dynamic section may make the reader read: far above any
// real library (libcrypto's string table is about 100 KiB), far below what
// would let a crafted header make a check allocate without bound.
const (
	maxPhnum    = 1 << 12
	maxDynamic  = 1 << 20
	maxDynstr   = 16 << 20
	maxDynNames = 1 << 12
	maxDynName  = 4096 // PATH_MAX: a longer name is no library or directory
)

// ELFLoad is one PT_LOAD segment that lies inside the file: the bytes
// the loader maps, at Vaddr.
type ELFLoad struct {
	Off, Vaddr, Filesz uint64
}

// programHeaders reads a linked image's program headers: its PT_LOAD
// segments that lie inside the file (a loader refuses one outside it,
// and no byte is read through it) and its PT_DYNAMIC, nil when none.
func programHeaders(r io.ReaderAt, size int64, bo binary.ByteOrder, class elf.Class, phoff uint64, phent, phnum uint16) ([]ELFLoad, *ELFLoad, error) {
	is64 := class == elf.ELFCLASS64
	want := map[bool]uint16{true: 56, false: 32}[is64]
	if phent < want {
		return nil, nil, Malformed(0, "ELF program header entries of %d bytes: expected at least %d", phent, want)
	}
	if phnum > maxPhnum {
		return nil, nil, Malformed(0, "ELF program header table of %d entries: expected at most %d", phnum, maxPhnum)
	}
	var loads []ELFLoad
	var dyn *ELFLoad
	buf := make([]byte, want)
	for i := range uint64(phnum) {
		off := int64(phoff + i*uint64(phent))
		if _, err := r.ReadAt(buf, off); err != nil {
			return nil, nil, Malformed(off, "ELF program header %d: %v", i, err)
		}
		var typ uint64
		var s ELFLoad
		if is64 {
			typ, s = uint64(bo.Uint32(buf[0:])), ELFLoad{bo.Uint64(buf[8:]), bo.Uint64(buf[16:]), bo.Uint64(buf[32:])}
		} else {
			typ, s = uint64(bo.Uint32(buf[0:])), ELFLoad{uint64(bo.Uint32(buf[4:])), uint64(bo.Uint32(buf[8:])), uint64(bo.Uint32(buf[16:]))}
		}
		switch elf.ProgType(typ) {
		case elf.PT_LOAD:
			if s.Off <= uint64(size) && s.Filesz <= uint64(size)-s.Off {
				loads = append(loads, s)
			}
		case elf.PT_DYNAMIC:
			if dyn != nil {
				return nil, nil, Malformed(off, "ELF program header %d: a second PT_DYNAMIC", i)
			}
			dyn = &s
		}
	}
	return loads, dyn, nil
}

// readDynamic reads the PT_DYNAMIC segment dyn of a linked image and the
// strings its entries name; nil when there is none. Every offset is
// checked against the file before it is read.
func readDynamic(r io.ReaderAt, size int64, bo binary.ByteOrder, class elf.Class, loads []ELFLoad, dyn *ELFLoad) (*ELFDynamic, error) {
	is64 := class == elf.ELFCLASS64
	// A debug file split off with objcopy --only-keep-debug keeps the
	// program headers of a dynamic section it does not hold.
	if dyn == nil || dyn.Filesz == 0 {
		return nil, nil
	}
	switch {
	case dyn.Filesz > maxDynamic:
		return nil, Malformed(0, "ELF dynamic section of %d bytes: expected at most %d", dyn.Filesz, maxDynamic)
	case dyn.Off > uint64(size) || dyn.Filesz > uint64(size)-dyn.Off:
		return nil, Malformed(int64(min(dyn.Off, uint64(size))), "ELF dynamic section at offset %d (%d bytes) runs past the end of the file (%d bytes)", dyn.Off, dyn.Filesz, size)
	}
	raw := make([]byte, dyn.Filesz)
	if _, err := r.ReadAt(raw, int64(dyn.Off)); err != nil {
		return nil, Malformed(int64(dyn.Off), "ELF dynamic section: %v", err)
	}
	entSize := map[bool]int{true: 16, false: 8}[is64]
	type ent struct {
		tag elf.DynTag
		val uint64
	}
	var ents []ent
	var strtab, strsz uint64
	var haveStrtab, haveStrsz bool
	for i := 0; i+entSize <= len(raw); i += entSize {
		var e ent
		if is64 {
			e = ent{elf.DynTag(bo.Uint64(raw[i:])), bo.Uint64(raw[i+8:])}
		} else {
			e = ent{elf.DynTag(int32(bo.Uint32(raw[i:]))), uint64(bo.Uint32(raw[i+4:]))}
		}
		if e.tag == elf.DT_NULL {
			break
		}
		switch e.tag {
		case elf.DT_STRTAB:
			strtab, haveStrtab = e.val, true
		case elf.DT_STRSZ:
			strsz, haveStrsz = e.val, true
		case elf.DT_NEEDED, elf.DT_SONAME, elf.DT_RPATH, elf.DT_RUNPATH:
			if len(ents) == maxDynNames {
				return nil, Malformed(int64(dyn.Off)+int64(i), "ELF dynamic section: more than %d names", maxDynNames)
			}
			ents = append(ents, e)
		}
	}
	d := &ELFDynamic{}
	if len(ents) == 0 {
		return d, nil
	}
	if !haveStrtab || !haveStrsz {
		return nil, Malformed(int64(dyn.Off), "ELF dynamic section names libraries but has no DT_STRTAB and DT_STRSZ")
	}
	// DT_STRTAB is an address: the file offset is the one of the PT_LOAD
	// segment holding it.
	var stroff uint64
	found := false
	for _, l := range loads {
		if strtab >= l.Vaddr && strtab-l.Vaddr < l.Filesz && strsz <= l.Filesz-(strtab-l.Vaddr) {
			stroff, found = l.Off+(strtab-l.Vaddr), true
			break
		}
	}
	if !found || strsz > maxDynstr || stroff > uint64(size) || strsz > uint64(size)-stroff {
		return nil, Malformed(int64(dyn.Off), "ELF dynamic string table at address %#x (%d bytes): expected at most %d bytes inside a loaded segment of the file", strtab, strsz, maxDynstr)
	}
	strs := make([]byte, strsz)
	if _, err := r.ReadAt(strs, int64(stroff)); err != nil {
		return nil, Malformed(int64(stroff), "ELF dynamic string table: %v", err)
	}
	for _, e := range ents {
		if e.val >= strsz {
			return nil, Malformed(int64(dyn.Off), "ELF dynamic entry %v: string offset %d outside the string table (%d bytes)", e.tag, e.val, strsz)
		}
		s := strs[e.val:]
		n := bytes.IndexByte(s[:min(len(s), maxDynName+1)], 0)
		if n < 0 {
			// Unterminated, or longer than any path: either way 4096
			// entries naming one huge string must not become 4096 copies.
			return nil, Malformed(int64(stroff+e.val), "ELF dynamic entry %v: string not terminated within %d bytes", e.tag, maxDynName)
		}
		v := string(s[:n])
		switch e.tag {
		case elf.DT_NEEDED:
			d.Needed = append(d.Needed, v)
		case elf.DT_SONAME:
			d.Soname = v
		case elf.DT_RPATH:
			d.Rpath = append(d.Rpath, strings.Split(v, ":")...)
		case elf.DT_RUNPATH:
			d.Runpath = append(d.Runpath, strings.Split(v, ":")...)
		}
		if len(d.Needed)+len(d.Rpath)+len(d.Runpath) > maxDynNames {
			return nil, Malformed(int64(dyn.Off), "ELF dynamic section: more than %d names and run paths", maxDynNames)
		}
	}
	return d, nil
}
