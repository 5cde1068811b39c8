package inspect

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"fmt"
	"sort"
)

// DefinedExternals lists the external symbols a thin Mach-O or ELF image
// or object defines: what a shared library exports (an ELF library's
// dynamic symbols), or what an object gives the libraries it goes into
// (global or weak, in a section, not hidden). Sorted.
func DefinedExternals(data []byte) ([]string, error) {
	if bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return elfDefined(data)
	}
	f, err := macho.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	defer f.Close()
	if f.Symtab == nil {
		return nil, nil
	}
	var out []string
	for _, s := range f.Symtab.Syms {
		const nExt, nType, nSect = 0x01, 0x0e, 0x0e
		if s.Type&0xe0 == 0 && s.Type&nExt != 0 && s.Type&nType == nSect && s.Sect != 0 {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// elfDefined reads an ELF image's dynamic symbols, or an object's symbol
// table. It is only given the build's own outputs and objects, and a
// malformed one is an error, never a crash.
func elfDefined(data []byte) (out []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("symbols: malformed ELF symbol table: %v", r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	defer f.Close()
	var syms []elf.Symbol
	// A version script's versions (OPENSSL_3.0.0) are absolute symbols of
	// the library's own: names of the versions, not of anything defined.
	versions := map[string]bool{}
	if f.Type == elf.ET_DYN || f.Type == elf.ET_EXEC {
		syms, err = f.DynamicSymbols()
		if vs, verr := f.DynamicVersions(); verr == nil {
			for _, v := range vs {
				versions[v.Name] = true
			}
		}
	} else {
		syms, err = f.Symbols()
	}
	if err == elf.ErrNoSymbols {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	for _, s := range syms {
		if s.Section == elf.SHN_ABS && versions[s.Name] {
			continue
		}
		bind, vis := elf.ST_BIND(s.Info), elf.ST_VISIBILITY(s.Other)
		if (bind == elf.STB_GLOBAL || bind == elf.STB_WEAK) && s.Section != elf.SHN_UNDEF && vis != elf.STV_HIDDEN && vis != elf.STV_INTERNAL && s.Name != "" {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}
