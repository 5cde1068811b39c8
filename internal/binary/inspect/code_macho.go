package inspect

import (
	"cmp"
	"debug/macho"
	"encoding/binary"
	"slices"
	"sort"
)

// Mach-O facts the code classifier needs and debug/macho either lacks
// (LC_FUNCTION_STARTS) or pays for (symbol names, which it reads and
// allocates for every symbol; the classifier needs addresses only).
const (
	lcSegment64      = 0x19
	lcSymtab         = 0x2
	lcFunctionStarts = 0x26
	lcDataInCode     = 0x29

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
)

// codeSection is one section of machine code in an object, and the
// function start addresses inside it.
type codeSection struct {
	addr   uint64 // address of the first byte (section-relative 0 in ELF relocatables)
	offset int64  // of the bytes, in the object's reader
	size   int64
	starts []uint64 // sorted, deduplicated, each in [addr, addr+size)
	ends   []uint64 // the end of each function where the format gives sizes (ELF); nil: the next start
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
	linked   bool   // a linked image (dylib, executable, shared object)
	bounds   string // where function boundaries came from: "symbols", "LC_FUNCTION_STARTS", ".eh_frame", "section"
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
// 64-bit Mach-O, whole in b. Everything it returns points into b.
func readMachOCode(b []byte) (*codeObject, error) {
	size := int64(len(b))
	if size < 32 {
		return nil, malformed(0, "truncated Mach-O header: expected 32 bytes, found %d", size)
	}
	hdr := b[:32]
	bo, is64, ok := machoByteOrder(hdr)
	if !ok {
		return nil, malformed(0, "expected Mach-O magic, found %#x", binary.BigEndian.Uint32(hdr[:]))
	}
	o := &codeObject{arch: CPUName(macho.Cpu(bo.Uint32(hdr[4:])), bo.Uint32(hdr[8:]))}
	if !is64 {
		return o, nil // 32-bit slices: no supported instruction set
	}
	ftype := macho.Type(bo.Uint32(hdr[12:]))
	ncmds, sizeofcmds, flags := bo.Uint32(hdr[16:]), int64(bo.Uint32(hdr[20:])), bo.Uint32(hdr[24:])
	o.linked = ftype != macho.TypeObj
	o.compiled = !o.linked && flags&mhSubsectionsViaSymbols != 0
	if sizeofcmds > size-32 || sizeofcmds > maxSizeofcmds {
		return nil, malformed(20, "sizeofcmds %d runs past end of file: expected at most %d", sizeofcmds, min(size-32, maxSizeofcmds))
	}
	cmds := b[32 : 32+sizeofcmds]
	var (
		// codeAt maps a section's 1-based index (as n_sect gives it, so at
		// most 255) to its position in o.sections plus one; 0: not code.
		codeAt            [256]uint16
		nsect             int
		textVMAddr        uint64
		haveText          bool
		symoff, nsyms     uint32
		fsOff, fsSize     uint32
		haveSyms, haveFns bool
		dicOff, dicSize   uint32
	)
	off := int64(0)
	for i := uint32(0); i < ncmds; i++ {
		if sizeofcmds-off < 8 {
			return nil, malformed(32+off, "load command %d: expected an 8-byte header, %d bytes of sizeofcmds left", i, sizeofcmds-off)
		}
		cmd, cmdsize := bo.Uint32(cmds[off:]), int64(bo.Uint32(cmds[off+4:]))
		if cmdsize < 8 || cmdsize > sizeofcmds-off {
			return nil, malformed(32+off, "load command %d (cmd %#x): cmdsize %d: expected 8 to %d", i, cmd, cmdsize, sizeofcmds-off)
		}
		c := cmds[off : off+cmdsize]
		switch cmd {
		case lcSegment64:
			if len(c) < 72 {
				return nil, malformed(32+off, "LC_SEGMENT_64: cmdsize %d: expected at least 72", cmdsize)
			}
			if string(trimNUL(c[8:24])) == "__TEXT" {
				textVMAddr, haveText = bo.Uint64(c[24:]), true
			}
			nsects := int64(bo.Uint32(c[64:]))
			if nsects > (cmdsize-72)/80 {
				return nil, malformed(32+off, "LC_SEGMENT_64: %d sections do not fit in cmdsize %d", nsects, cmdsize)
			}
			for s := int64(0); s < nsects; s++ {
				e := c[72+s*80:]
				sflags := bo.Uint32(e[64:])
				code := sflags&(sAttrPureInstructions|sAttrSomeInstructions) != 0 && sflags&sectionTypeMask == 0
				sec := codeSection{addr: bo.Uint64(e[32:]), size: int64(bo.Uint64(e[40:])), offset: int64(bo.Uint32(e[48:]))}
				if code && (sec.size < 0 || sec.offset > size || sec.size > size-sec.offset) {
					return nil, malformed(32+off, "section %s,%s: offset %d size %d runs past end of file (%d bytes)",
						trimNUL(e[16:32]), trimNUL(e[0:16]), sec.offset, sec.size, size)
				}
				nsect++
				if code && sec.size > 0 && nsect < len(codeAt) {
					o.sections = append(o.sections, sec)
					codeAt[nsect] = uint16(len(o.sections))
				}
			}
		case lcSymtab:
			if len(c) < 24 {
				return nil, malformed(32+off, "LC_SYMTAB: cmdsize %d: expected 24", cmdsize)
			}
			symoff, nsyms, haveSyms = bo.Uint32(c[8:]), bo.Uint32(c[12:]), true
		case lcFunctionStarts:
			if len(c) < 16 {
				return nil, malformed(32+off, "LC_FUNCTION_STARTS: cmdsize %d: expected 16", cmdsize)
			}
			fsOff, fsSize, haveFns = bo.Uint32(c[8:]), bo.Uint32(c[12:]), true
		case lcDataInCode:
			if len(c) < 16 {
				return nil, malformed(32+off, "LC_DATA_IN_CODE: cmdsize %d: expected 16", cmdsize)
			}
			dicOff, dicSize = bo.Uint32(c[8:]), bo.Uint32(c[12:])
		}
		off += cmdsize
	}

	var starts []uint64
	switch {
	case haveFns && haveText && fsSize > 0:
		data, ok := span(b, uint64(fsOff), uint64(fsSize))
		if !ok {
			return nil, malformed(int64(fsOff), "LC_FUNCTION_STARTS data at %d (%d bytes) runs past end of file (%d bytes)", fsOff, fsSize, size)
		}
		addr := textVMAddr
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
	case haveSyms && nsyms > 0:
		if int64(nsyms) > maxCodeSymbols {
			return nil, malformed(int64(symoff), "LC_SYMTAB: %d symbols exceed the limit of %d", nsyms, maxCodeSymbols)
		}
		n := int64(nsyms) * 16
		syms, ok := span(b, uint64(symoff), uint64(n))
		if !ok {
			return nil, malformed(int64(symoff), "symbol table at %d (%d symbols) runs past end of file (%d bytes)", symoff, nsyms, size)
		}
		starts = make([]uint64, 0, nsyms)
		for i := int64(0); i < n; i += 16 {
			typ, sect := syms[i+4], syms[i+5]
			if typ&nStab != 0 || typ&nType != nSect || codeAt[sect] == 0 {
				continue
			}
			starts = append(starts, bo.Uint64(syms[i+8:]))
		}
		o.bounds = "symbols"
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	// Data in code: entries of {offset, length, kind}. The offset counts
	// from the start of __TEXT in a linked image (whose __TEXT maps the
	// file from its header) and from address 0 in an object, whose one
	// segment starts there: an address either way, after adding
	// __TEXT's.
	var data [][2]uint64
	if dicSize > 0 {
		raw, ok := span(b, uint64(dicOff), uint64(dicSize))
		if !ok {
			return nil, malformed(int64(dicOff), "LC_DATA_IN_CODE data at %d (%d bytes) runs past end of file (%d bytes)", dicOff, dicSize, size)
		}
		for k := 0; k+8 <= len(raw); k += 8 {
			at := textVMAddr + uint64(bo.Uint32(raw[k:]))
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

func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
