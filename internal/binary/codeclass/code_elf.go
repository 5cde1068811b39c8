package codeclass

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"maps"
	"slices"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// elfSect is one section header, as much as the classifier needs.
type elfSect struct {
	name               string
	typ                elf.SectionType
	flags              elf.SectionFlag
	addr, offset, size uint64
	entsize            uint64
}

// readELFCode reads the code sections and function boundaries of a 64-bit
// little-endian ELF file, whole in b: from .symtab (sized STT_FUNC
// symbols), else from .eh_frame (every function with unwind information,
// in stripped shared objects too), else from .dynsym. The header is
// parsed once, by ParseELF (the one ELF header parser); e, when not nil,
// is b already parsed by it (Inspect's Object). The section table is read
// here only: Inspect needs none of it.
func readELFCode(b []byte, e *inspect.ELF) (*codeObject, error) {
	size := int64(len(b))
	if e == nil {
		var err error
		if e, err = inspect.ParseELF(memReaderAt(b), size); err != nil {
			return nil, err
		}
	}
	le := binary.LittleEndian
	o := &codeObject{arch: e.Arch}
	if e.Class != elf.ELFCLASS64 || e.Data != elf.ELFDATA2LSB {
		return o, nil // 32-bit or big-endian: no supported instruction set
	}
	o.linked = e.Type != elf.ET_REL
	// No mark tells an ELF object compiled from C from assembly once
	// Debian's strip has removed .comment (measured on its libcrypto.a),
	// so every ELF object is measured; see the classifier's doc for why
	// assembly then only dilutes an -O0 score.
	o.compiled = true
	shoff, shentsize, shnum, shstrndx := e.Shoff, int64(e.Shentsize), int64(e.Shnum), int(e.Shstrndx)
	if shnum == 0 || shoff == 0 {
		// No section headers (a stripped executable), or more than 65,279
		// (extended numbering): nothing to measure.
		return o, nil
	}
	if shentsize != 64 || shoff > uint64(size) || uint64(shnum*64) > uint64(size)-shoff {
		return nil, inspect.Malformed(40, "section header table at %d (%d entries of %d bytes) runs past end of file (%d bytes) or has the wrong entry size (expected 64)", shoff, shnum, shentsize, size)
	}
	raw := b[shoff : shoff+uint64(shnum*64)]
	sects := make([]elfSect, shnum)
	for i := range sects {
		e := raw[i*64:]
		s := elfSect{typ: elf.SectionType(le.Uint32(e[4:])), flags: elf.SectionFlag(le.Uint64(e[8:])),
			addr: le.Uint64(e[16:]), offset: le.Uint64(e[24:]), size: le.Uint64(e[32:]),
			entsize: le.Uint64(e[56:])}
		if s.typ != elf.SHT_NOBITS && (s.offset > uint64(size) || s.size > uint64(size)-s.offset) {
			return nil, inspect.Malformed(int64(shoff)+int64(i)*64, "section %d: offset %d size %d runs past end of file (%d bytes)", i, s.offset, s.size, size)
		}
		sects[i] = s
	}
	if shstrndx < len(sects) {
		names, err := readSection(b, sects[shstrndx], 1<<20)
		if err != nil {
			return nil, err
		}
		for i := range sects {
			if n := uint64(le.Uint32(raw[i*64:])); n < uint64(len(names)) {
				name := names[n:]
				if k := bytes.IndexByte(name, 0); k >= 0 {
					name = name[:k]
				}
				sects[i].name = string(name)
			}
		}
	}

	o.isaCompiled = o.linked
	code := map[int]*codeSection{}
	var symtab, dynsym, ehframe = -1, -1, -1
	for i, s := range sects {
		if s.name == ".comment" && s.typ == elf.SHT_PROGBITS {
			o.isaCompiled = true
			if c, err := readSection(b, s, 4096); err == nil {
				o.gcc = bytes.Contains(c, []byte("GCC:")) && !bytes.Contains(c, []byte("clang"))
			}
		}
		if o.linked && s.flags&elf.SHF_ALLOC != 0 && s.typ != elf.SHT_NOBITS && s.size > 0 {
			o.mapped = append(o.mapped, mappedRange{addr: s.addr, size: s.size, offset: int64(s.offset)})
		}
		switch {
		case s.typ == elf.SHT_PROGBITS && s.flags&elf.SHF_EXECINSTR != 0 && s.size > 0 && !slices.Contains(auxCodeSections, s.name):
			if off, ok := loaded(e, s, size); ok {
				code[i] = &codeSection{addr: s.addr, offset: off, size: int64(s.size)}
			}
		case s.typ == elf.SHT_SYMTAB:
			symtab = i
		case s.typ == elf.SHT_DYNSYM:
			dynsym = i
		case s.name == ".eh_frame" && s.typ != elf.SHT_NOBITS:
			ehframe = i
		}
	}
	if len(code) == 0 {
		return o, nil
	}
	type fn struct {
		sect       int
		start, end uint64
	}
	var fns []fn
	// sectionOf maps a linked image's address to its code section.
	sectionOf := func(addr uint64) int {
		for i, c := range code {
			if addr >= c.addr && addr-c.addr < uint64(c.size) {
				return i
			}
		}
		return -1
	}
	symbols := func(idx int) error {
		s := sects[idx]
		if s.entsize != 24 && s.entsize != 0 {
			return inspect.Malformed(int64(s.offset), "symbol table %s: entry size %d, expected 24", s.name, s.entsize)
		}
		syms, err := readSection(b, s, maxCodeSymbols*24)
		if err != nil {
			return err
		}
		for i := 0; i+24 <= len(syms); i += 24 {
			info, sect := syms[i+4], int(le.Uint16(syms[i+6:]))
			val, sz := le.Uint64(syms[i+8:]), le.Uint64(syms[i+16:])
			if elf.ST_TYPE(info) != elf.STT_FUNC {
				continue
			}
			if o.linked {
				sect = sectionOf(val)
			} else if c, ok := code[sect]; ok {
				val += c.addr
			}
			c, ok := code[sect]
			if !ok || val < c.addr || val-c.addr >= uint64(c.size) {
				continue
			}
			fns = append(fns, fn{sect, val, val + sz})
		}
		return nil
	}
	if symtab < 0 && !(o.linked && ehframe >= 0) {
		symtab = dynsym // no .symtab, nor a linked image's .eh_frame
	}
	switch {
	case symtab >= 0:
		if err := symbols(symtab); err != nil {
			return nil, err
		}
		o.bounds = "symbols"
	case o.linked && ehframe >= 0:
		eh, err := readSection(b, sects[ehframe], 256<<20)
		if err != nil {
			return nil, err
		}
		for _, f := range ehFrameFunctions(eh, sects[ehframe].addr) {
			if s := sectionOf(f[0]); s >= 0 {
				fns = append(fns, fn{s, f[0], f[1]})
			}
		}
		o.bounds = ".eh_frame"
	default:
		o.bounds = "section"
	}
	slices.SortFunc(fns, func(a, b fn) int { return cmp.Or(cmp.Compare(a.sect, b.sect), cmp.Compare(a.start, b.start)) })
	for _, f := range fns {
		c := code[f.sect]
		end := min(f.end, c.addr+uint64(c.size))
		if n := len(c.starts); n > 0 && c.starts[n-1] == f.start {
			c.ends[n-1] = max(c.ends[n-1], end) // aliases: keep the longest
			continue
		}
		c.starts = append(c.starts, f.start)
		c.ends = append(c.ends, end)
	}
	for _, i := range slices.Sorted(maps.Keys(code)) {
		c := code[i]
		if len(c.starts) == 0 {
			c.starts, c.ends = []uint64{c.addr}, []uint64{c.addr + uint64(c.size)}
		}
		o.sections = append(o.sections, *c)
	}
	return o, nil
}

