package inspect

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"sort"
)

// DefinedExternals lists the external symbols a thin Mach-O or ELF image
// or object defines: what a shared library exports (an ELF library's
// dynamic symbols), or what an object gives the libraries it goes into
// (global or weak, in a section, not hidden). Sorted.
func DefinedExternals(data []byte) ([]string, error) {
	if isELF(data) {
		return elfDefined(data)
	}
	// A thin Mach-O file's: the external symbols it defines in a section.
	var out []string
	err := MachOSymbols(data, func(s MachOSymbol) error {
		const nExt, nSect = 0x01, 0x0e
		if s.Type&nStab != 0 || s.Type&nExt == 0 || s.Type&nType != nSect || s.Sect == 0 {
			return nil
		}
		if s.Name == nil {
			return fmt.Errorf("symbol %d: name at %d, past the string table", s.Index, s.Strx)
		}
		out = append(out, string(s.Name))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	sort.Strings(out)
	return out, nil
}

// nlist's n_type bits: a debugger entry (stab), and the symbol's kind.
const nStab, nType = 0xe0, 0x0e

// MachOSymbol is one LC_SYMTAB entry (an nlist), its name read in place.
type MachOSymbol struct {
	Index      int    // in the table
	Strx       uint32 // n_strx
	Name       []byte // in the file's string table, without the NUL; nil when Strx is past the table
	Type, Sect uint8  // n_type, n_sect
	Value      uint64 // n_value
}

// MachOSymbols calls fn for each LC_SYMTAB entry of the thin Mach-O file
// data, in table order, until fn returns an error, reading the load commands and the table in place:
// not a whole debug/macho.File, whose every symbol is a copied string, as
// a cache hit reads every member of a library and check names functions
// in images of 150 MB. A file without LC_SYMTAB has no symbols.
func MachOSymbols(data []byte, fn func(MachOSymbol) error) error {
	m, err := ParseMachOBytes(data)
	if err != nil {
		return err
	}
	if !m.Symtab.Present {
		return nil
	}
	bo, _, _ := MachOByteOrder(data)
	nlist := int64(12)
	if m.Is64 {
		nlist = 16
	}
	symoff, nsyms := int64(m.Symtab.Offset), int64(m.Symtab.Count)
	stroff, strsize := int64(m.Strtab.Offset), int64(m.Strtab.Count)
	if symoff+nsyms*nlist > int64(len(data)) || stroff+strsize > int64(len(data)) {
		return errors.New("symbol table past the end of the file")
	}
	strs := data[stroff : stroff+strsize]
	for k := range nsyms {
		e := data[symoff+k*nlist:]
		s := MachOSymbol{Index: int(k), Strx: bo.Uint32(e), Type: e[4], Sect: e[5]}
		if m.Is64 {
			s.Value = bo.Uint64(e[8:])
		} else {
			s.Value = uint64(bo.Uint32(e[8:]))
		}
		if int64(s.Strx) < strsize {
			s.Name, _, _ = bytes.Cut(strs[s.Strx:], []byte{0})
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
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
