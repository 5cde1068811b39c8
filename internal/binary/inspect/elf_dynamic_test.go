package inspect

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestELFDynamicMatchesDebugELF reads the dynamic sections of the host's
// own shared libraries and programs (built by Debian, not here) and holds
// them to what debug/elf reads from the same files.
func TestELFDynamicMatchesDebugELF(t *testing.T) {
	var files []string
	for _, g := range []string{"/usr/lib/x86_64-linux-gnu/*.so.*", "/usr/bin/*"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no shared libraries or programs on this host to read")
		}
		t.Skip("no host ELF files (not Linux)")
	}
	n := 0
	for _, p := range files {
		if n == 300 {
			break
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		ef, err := elf.Open(p)
		if err != nil {
			continue // a script, not ELF
		}
		f, err := os.Open(p)
		if err != nil {
			ef.Close()
			t.Fatal(err)
		}
		e, err := ParseELF(f, fi.Size())
		f.Close()
		if err != nil {
			ef.Close()
			t.Errorf("%s: %v", p, err)
			continue
		}
		want := func(tag elf.DynTag) []string {
			v, _ := ef.DynString(tag)
			return v
		}
		split := func(v []string) []string {
			var out []string
			for _, s := range v {
				out = append(out, strings.Split(s, ":")...)
			}
			return out
		}
		hasDyn := ef.Section(".dynamic") != nil
		switch {
		case !hasDyn && e.Dynamic != nil:
			t.Errorf("%s: a dynamic section read where debug/elf finds none", p)
		case hasDyn && e.Dynamic == nil:
			t.Errorf("%s: no dynamic section read", p)
		case hasDyn:
			n++
			d := e.Dynamic
			if !slices.Equal(d.Needed, want(elf.DT_NEEDED)) {
				t.Errorf("%s: DT_NEEDED %q, debug/elf %q", p, d.Needed, want(elf.DT_NEEDED))
			}
			if so := want(elf.DT_SONAME); (len(so) == 0 && d.Soname != "") || (len(so) > 0 && d.Soname != so[0]) {
				t.Errorf("%s: DT_SONAME %q, debug/elf %q", p, d.Soname, so)
			}
			if !slices.Equal(d.Rpath, split(want(elf.DT_RPATH))) || !slices.Equal(d.Runpath, split(want(elf.DT_RUNPATH))) {
				t.Errorf("%s: run paths %q %q, debug/elf %q %q", p, d.Rpath, d.Runpath, want(elf.DT_RPATH), want(elf.DT_RUNPATH))
			}
		}
		ef.Close()
	}
	if n < 20 {
		t.Fatalf("only %d files with a dynamic section compared; expected a host with many", n)
	}
	t.Logf("%d dynamic sections agree with debug/elf", n)
}

