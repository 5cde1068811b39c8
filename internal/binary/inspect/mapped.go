package inspect

import (
	"debug/elf"
	"debug/macho"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Evidence counts only in the bytes a format loads: the segments of a
// linked Mach-O image, the PT_LOAD segments of a linked ELF image, the
// sections of a PE image, the allocated sections of an object (what a
// linker takes from it). Bytes appended past the end of an image, or an
// ELF section no segment maps, are in the file but never in the process:
// a "compiler: cc -O3 -DOPENSSL_PIC" line there says nothing of the code
// that runs. Inspect scans every byte once, as before, and then sorts
// what it found by where it lies; strings outside are reported as
// Unmapped, never as build information.

// Unmapped is build information found in bytes of a slice that its format
// does not load, and so no evidence: one entry per run of such bytes.
type Unmapped struct {
	Member string // the archive member holding the bytes, "" when not in an archive
	// Start and End are the run of unloaded bytes holding the strings,
	// [Start, End) from the start of the file.
	Start, End int64
	// Where says why nothing loads them: "past the end of the Mach-O
	// image (its last segment ends at byte 49152)", "outside every
	// PT_LOAD segment", ...
	Where string
	// Strings are what was found there, in file order: build-info strings
	// as found (Text), and a fork's or OpenSSL's source path.
	Strings []string
}

// FoundSourcePath prefixes a source path in Unmapped.Strings.
const FoundSourcePath = "source path "

// extent is [start, end) in an object's bytes.
type extent [2]int64

// loaded is what of one object its format loads: merged, sorted extents
// relative to the object's start, and the words for what lies outside.
type loaded struct {
	ext     []extent
	outside string // "outside every PT_LOAD segment", ...
	image   bool   // a linked Mach-O image: bytes after its last segment are "past the end" of it
}

// loadedOf returns the extents of o (size bytes, read through r from 0)
// that its format loads.
func loadedOf(o *Object, r io.ReaderAt, size int64) loaded {
	var l loaded
	add := func(off, n uint64) {
		if n == 0 || off >= uint64(size) {
			return
		}
		l.ext = append(l.ext, extent{int64(off), int64(min(n, uint64(size)-off) + off)})
	}
	switch {
	case o.Err != nil:
		l.outside = "in an object that could not be parsed"
	case o.MachO != nil && o.MachO.Type == macho.TypeObj:
		// An object: its sections with file contents, except debug
		// information, which the linker does not put into the image.
		for _, s := range o.MachO.Sections {
			if s.Offset != 0 && s.Flags&sAttrDebug == 0 && !slices.Contains(zeroFills, s.Flags&0xff) {
				add(uint64(s.Offset), s.Size)
			}
		}
		l.outside = "outside every section the linker takes from the object"
	case o.MachO != nil:
		for _, s := range o.MachO.Segments {
			add(s.FileOff, s.FileSize)
		}
		l.outside, l.image = "outside every segment of the Mach-O image", true
	case o.ELF != nil && len(o.ELF.Loads) > 0:
		for _, s := range o.ELF.Loads {
			add(s.Off, s.Filesz)
		}
		l.outside = "outside every PT_LOAD segment of the ELF image"
	case o.ELF != nil:
		for _, s := range elfAllocSections(o.ELF, r) {
			add(s[0], s[1])
		}
		l.outside = "outside every allocated section of the ELF file"
	case o.PE != nil:
		for _, s := range o.PE.sections {
			add(s[0], s[1])
		}
		l.outside = "outside every section of the PE image"
	default:
		l.outside = fmt.Sprintf("in a member that is no object (magic %x)", o.Magic)
	}
	sort.Slice(l.ext, func(i, j int) bool { return l.ext[i][0] < l.ext[j][0] })
	merged := l.ext[:0]
	for _, e := range l.ext {
		if n := len(merged); n > 0 && e[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], e[1])
			continue
		}
		merged = append(merged, e)
	}
	l.ext = merged
	return l
}

// Mach-O section attributes and types: debug information, and the
// zero-fill types (S_ZEROFILL, S_GB_ZEROFILL, S_THREAD_LOCAL_ZEROFILL).
const sAttrDebug = 0x02000000

var zeroFills = []uint32{0x1, 0xc, 0x12}

// maxSections caps the section headers read to find an ELF object's
// allocated sections (an object built with -ffunction-sections has one
// per function: thousands, not millions).
const maxSections = 1 << 16

