package inspect

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"errors"
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
	out, err := machoDefined(data)
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	sort.Strings(out)
	return out, nil
}

// machoDefined reads a thin Mach-O file's LC_SYMTAB directly: only the
// names of external symbols defined in a section, not a whole
// debug/macho.File, since a cache hit reads every member of a library.
func machoDefined(data []byte) ([]string, error) {
	if len(data) < 28 {
		return nil, errors.New("not a Mach-O file: too short")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	magic := bo.Uint32(data)
	if magic == 0xcefaedfe || magic == 0xcffaedfe { // big-endian
		bo = binary.BigEndian
		magic = bo.Uint32(data)
	}
	hdr, nlist := 28, 12
	switch magic {
	case macho.Magic64:
		hdr, nlist = 32, 16
	case macho.Magic32:
	default:
		return nil, fmt.Errorf("not a Mach-O file: magic %#x", magic)
	}
	ncmds, end := int(bo.Uint32(data[16:])), hdr+int(bo.Uint32(data[20:]))
	if end > len(data) {
		return nil, errors.New("load commands past the end of the file")
	}
	for i, off := 0, hdr; i < ncmds; i++ {
		if off+8 > end {
			return nil, fmt.Errorf("load command %d past the end of the load commands", i)
		}
		cmd, size := bo.Uint32(data[off:]), int(bo.Uint32(data[off+4:]))
		if size < 8 || off+size > end {
			return nil, fmt.Errorf("load command %d: cmdsize %d", i, size)
		}
		if macho.LoadCmd(cmd) == macho.LoadCmdSymtab && size >= 24 {
			symoff, nsyms := int64(bo.Uint32(data[off+8:])), int64(bo.Uint32(data[off+12:]))
			stroff, strsize := int64(bo.Uint32(data[off+16:])), int64(bo.Uint32(data[off+20:]))
			if symoff+nsyms*int64(nlist) > int64(len(data)) || stroff+strsize > int64(len(data)) {
				return nil, errors.New("symbol table past the end of the file")
			}
			strs := data[stroff : stroff+strsize]
			var out []string
			for k := range nsyms {
				e := data[symoff+k*int64(nlist):]
				typ, sect := e[4], e[5]
				const nStab, nExt, nType, nSect = 0xe0, 0x01, 0x0e, 0x0e
				if typ&nStab != 0 || typ&nExt == 0 || typ&nType != nSect || sect == 0 {
					continue
				}
				strx := int64(bo.Uint32(e))
				if strx >= strsize {
					return nil, fmt.Errorf("symbol %d: name at %d, past the string table", k, strx)
				}
				name := strs[strx:]
				if n := bytes.IndexByte(name, 0); n >= 0 {
					name = name[:n]
				}
				out = append(out, string(name))
			}
			return out, nil
		}
		off += size
	}
	return nil, nil
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