// FuzzParseELF: no ELF file, however mangled, makes the header and
// dynamic-section reader (or the symbol reader) panic or read past the
// file. Seeds are the host's own small shared libraries.
func FuzzParseELF(f *testing.F) {
	m, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/*.so.*")
	n := 0
	for _, p := range m {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 64<<10 || n == 8 {
			continue
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.HasPrefix(string(b), elf.ELFMAG) {
			f.Add(b)
			n++
		}
	}
	f.Add([]byte(elf.ELFMAG + "\x02\x01\x01"))
	for _, b := range []bool{false, true} {
		for _, c := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
			f.Add(synthELF(synthSpec{class: c, big: b, names: []dynName{{elf.DT_NEEDED, 0}, {elf.DT_NEEDED, 0}, {elf.DT_SONAME, 10}, {elf.DT_RUNPATH, 20}}}))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseELF(bytes.NewReader(data), int64(len(data)))
		if err == nil && e.Dynamic != nil {
			// Every name is read from the file, at most once per entry of
			// at most maxDynName bytes: never more than a bounded multiple
			// of the file, however the entries share one string.
			n := len(e.Dynamic.Soname)
			for _, s := range slices.Concat(e.Dynamic.Needed, e.Dynamic.Rpath, e.Dynamic.Runpath) {
				n += len(s)
			}
			if n > len(data) && n > maxDynNames*maxDynName {
				t.Fatalf("%d bytes of names from a file of %d", n, len(data))
			}
			if len(e.Dynamic.Needed)+len(e.Dynamic.Rpath)+len(e.Dynamic.Runpath) > maxDynNames {
				t.Fatalf("%d names", len(e.Dynamic.Needed)+len(e.Dynamic.Rpath)+len(e.Dynamic.Runpath))
			}
		}
		DefinedExternals(data)
	})
}

// dynName is a dynamic entry naming a string at an offset of the string
// table.
type dynName struct {
	tag elf.DynTag
	off uint64
}

// synthSpec describes a minimal linked ELF image: a PT_LOAD covering the
// whole file, a PT_DYNAMIC, and a string table.
type synthSpec struct {
	class      elf.Class
	big        bool
	names      []dynName
	strtab     string // default "libc.so.6\x00libx.so.1\x00/run/path\x00"
	noStrsz    bool
	strtabAddr uint64 // default: where the table is in the file (vaddr = offset)
	dynAt      uint64 // PT_DYNAMIC's offset, default where it is
	dynSize    uint64 // default: its size
	emptyDyn   bool   // PT_DYNAMIC of no bytes
	twoDynamic bool
	loadOff    uint64 // PT_LOAD's p_offset (0: the file)
}

// synthELF builds the image synthSpec describes.
func synthELF(s synthSpec) []byte {
	var bo binary.ByteOrder = binary.LittleEndian
	if s.big {
		bo = binary.BigEndian
	}
	is64 := s.class == elf.ELFCLASS64
	ehsize, phent, word := 52, 32, 4
	if is64 {
		ehsize, phent, word = 64, 56, 8
	}
	if s.strtab == "" {
		s.strtab = "libc.so.6\x00libx.so.1\x00/run/path\x00"
	}
	nph := 2
	if s.twoDynamic {
		nph = 3
	}
	phoff := ehsize
	dynoff := phoff + nph*phent
	ents := len(s.names) + 3
	strsoff := dynoff + ents*2*word
	total := strsoff + len(s.strtab)
	b := make([]byte, total)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_VERSION] = byte(s.class), byte(elf.EV_CURRENT)
	b[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	if s.big {
		b[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
	}
	bo.PutUint16(b[16:], uint16(elf.ET_DYN))
	bo.PutUint16(b[18:], uint16(elf.EM_X86_64))
	bo.PutUint32(b[20:], 1)
	put := func(off int, v uint64) {
		if is64 {
			bo.PutUint64(b[off:], v)
		} else {
			bo.PutUint32(b[off:], uint32(v))
		}
	}
	if is64 {
		bo.PutUint64(b[32:], uint64(phoff))
		bo.PutUint16(b[52:], uint16(ehsize))
		bo.PutUint16(b[54:], uint16(phent))
		bo.PutUint16(b[56:], uint16(nph))
	} else {
		bo.PutUint32(b[28:], uint32(phoff))
		bo.PutUint16(b[40:], uint16(ehsize))
		bo.PutUint16(b[42:], uint16(phent))
		bo.PutUint16(b[44:], uint16(nph))
	}
	phdr := func(i int, typ elf.ProgType, off, filesz uint64) {
		p := phoff + i*phent
		bo.PutUint32(b[p:], uint32(typ))
		if is64 {
			bo.PutUint64(b[p+8:], off)
			bo.PutUint64(b[p+16:], off) // vaddr
			bo.PutUint64(b[p+32:], filesz)
		} else {
			bo.PutUint32(b[p+4:], uint32(off))
			bo.PutUint32(b[p+8:], uint32(off))
			bo.PutUint32(b[p+16:], uint32(filesz))
		}
	}
	phdr(0, elf.PT_LOAD, s.loadOff, uint64(total))
	dynAt, dynSize := uint64(dynoff), uint64(ents*2*word)
	if s.dynAt != 0 {
		dynAt = s.dynAt
	}
	if s.dynSize != 0 {
		dynSize = s.dynSize
	}
	if s.emptyDyn {
		dynSize = 0
	}
	phdr(1, elf.PT_DYNAMIC, dynAt, dynSize)
	if s.twoDynamic {
		phdr(2, elf.PT_DYNAMIC, dynAt, dynSize)
	}
	strtabAddr := uint64(strsoff)
	if s.strtabAddr != 0 {
		strtabAddr = s.strtabAddr
	}
	i := dynoff
	ent := func(tag elf.DynTag, v uint64) {
		put(i, uint64(tag))
		put(i+word, v)
		i += 2 * word
	}
	for _, n := range s.names {
		ent(n.tag, n.off)
	}
	ent(elf.DT_STRTAB, strtabAddr)
	if !s.noStrsz {
		ent(elf.DT_STRSZ, uint64(len(s.strtab)))
	}
	copy(b[strsoff:], s.strtab)
	return b
}

// TestELFDynamicSynthetic reads hand-built images of both classes and byte
// orders, and refuses, naming what is wrong, the dynamic sections no
// loader would take; a split-off debug file's empty one is no section.
func TestELFDynamicSynthetic(t *testing.T) {
	names := []dynName{{elf.DT_NEEDED, 0}, {elf.DT_SONAME, 10}, {elf.DT_RUNPATH, 20}}
	for _, big := range []bool{false, true} {
		for _, c := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
			b := synthELF(synthSpec{class: c, big: big, names: names})
			e, err := ParseELF(bytes.NewReader(b), int64(len(b)))
			if err != nil || e.DynamicErr != nil || e.Dynamic == nil {
				t.Fatalf("%v big=%v: %v %+v", c, big, err, e)
			}
			if d := e.Dynamic; d.Soname != "libx.so.1" || !slices.Equal(d.Needed, []string{"libc.so.6"}) || !slices.Equal(d.Runpath, []string{"/run/path"}) {
				t.Errorf("%v big=%v: %+v", c, big, d)
			}
		}
	}
	long := strings.Repeat("a", maxDynName+10) + "\x00"
	many := make([]dynName, maxDynNames+1)
	for i := range many {
		many[i] = dynName{elf.DT_NEEDED, 0}
	}
	for _, tt := range []struct {
		name string
		spec synthSpec
		want string // "" for no dynamic section and no error
	}{
		{"two PT_DYNAMIC", synthSpec{names: names, twoDynamic: true}, "a second PT_DYNAMIC"},
		{"string table outside every segment", synthSpec{names: names, strtabAddr: 1 << 40}, "inside a loaded segment"},
		{"no DT_STRSZ", synthSpec{names: names, noStrsz: true}, "no DT_STRTAB and DT_STRSZ"},
		{"a string offset past the table", synthSpec{names: []dynName{{elf.DT_NEEDED, 1000}}}, "string offset 1000 outside the string table"},
		{"an unterminated string", synthSpec{names: names, strtab: "libc.so.6"}, "not terminated"},
		{"a name longer than any path", synthSpec{names: []dynName{{elf.DT_NEEDED, 0}}, strtab: long}, "not terminated within 4096 bytes"},
		{"one string named by too many entries", synthSpec{names: many}, "more than 4096 names"},
		{"a dynamic section past the end", synthSpec{names: names, dynAt: 1 << 30}, "runs past the end of the file"},
		{"a segment outside the file maps nothing", synthSpec{names: names, loadOff: 1 << 62}, "inside a loaded segment"},
		{"an empty dynamic section (split-off debug file)", synthSpec{names: names, dynAt: 1 << 30, emptyDyn: true}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.spec.class == 0 {
				tt.spec.class = elf.ELFCLASS64
			}
			b := synthELF(tt.spec)
			e, err := ParseELF(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("the header itself refused: %v", err)
			}
			if tt.want == "" {
				if e.DynamicErr != nil || e.Dynamic != nil {
					t.Errorf("want no dynamic section, got %+v, %v", e.Dynamic, e.DynamicErr)
				}
				return
			}
			var fe *FormatError
			if e.DynamicErr == nil || !errors.As(e.DynamicErr, &fe) || !strings.Contains(e.DynamicErr.Error(), tt.want) {
				t.Errorf("want a FormatError saying %q, got %v (dynamic %+v)", tt.want, e.DynamicErr, e.Dynamic)
			}
		})
	}
}