// elfAllocSections returns [offset, size] of an ELF file's SHF_ALLOC
// sections with contents; none when the table cannot be read.
func elfAllocSections(e *ELF, r io.ReaderAt) [][2]uint64 {
	is64 := e.Class == elf.ELFCLASS64
	ent := map[bool]uint64{true: 64, false: 40}[is64]
	if e.Shnum == 0 || uint64(e.Shentsize) < ent || int(e.Shnum) > maxSections {
		return nil
	}
	// ParseELF checked that the table lies inside the file.
	raw := make([]byte, uint64(e.Shentsize)*uint64(e.Shnum))
	if _, err := r.ReadAt(raw, int64(e.Shoff)); err != nil {
		return nil
	}
	var out [][2]uint64
	for i := uint64(0); i < uint64(e.Shnum); i++ {
		h := raw[i*uint64(e.Shentsize):]
		typ := elf.SectionType(e.bo.Uint32(h[4:]))
		var flags, off, sz uint64
		if is64 {
			flags, off, sz = e.bo.Uint64(h[8:]), e.bo.Uint64(h[24:]), e.bo.Uint64(h[32:])
		} else {
			flags, off, sz = uint64(e.bo.Uint32(h[8:])), uint64(e.bo.Uint32(h[16:])), uint64(e.bo.Uint32(h[20:]))
		}
		if typ != elf.SHT_NOBITS && typ != elf.SHT_NULL && elf.SectionFlag(flags)&elf.SHF_ALLOC != 0 {
			out = append(out, [2]uint64{off, sz})
		}
	}
	return out
}

// loadMap answers, for a slice, whether bytes at an offset are loaded: it
// finds the object holding them and works out that object's extents once,
// the first time a string is found in it (a library of a thousand
// objects holds build information in one).
type loadMap struct {
	objs  []Object    // the slice's, Offset from the start of the file
	r     io.ReaderAt // the slice's bytes, from its start
	base  int64       // the slice's offset in the file
	cache map[int]loaded
}

// loads reports whether the n bytes at file offset off all lie in bytes
// the format loads; when not, it returns the run of unloaded bytes
// holding off and why nothing loads them.
func (m *loadMap) loads(off int64, n int) (bool, Unmapped) {
	// The object holding off; none does an archive's headers or its
	// symbol table.
	i := sort.Search(len(m.objs), func(i int) bool { return m.objs[i].Offset+m.objs[i].Size > off })
	if i == len(m.objs) || m.objs[i].Offset > off {
		return false, Unmapped{Start: off, End: off + int64(n), Where: "in the archive's headers or symbol table, outside every member"}
	}
	o := &m.objs[i]
	l, ok := m.cache[i]
	if !ok {
		l = loadedOf(o, io.NewSectionReader(m.r, o.Offset-m.base, o.Size), o.Size)
		m.cache[i] = l
	}
	rel := off - o.Offset
	k := sort.Search(len(l.ext), func(k int) bool { return l.ext[k][1] > rel })
	if k < len(l.ext) && l.ext[k][0] <= rel && rel+int64(n) <= l.ext[k][1] {
		return true, Unmapped{}
	}
	u := Unmapped{Member: o.Member, Start: 0, End: o.Size, Where: l.outside}
	if k > 0 {
		u.Start = l.ext[k-1][1]
	}
	if k < len(l.ext) && l.ext[k][0] <= rel { // straddles the end of an extent
		k++
		u.Start = l.ext[k-1][1]
	}
	if k < len(l.ext) {
		u.End = l.ext[k][0]
	}
	u.Start, u.End = u.Start+o.Offset, u.End+o.Offset
	if k == len(l.ext) && k > 0 && l.image {
		u.Where = fmt.Sprintf("past the end of the Mach-O image (its last segment ends at byte %d)", u.Start)
	}
	return false, u
}

// split keeps the build information in loaded bytes and returns the rest
// as Unmapped runs, in file order.
func (m *loadMap) split(infos []BuildInfo) (kept []BuildInfo, out []Unmapped) {
	kept = infos[:0:0]
	for _, b := range infos {
		ok, u := m.loads(b.Offset, len(b.Text))
		if ok {
			kept = append(kept, b)
			continue
		}
		out = addUnmapped(out, u, b.Text)
	}
	return kept, out
}

// addUnmapped adds s, found in the run u, to out, merging it into u's
// entry when the run is already there.
func addUnmapped(out []Unmapped, u Unmapped, s string) []Unmapped {
	const maxShown = 200
	if len(s) > maxShown {
		s = s[:maxShown] + "..."
	}
	for i := range out {
		if out[i].Start == u.Start && out[i].End == u.End {
			if len(out[i].Strings) < 20 && !slices.Contains(out[i].Strings, s) {
				out[i].Strings = append(out[i].Strings, s)
			}
			return out
		}
	}
	u.Strings = []string{s}
	return append(out, u)
}

// Describe is the run in words, for a note: "bytes 49152-49210, past the
// end of the Mach-O image (...): "compiler: cc -O3 ..."".
func (u Unmapped) Describe() string {
	qs := make([]string, len(u.Strings))
	for i, s := range u.Strings {
		qs[i] = fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("bytes %d-%d, %s, hold %s", u.Start, u.End, u.Where, strings.Join(qs, ", "))
}
