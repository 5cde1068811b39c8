package inspect

import (
	"bytes"
	"debug/elf"
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
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseELF(bytes.NewReader(data), int64(len(data)))
		if err == nil && e.Dynamic != nil {
			for _, s := range append(append(e.Dynamic.Needed, e.Dynamic.Soname), e.Dynamic.Runpath...) {
				if len(s) > len(data) {
					t.Fatalf("a name of %d bytes from a file of %d", len(s), len(data))
				}
			}
		}
		DefinedExternals(data)
	})
}
