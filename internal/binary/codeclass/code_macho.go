package codeclass

import (
	"cmp"
	"debug/macho"
	"encoding/binary"
	"slices"
	"sort"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// Mach-O facts the code classifier needs and debug/macho either lacks
// (LC_FUNCTION_STARTS) or pays for (symbol names, which it reads and
// allocates for every symbol; the classifier needs addresses only).
const (
	// MH_SUBSECTIONS_VIA_SYMBOLS: the object may be split at every symbol.
	// clang sets it on every object it compiles from C; assembly sets it
	// only with an explicit .subsections_via_symbols, which perlasm never
	// writes (its functions jump between each other's local labels).
	mhSubsectionsViaSymbols = 0x2000

	sAttrPureInstructions = 0x80000000
	sAttrSomeInstructions = 0x400
	sectionTypeMask       = 0xff

	nStab = 0xe0
	nType = 0x0e
	nSect = 0x0e
	nExt  = 0x01
)

// codeSection is one section of machine code in an object, and the
// function start addresses inside it.
type codeSection struct {
	addr   uint64 // address of the first byte (section-relative 0 in ELF relocatables)
	offset int64  // of the bytes, in the object's reader
	size   int64
	starts []uint64 // sorted, deduplicated, each in [addr, addr+size)
	ends   []uint64 // the end of each function where the format gives sizes (ELF); nil, or at most its start: the next start
	// data are [start, end) address ranges of data inside the code
	// (Mach-O LC_DATA_IN_CODE: x86-64 jump tables), sorted.
	data [][2]uint64
}

// codeObject is what the classifier reads from one object or linked image.
type codeObject struct {
	arch     string // "arm64", "x86_64", ...
	sections []codeSection
	// compiled says whether a relocatable object is to be measured as
	// compiled code: Mach-O objects carry MH_SUBSECTIONS_VIA_SYMBOLS when a
	// compiler made them; ELF objects are always measured. A linked image
	// mixes both and is measured whole.
	compiled bool
	// isaCompiled says the instruction-set pass reads it as compiled
	// code: a linked image, a Mach-O object with the compiler's mark, an
	// ELF object with the .comment section compilers write and the
	// assembler does not (perlasm's objects have none; an object stripped
	// of it counts as assembly for this pass, reported as such).
	isaCompiled bool
	// gcc says an ELF object's .comment names GCC, which emits "rep bsf"
	// (the TZCNT encoding) for ctz in baseline code on purpose: a CPU
	// without BMI1 ignores the prefix, and for the non-zero input GCC
	// guarantees there BSF gives the same result. Clang does not.
	gcc    bool
	linked bool // a linked image (dylib, executable, shared object)
	// mapped are a linked image's sections the file holds, by address:
	// where the instruction-set pass reads jump tables.
	mapped []mappedRange
	bounds string // where function boundaries came from: "symbols", "symbols and __compact_unwind", "LC_FUNCTION_STARTS", ".eh_frame", "section"
}

// maxCodeSymbols bounds the function starts taken from a symbol table
// (libcrypto.dylib has about 13,000 symbols).
const maxCodeSymbols = 4 << 20

// span returns b[off:off+n], or false when that runs past the end of b.
func span(b []byte, off, n uint64) ([]byte, bool) {
	if off > uint64(len(b)) || n > uint64(len(b))-off {
		return nil, false
	}
	return b[off : off+n], true
}

// readMachOCode reads the code sections and function starts of a thin
// 64-bit Mach-O, whole in b. Everything it returns points into b. The
// header and load commands are parsed once, by inspect's one Mach-O
// parser; m, when not nil, is b already parsed by it (Inspect's Object).
func readMachOCode(b []byte, m *inspect.MachO) (*codeObject, error) {
	size := int64(len(b))
	if m == nil {
		var err error
		if m, err = inspect.ParseMachOBytes(b); err != nil {
			return nil, err
		}
	}
	o := &codeObject{arch: m.Arch}
	if !m.Is64 {
		return o, nil // 32-bit slices: no supported instruction set
	}
	o.linked = m.Type != macho.TypeObj
	o.compiled = !o.linked && m.Flags&mhSubsectionsViaSymbols != 0
	o.isaCompiled = o.linked || o.compiled
	// codeAt maps a section's 1-based index (as n_sect gives it, so at
	// most 255) to its position in o.sections plus one; 0: not code.
	var codeAt [256]uint16
	for k, sec := range m.Sections {
		code := sec.Flags&(sAttrPureInstructions|sAttrSomeInstructions) != 0 && sec.Flags&sectionTypeMask == 0
		cs := codeSection{addr: sec.Addr, size: int64(sec.Size), offset: int64(sec.Offset)}
		if code && (cs.size < 0 || cs.offset > size || cs.size > size-cs.offset) {
			return nil, inspect.Malformed(32, "section %s,%s: offset %d size %d runs past end of file (%d bytes)",
				sec.Segment, sec.Name, cs.offset, cs.size, size)
		}
		// In a linked image, the bytes a segment maps at the section's
		// address: what runs is what a segment maps there, whatever the
		// header's offset says.
		off, mapped := mappedAt(m.Segments, sec.Addr, sec.Size)
		if typ := sec.Flags & sectionTypeMask; o.linked && mapped && sec.Offset != 0 && typ != 0x01 && typ != 0x0c && typ != 0x12 {
			o.mapped = append(o.mapped, mappedRange{addr: sec.Addr, size: sec.Size, offset: int64(off)})
		}
		if code && o.linked {
			code, cs.offset = mapped && off <= uint64(size) && sec.Size <= uint64(size)-off, int64(off)
		}
		if code && cs.size > 0 && k+1 < len(codeAt) {
			o.sections = append(o.sections, cs)
			codeAt[k+1] = uint16(len(o.sections))
		}
	}
	bo, _, _ := inspect.MachOByteOrder(b)

	var starts []uint64
	switch {
	case m.FunctionStarts.Present && m.HasText && m.FunctionStarts.Count > 0:
		data, ok := span(b, uint64(m.FunctionStarts.Offset), uint64(m.FunctionStarts.Count))
		if !ok {
			return nil, inspect.Malformed(int64(m.FunctionStarts.Offset), "LC_FUNCTION_STARTS data at %d (%d bytes) runs past end of file (%d bytes)", m.FunctionStarts.Offset, m.FunctionStarts.Count, size)
		}
		addr := m.TextAddr
		for len(data) > 0 {
			d, n := binary.Uvarint(data)
			if n <= 0 || d == 0 {
				break
			}
			data = data[n:]
			addr += d
			starts = append(starts, addr)
		}
		o.bounds = "LC_FUNCTION_STARTS"
	case m.Symtab.Present && m.Symtab.Count > 0:
		if int64(m.Symtab.Count) > maxCodeSymbols {
			return nil, inspect.Malformed(int64(m.Symtab.Offset), "LC_SYMTAB: %d symbols exceed the limit of %d", m.Symtab.Count, maxCodeSymbols)
		}
		n := int64(m.Symtab.Count) * 16
		syms, ok := span(b, uint64(m.Symtab.Offset), uint64(n))
		if !ok {
			return nil, inspect.Malformed(int64(m.Symtab.Offset), "symbol table at %d (%d symbols) runs past end of file (%d bytes)", m.Symtab.Offset, m.Symtab.Count, size)
		}
		starts = make([]uint64, 0, m.Symtab.Count)
		locals := 0
		for i := int64(0); i < n; i += 16 {
			typ, sect := syms[i+4], syms[i+5]
			if typ&nStab != 0 || typ&nType != nSect || codeAt[sect] == 0 {
				continue
			}
			if typ&nExt == 0 {
				locals++
			}
			starts = append(starts, bo.Uint64(syms[i+8:]))
		}
		o.bounds = "symbols"
		// An object stripped of its local symbols (strip -x) names only
		// its global functions: the static ones, most of a C file's,
		// would be measured as the tail of the global before them. Its
		// __compact_unwind entries still point at every function with
		// unwind information. Read only there, so the objects the
		// symbols describe whole are measured as before.
		if !o.linked && locals == 0 {
			slices.Sort(starts)
			starts = slices.Compact(starts)
			n := len(starts)
			starts = append(starts, unwindStarts(b, m, syms, codeAt[:], bo)...)
			slices.Sort(starts)
			if starts = slices.Compact(starts); len(starts) > n {
				o.bounds = "symbols and __compact_unwind"
			}
		}
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	// Data in code: entries of {offset, length, kind}. The offset counts
	// from the start of __TEXT in a linked image (whose __TEXT maps the
	// file from its header) and from address 0 in an object, whose one
	// segment starts there: an address either way, after adding
	// __TEXT's.
	var data [][2]uint64
	if m.DataInCode.Count > 0 {
		raw, ok := span(b, uint64(m.DataInCode.Offset), uint64(m.DataInCode.Count))
		if !ok {
			return nil, inspect.Malformed(int64(m.DataInCode.Offset), "LC_DATA_IN_CODE data at %d (%d bytes) runs past end of file (%d bytes)", m.DataInCode.Offset, m.DataInCode.Count, size)
		}
		for k := 0; k+8 <= len(raw); k += 8 {
			at := m.TextAddr + uint64(bo.Uint32(raw[k:]))
			data = append(data, [2]uint64{at, at + uint64(bo.Uint16(raw[k+4:]))})
		}
	}
	for i := range o.sections {
		s := &o.sections[i]
		s.starts = startsIn(starts, s.addr, uint64(s.size))
		for _, d := range data {
			if d[0] >= s.addr && d[0]-s.addr < uint64(s.size) {
				s.data = append(s.data, [2]uint64{d[0], min(d[1], s.addr+uint64(s.size))})
			}
		}
		slices.SortFunc(s.data, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	}
	if o.bounds == "" && len(o.sections) > 0 {
		o.bounds = "section"
	}
	return o, nil
}

// mappedAt is the file offset a linked image's segments map the n bytes
// at address addr from: the loader maps segments, and a section header
// whose offset points elsewhere (appended bytes, a dSYM's empty __TEXT)
// names bytes that never run. False when no segment maps them all.
func mappedAt(segs []inspect.Segment, addr, n uint64) (uint64, bool) {
	for _, g := range segs {
		if addr >= g.VMAddr && n <= g.FileSize && addr-g.VMAddr <= g.FileSize-n {
			return g.FileOff + (addr - g.VMAddr), true
		}
	}
	return 0, false
}

// startsIn returns the starts inside [addr, addr+size) of sorted (sorted
// and deduplicated), with addr itself first (code before the first symbol
// is a function too). It allocates only to prepend addr.
func startsIn(sorted []uint64, addr, size uint64) []uint64 {
	lo := sort.Search(len(sorted), func(i int) bool { return sorted[i] >= addr })
	hi := lo + sort.Search(len(sorted)-lo, func(i int) bool { return sorted[lo+i]-addr >= size })
	in := sorted[lo:hi]
	if len(in) > 0 && in[0] == addr {
		return in
	}
	return append([]uint64{addr}, in...)
}

// unwindStarts reads the function addresses of an object's
// __LD,__compact_unwind entries (32 bytes each in a 64-bit object: the
// function's address first). In an object that address is relocated:
// against its section (the field holds the address) or against a symbol
// (the field holds an addend to the symbol's value); only entries whose
// function lies in a code section count. A malformed table gives what it
// could read: the symbols' starts stand anyway.
func unwindStarts(b []byte, m *inspect.MachO, syms []byte, codeAt []uint16, bo binary.ByteOrder) []uint64 {
	const entry = 32
	var out []uint64
	for _, sec := range m.Sections {
		if sec.Segment != "__LD" || sec.Name != "__compact_unwind" || sec.Offset == 0 {
			continue
		}
		body, ok := span(b, uint64(sec.Offset), sec.Size)
		rel, rok := span(b, uint64(sec.RelOff), uint64(sec.NReloc)*8)
		if !ok || !rok {
			continue
		}
		for k := 0; k+8 <= len(rel); k += 8 {
			at, info := bo.Uint32(rel[k:]), bo.Uint32(rel[k+4:])
			// r_address, then r_symbolnum:24 r_pcrel:1 r_length:2
			// r_extern:1 r_type:4; a scattered one (bit 31) is not
			// x86_64's or arm64's.
			if at&0x80000000 != 0 || at%entry != 0 || uint64(at)+8 > uint64(len(body)) {
				continue
			}
			num, extern := info&0xffffff, info>>27&1 != 0
			addr := bo.Uint64(body[at:])
			if extern {
				if uint64(num+1)*16 > uint64(len(syms)) {
					continue
				}
				e := syms[num*16:]
				if typ := e[4]; typ&nStab != 0 || typ&nType != nSect || codeAt[e[5]] == 0 {
					continue
				}
				addr += bo.Uint64(e[8:])
			} else if num == 0 || int(num) >= len(codeAt) || codeAt[num] == 0 {
				continue
			}
			out = append(out, addr)
		}
	}
	return out
}