// loaded returns where in the file a code section's bytes are as the
// loader maps them, and false when it does not: only an allocated section
// is code (a linker takes nothing else from an object), and in a linked
// image what runs is what a PT_LOAD segment maps at the section's
// address, whatever its header's offset says. Code elsewhere (a section
// added without SHF_ALLOC, bytes no segment maps) never runs; measuring it
// would let optimised code beside an -O0 library dilute its score.
func loaded(e *inspect.ELF, s elfSect, size int64) (int64, bool) {
	if s.flags&elf.SHF_ALLOC == 0 {
		return 0, false
	}
	if e.Type == elf.ET_REL || len(e.Loads) == 0 {
		return int64(s.offset), true
	}
	for _, l := range e.Loads {
		if s.addr >= l.Vaddr && s.size <= l.Filesz && s.addr-l.Vaddr <= l.Filesz-s.size {
			off := l.Off + (s.addr - l.Vaddr)
			return int64(off), off <= uint64(size) && s.size <= uint64(size)-off
		}
	}
	return 0, false
}

// auxCodeSections name linker-made code that is not a compiled function.
var auxCodeSections = []string{".plt", ".plt.got", ".plt.sec", ".iplt", ".init", ".fini"}

// readSection returns a section's bytes (bounds were checked when the
// section headers were read).
func readSection(b []byte, s elfSect, limit uint64) ([]byte, error) {
	if s.typ == elf.SHT_NOBITS || s.size == 0 {
		return nil, nil
	}
	if s.size > limit {
		return nil, inspect.Malformed(int64(s.offset), "section %s of %d bytes exceeds the %d-byte limit", s.name, s.size, limit)
	}
	return b[s.offset : s.offset+s.size], nil
}

