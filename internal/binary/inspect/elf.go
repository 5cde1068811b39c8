package inspect

import (
	"debug/elf"
	"fmt"
	"io"
)

// ELF holds the facts of one ELF file.
type ELF struct {
	Machine elf.Machine
	Arch    string // "x86_64", "aarch64", ...
	Type    elf.Type
	Class   elf.Class
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

// ParseELF reads an ELF header with debug/elf.
func ParseELF(r io.ReaderAt, size int64) (e *ELF, err error) {
	// debug/elf is not fuzzed against every hostile input; a panic in it must
	// not take the build tool down, so it becomes a FormatError.
	defer func() {
		if p := recover(); p != nil {
			e, err = nil, malformed(0, "ELF parser failed: %v", p)
		}
	}()
	f, err := elf.NewFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, malformed(0, "ELF: %v", err)
	}
	defer f.Close()
	e = &ELF{Machine: f.Machine, Type: f.Type, Class: f.Class, Arch: elfArch[f.Machine]}
	if e.Arch == "" {
		e.Arch = fmt.Sprintf("elf-machine(%d)", uint16(f.Machine))
	}
	return e, nil
}