// ehFrameFunctions lists [start, end) of every FDE in a linked image's
// .eh_frame whose contents are b, loaded at addr. Records it cannot decode
// are skipped: the table is evidence, not a structure to validate.
func ehFrameFunctions(b []byte, addr uint64) [][2]uint64 {
	le := binary.LittleEndian
	ciePtrEnc := map[int]byte{} // CIE offset -> FDE pointer encoding
	var out [][2]uint64
	for off, next := 0, 0; off+8 <= len(b); off = next {
		length := uint64(le.Uint32(b[off:]))
		hdr := 4
		if length == 0 {
			break // terminator
		}
		if length == 0xffffffff {
			if off+12 > len(b) {
				break
			}
			length, hdr = le.Uint64(b[off+4:]), 12
		}
		if length > uint64(len(b)-off-hdr) {
			break
		}
		body := b[off+hdr : off+hdr+int(length)]
		next = off + hdr + int(length)
		if len(body) < 4 {
			continue
		}
		id := le.Uint32(body)
		if id == 0 { // CIE
			ciePtrEnc[off] = cieFDEEncoding(body[4:])
		} else if enc, ok := ciePtrEnc[off+hdr-int(id)]; ok {
			fieldAddr := addr + uint64(off+hdr+4)
			start, n := readEncoded(body[4:], enc, fieldAddr)
			if n > 0 {
				rng, m := readEncoded(body[4+n:], enc&0x0f, 0)
				if m > 0 && start != 0 {
					out = append(out, [2]uint64{start, start + rng})
				}
			}
		}
	}
	return out
}

// cieFDEEncoding reads a CIE (after its id) up to the 'R' augmentation:
// the encoding of pointers in its FDEs (DW_EH_PE_absptr when absent).
func cieFDEEncoding(b []byte) byte {
	if len(b) < 1 {
		return 0xff
	}
	version := b[0]
	b = b[1:]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return 0xff
	}
	aug := string(b[:i])
	b = b[i+1:]
	if len(aug) == 0 || aug[0] != 'z' {
		return 0x00
	}
	// The code and data alignment factors, the return address register
	// (a byte in version 1, else a LEB128 like the rest) and the
	// augmentation data length.
	for k := range 4 {
		n := 1
		if k != 2 || version != 1 {
			_, n = binary.Uvarint(b)
		}
		if n <= 0 || n > len(b) {
			return 0xff
		}
		b = b[n:]
	}
	for _, c := range aug[1:] {
		if len(b) < 1 && (c == 'R' || c == 'P' || c == 'L') {
			return 0xff
		}
		switch c {
		case 'R':
			return b[0]
		case 'P':
			_, m := readEncoded(b[1:], b[0]&0x7f, 0)
			if m <= 0 {
				return 0xff
			}
			b = b[1+m:]
		case 'L':
			b = b[1:]
		case 'S', 'B', 'G':
		default:
			return 0xff
		}
	}
	return 0x00
}

// readEncoded decodes one DW_EH_PE-encoded pointer at b; pc is the address
// of b[0] for pc-relative values. n is 0 for an unsupported encoding.
func readEncoded(b []byte, enc byte, pc uint64) (v uint64, n int) {
	if enc == 0xff {
		return 0, 0
	}
	var size int
	signed := false
	switch enc & 0x0f {
	case 0x00, 0x04, 0x0c: // absptr, udata8, sdata8
		size = 8
	case 0x03: // udata4
		size = 4
	case 0x0b: // sdata4
		size, signed = 4, true
	case 0x02: // udata2
		size = 2
	case 0x0a: // sdata2
		size, signed = 2, true
	default:
		return 0, 0
	}
	if len(b) < size {
		return 0, 0
	}
	v, n = uint64(leInt(b[:size], signed)), size
	switch enc & 0x70 {
	case 0x00:
	case 0x10: // pcrel
		v += pc
	default:
		return 0, 0 // textrel, datarel, funcrel: not used by the toolchains we read
	}
	return v, n
}

// leInt reads b as a little-endian integer of len(b) bytes (at most 8),
// sign-extended when signed.
func leInt(b []byte, signed bool) int64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if shift := 64 - 8*len(b); signed {
		return int64(v<<shift) >> shift
	}
	return int64(v)
}
