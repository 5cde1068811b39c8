package inspect

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

const arm64Line = testfixture.Arm64Line

// objects compiles the test objects once per test: an arm64 (macOS 11,
// LC_BUILD_VERSION) and an x86_64 (macOS 10.12, LC_VERSION_MIN_MACOSX) pair.
type objects struct {
	dir                              string
	cvArm, plainArm, cvX86, plainX86 string
	tc                               testfixture.Toolchain
}

func buildObjects(t *testing.T) objects {
	tc := testfixture.NeedToolchain(t)
	d := t.TempDir()
	o := objects{dir: d, tc: tc}
	o.cvArm = tc.Compile(t, d, "arm64-apple-macos11", "libcrypto-lib-cversion", testfixture.CVersionSrc(arm64Line, "darwin64-arm64-cc"))
	o.plainArm = tc.Compile(t, d, "arm64-apple-macos11", testfixture.LongName, testfixture.PlainSrc)
	x := filepath.Join(d, "x86")
	if err := os.Mkdir(x, 0o755); err != nil {
		t.Fatal(err)
	}
	o.cvX86 = tc.Compile(t, x, "x86_64-apple-macos10.12", "libcrypto-lib-cversion", testfixture.CVersionSrc("cc -O3 -arch x86_64 -march=core2", "darwin64-x86_64-cc"))
	o.plainX86 = tc.Compile(t, x, "x86_64-apple-macos10.12", testfixture.LongName, testfixture.PlainSrc)
	return o
}

func TestInspectThinMachO(t *testing.T) {
	o := buildObjects(t)
	tests := []struct {
		path, arch, minos string
		cmd               macho.LoadCmd
	}{
		{o.cvArm, "arm64", "11.0", LCBuildVersion},
		{o.cvX86, "x86_64", "10.12", LCVersionMinMacOSX},
	}
	for _, tt := range tests {
		t.Run(tt.arch, func(t *testing.T) {
			f, err := Inspect(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Format != FormatMachO || len(f.Slices) != 1 {
				t.Fatalf("format %s with %d slices, want one mach-o slice", f.Format, len(f.Slices))
			}
			s := f.Slices[0]
			if s.Arch != tt.arch || len(s.Objects) != 1 {
				t.Fatalf("slice arch %q with %d objects, want %s and 1", s.Arch, len(s.Objects), tt.arch)
			}
			m := s.Objects[0].MachO
			if m == nil || m.Type != macho.TypeObj || m.TypeName() != "object" {
				t.Fatalf("object: %+v", s.Objects[0])
			}
			if len(m.Versions) != 1 {
				t.Fatalf("versions %+v, want exactly one", m.Versions)
			}
			v := m.Versions[0]
			if v.Cmd != tt.cmd || v.Platform != PlatformMacOS || v.MinOS.String() != tt.minos {
				t.Errorf("version = %s platform %s minos %s, want %#x macOS %s", v.CmdName(), v.Platform, v.MinOS, tt.cmd, tt.minos)
			}
			kinds := map[BuildInfoKind]string{}
			for _, b := range s.BuildInfo {
				kinds[b.Kind] = b.Value
			}
			if kinds[InfoVersion] != "OpenSSL 4.0.2 25 Aug 2026" || kinds[InfoBuiltOn] == "" || kinds[InfoPlatform] == "" || kinds[InfoCompiler] == "" {
				t.Errorf("build info = %v", kinds)
			}
		})
	}
}

func TestInspectArchive(t *testing.T) {
	o := buildObjects(t)
	tests := []struct {
		name   string
		format string // llvm-ar --format
		sym64  bool
		symtab string
	}{
		// llvm-ar picks the Darwin format for Mach-O objects by default.
		{"default", "", false, "__.SYMDEF"},
		{"darwin", "darwin", false, "__.SYMDEF"},
		{"darwin-sym64", "darwin", true, "__.SYMDEF_64"},
		{"gnu", "gnu", false, "/"},
		{"gnu-sym64", "gnu", true, "/SYM64/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := o.tc.Archive(t, tt.format, tt.sym64, filepath.Join(t.TempDir(), "libcrypto.a"), o.cvArm, o.plainArm)
			s := inspectOne(t, lib, FormatAr)
			data, err := os.ReadFile(lib)
			if err != nil {
				t.Fatal(err)
			}
			a, err := ParseAr(bytes.NewReader(data), int64(len(data)))
			if err != nil || len(a.SymbolTables) != 1 || a.SymbolTables[0].Name != tt.symtab {
				t.Errorf("symbol tables %+v (%v), want one %q", a, err, tt.symtab)
			}
			var names []string
			for _, ob := range s.Objects {
				names = append(names, ob.Member)
				if ob.Err != nil || ob.MachO == nil || ob.Arch() != "arm64" || ob.MachO.Versions[0].MinOS.String() != "11.0" {
					t.Errorf("member %s: %+v", ob.Member, ob)
				}
			}
			if want := "libcrypto-lib-cversion.o," + testfixture.LongName + ".o"; strings.Join(names, ",") != want {
				t.Errorf("members %v, want %s", names, want)
			}
			if s.Arch != "arm64" {
				t.Errorf("slice arch %q, want arm64", s.Arch)
			}
			var compilers []BuildInfo
			for _, b := range s.BuildInfo {
				if b.Kind == InfoCompiler {
					compilers = append(compilers, b)
				}
			}
			if len(compilers) != 1 || compilers[0].Member != "libcrypto-lib-cversion.o" || compilers[0].Value != arm64Line {
				t.Fatalf("compiler lines %+v, want one %q in libcrypto-lib-cversion.o", compilers, arm64Line)
			}
			// The offset must point at the string in the file itself.
			raw, _ := os.ReadFile(lib)
			c := compilers[0]
			if got := string(raw[c.Offset : c.Offset+int64(len(c.Text))]); got != c.Text {
				t.Errorf("offset %d holds %q, want %q", c.Offset, got, c.Text)
			}
			if cl := ParseCompilerLine(c.Value); cl.Opt != O0 || strings.Join(cl.Archs, " ") != "arm64" {
				t.Errorf("parsed %+v", cl)
			}
		})
	}
}

// TestInspectUniversal checks universal static libraries (ar slices, which
// debug/macho.NewFatFile cannot read), universal objects, and the
// FAT_MAGIC_64 variant.
func TestInspectUniversal(t *testing.T) {
	o := buildObjects(t)
	d := t.TempDir()
	armLib := o.tc.Archive(t, "darwin", false, filepath.Join(d, "arm64.a"), o.cvArm, o.plainArm)
	x86Lib := o.tc.Archive(t, "darwin", false, filepath.Join(d, "x86_64.a"), o.cvX86, o.plainX86)
	fatLib := o.tc.LipoCreate(t, filepath.Join(d, "fat.a"), armLib, x86Lib)
	fatObj := o.tc.LipoCreate(t, filepath.Join(d, "fat.o"), o.cvArm, o.cvX86)
	fat64 := filepath.Join(d, "fat64.a")
	if err := os.WriteFile(fat64, toFat64(t, fatLib), 0o644); err != nil {
		t.Fatal(err)
	}

	if _, err := macho.OpenFat(fatLib); err == nil {
		t.Log("note: debug/macho now reads universal static libraries")
	}
	tests := []struct {
		path   string
		is64   bool
		format Format
		nobj   int
	}{
		{fatLib, false, FormatAr, 2},
		{fat64, true, FormatAr, 2},
		{fatObj, false, FormatMachO, 1},
	}
	want := map[string]string{"arm64": "11.0", "x86_64": "10.12"}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			f, err := Inspect(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			is64, _, _ := ParseFat(bytes.NewReader(data), int64(len(data)))
			if f.Format != FormatFat || is64 != tt.is64 || len(f.Slices) != 2 {
				t.Fatalf("format %s fat64=%v slices=%d", f.Format, is64, len(f.Slices))
			}
			seen := map[string]bool{}
			for _, s := range f.Slices {
				seen[s.Arch] = true
				if s.Format != tt.format || len(s.Objects) != tt.nobj {
					t.Errorf("%s slice: format %s, %d objects", s.Arch, s.Format, len(s.Objects))
				}
				for _, ob := range s.Objects {
					if ob.Err != nil || ob.Arch() != s.Arch || ob.MachO.Versions[0].MinOS.String() != want[s.Arch] {
						t.Errorf("%s slice, member %q: arch %s, err %v, versions %+v", s.Arch, ob.Member, ob.Arch(), ob.Err, ob.MachO)
					}
				}
				n := 0
				for _, b := range s.BuildInfo {
					if b.Kind == InfoCompiler {
						n++
						if !strings.Contains(b.Value, "-arch "+s.Arch) {
							t.Errorf("%s slice has compiler line %q", s.Arch, b.Value)
						}
						if b.Offset < s.Offset || b.Offset >= s.Offset+s.Size {
							t.Errorf("%s slice: build info offset %d outside the slice", s.Arch, b.Offset)
						}
					}
				}
				if n != 1 {
					t.Errorf("%s slice: %d compiler lines, want 1", s.Arch, n)
				}
			}
			if !seen["arm64"] || !seen["x86_64"] {
				t.Errorf("slices %v", seen)
			}
		})
	}
}

// toFat64 rewrites a FAT_MAGIC universal file as FAT_MAGIC_64 (which
// llvm-lipo-14 cannot write), moving the slices to keep their alignment.
func toFat64(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	is64, arches, err := ParseFat(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || is64 {
		t.Fatalf("ParseFat: %v %v", is64, err)
	}
	const shift = 4096 // keeps any alignment up to 2^12
	be := binary.BigEndian
	out := make([]byte, 8+32*len(arches))
	be.PutUint32(out, FatMagic64)
	be.PutUint32(out[4:], uint32(len(arches)))
	for i, a := range arches {
		e := out[8+32*i:]
		be.PutUint32(e, uint32(a.CPU))
		be.PutUint32(e[4:], a.SubCPU)
		be.PutUint64(e[8:], uint64(a.Offset+shift))
		be.PutUint64(e[16:], uint64(a.Size))
		be.PutUint32(e[24:], be.Uint32(raw[8+20*i+16:])) // align
	}
	body := make([]byte, len(raw)+shift)
	copy(body, out)
	for _, a := range arches {
		copy(body[a.Offset+shift:], raw[a.Offset:a.Offset+a.Size])
	}
	return body
}

// TestInspectELF reads Debian's libcrypto (gcc -O2) through debug/elf.
func TestInspectELF(t *testing.T) {
	testfixture.Declare(t, testfixture.TierGate, "Debian's own OpenSSL libraries", testfixture.LinuxNative)
	const so = "/usr/lib/x86_64-linux-gnu/libcrypto.so.3"
	if _, err := os.Stat(so); err != nil {
		testfixture.Missing(t, "%s (apt-get install -y libssl3): %v", so, err)
	}
	s := inspectOne(t, so, FormatELF)
	e := s.Objects[0].ELF
	if s.Arch != "x86_64" || e == nil || e.Machine != elf.EM_X86_64 || e.TypeName() != "shared object" {
		t.Fatalf("slice %s, elf %+v", s.Arch, e)
	}
	var lines []string
	for _, b := range s.BuildInfo {
		switch b.Kind {
		case InfoCompiler:
			lines = append(lines, b.Value)
		case InfoVersion:
			if !strings.HasPrefix(b.Value, "OpenSSL 3.") {
				t.Errorf("version %q", b.Value)
			}
		}
	}
	if len(lines) != 1 {
		t.Fatalf("compiler lines %q, want 1", lines)
	}
	cl := ParseCompilerLine(lines[0])
	if cl.Opt != O2 || cl.OptFlag != "-O2" || cl.Args[0] != "gcc" || !cl.Has("-fPIC") {
		t.Errorf("Debian's compiler line parsed as %s (%q), args[0] %q", cl.Opt, cl.OptFlag, cl.Args[0])
	}
}

// TestHostile feeds malformed containers: each must be a *FormatError that
// names the file (and slice or member) and says what was expected.
func TestHostile(t *testing.T) {
	obj := machoObject(t, LCBuildVersion, PlatformMacOS, 0x000b0000)
	arOne := buildAr(arEntry{name: "a.o/", data: obj})
	tests := []struct {
		name string
		data []byte
		want []string // substrings of the error
	}{
		{"truncated fat header", []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2, 1, 0, 0, 12}, []string{"h.bin", "truncated fat header"}},
		{"fat magic only", []byte{0xca, 0xfe, 0xba, 0xbe}, []string{"h.bin", "truncated fat header"}},
		{"fat slice past EOF", fatFile(t, fatSlice{cpu: macho.CpuArm64, data: arOne, offset: 1 << 20, noData: true}), []string{"h.bin", "[arm64 slice]", "runs past end of file"}},
		{"fat slice size overflow", fatFile64(t, macho.CpuArm64, 4096, ^uint64(0)-10), []string{"h.bin", "[arm64 slice]", "runs past end of file"}},
		{"fat nfat_arch huge", []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52, 0, 0, 0, 0}, []string{"h.bin", "nfat_arch 52 exceeds"}},
		{"fat nfat_arch zero", []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0}, []string{"nfat_arch is 0"}},
		{"fat slice not mach-o", fatFile(t, fatSlice{cpu: macho.CpuArm64, data: []byte("hello, world")}), []string{"[arm64 slice]", "expected a Mach-O file or an ar archive"}},
		{"fat slices overlap", fatFile(t, fatSlice{cpu: macho.CpuArm64, data: arOne}, fatSlice{cpu: macho.CpuAmd64, data: arOne, offset: 4096 + 8}), []string{"overlaps slice arm64"}},
		{"ar member size overflow", patchArSize(buildAr(arEntry{name: "//", data: []byte("libcrypto-lib-cversion.o/\n")}, arEntry{name: "/0", data: obj}), 8+60+26, "9999999999"), []string{"h.bin(libcrypto-lib-cversion.o)", "member size 9999999999 runs past the end of the archive"}},
		{"ar member size past end", patchArSize(buildAr(arEntry{name: "#1/20", data: append([]byte("libcrypto-lib-x.o\x00\x00\x00"), obj...)}), 8, "5000"), []string{"h.bin(libcrypto-lib-x.o)", "member size 5000 runs past"}},
		{"ar member size not a number", patchArSize(arOne, 8, "12x"), []string{"h.bin(a.o)", `expected a decimal number, found "12x"`}},
		{"ar member size negative", patchArSize(arOne, 8, "-1"), []string{"expected a decimal number"}},
		{"ar truncated header", append(append([]byte{}, arOne...), "b.o/  0"...), []string{"truncated member header"}},
		{"ar bad terminator", func() []byte { b := append([]byte{}, arOne...); b[8+58] = 'x'; return b }(), []string{"bad member header terminator"}},
		{"ar BSD name longer than member", buildAr(arEntry{name: "#1/200", data: []byte("short")}), []string{"BSD long name length"}},
		{"ar GNU name without table", buildAr(arEntry{name: "/0", data: obj}), []string{`expected a preceding "//" long-name table`}},
		{"ar GNU name offset past table", buildAr(arEntry{name: "//", data: []byte("x.o/\n")}, arEntry{name: "/99", data: obj}), []string{"expected an offset below 5"}},
		{"ar thin", []byte("!<thin>\n"), []string{"thin archive"}},
		{"mach-o sizeofcmds past EOF", patch32(obj, 20, 1<<20), []string{"h.bin", "sizeofcmds 1048576 runs past end of file"}},
		{"mach-o ncmds too many", patch32(obj, 16, 1000), []string{"ncmds 1000 cannot fit"}},
		{"mach-o cmdsize zero", patch32(obj, 32+4, 0), []string{"cmdsize 0: expected 8 to"}},
		{"mach-o build version too small", patch32(obj, 32+4, 8), []string{"cmdsize 8 is too small"}},
		{"mach-o truncated", obj[:20], []string{"truncated Mach-O header"}},
		{"unknown", []byte("<!doctype html>"), []string{"h.bin", "unrecognised file format", "3c21646f63747970"}},
		{"empty", nil, []string{"unrecognised file format"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := InspectReader("h.bin", bytes.NewReader(tt.data), int64(len(tt.data)))
			if err == nil {
				t.Fatalf("no error; got %+v", f)
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("error %v is neither ErrMalformed nor ErrUnknownFormat", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestMalformedMember: a broken object inside a good archive is recorded on
// that member, and the other members are still inspected.
func TestMalformedMember(t *testing.T) {
	good := machoObject(t, LCBuildVersion, PlatformMacOS, 0x000b0000)
	bad := patch32(good, 20, 1<<20)
	data := buildAr(arEntry{name: "good.o", data: good}, arEntry{name: "bad.o", data: bad}, arEntry{name: "notes.txt", data: []byte("hi")})
	f, err := InspectReader("lib.a", bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	objs := f.Slices[0].Objects
	if len(objs) != 3 {
		t.Fatalf("%d objects", len(objs))
	}
	if objs[0].Err != nil || objs[0].MachO == nil {
		t.Errorf("good.o: %+v", objs[0])
	}
	if objs[1].Err == nil || !strings.Contains(objs[1].Err.Error(), "lib.a(bad.o)") || objs[1].Format != FormatMachO {
		t.Errorf("bad.o: %+v", objs[1])
	}
	var fe *FormatError
	if !errors.As(objs[1].Err, &fe) || fe.Offset != objs[1].Offset+20 {
		t.Errorf("bad.o error offset: %+v, member at %d", fe, objs[1].Offset)
	}
	if objs[2].Format != FormatUnknown || objs[2].Err != nil || string(objs[2].Magic) != "hi" {
		t.Errorf("notes.txt: %+v", objs[2])
	}
	if f.Slices[0].Arch != "" {
		t.Errorf("mixed archive has arch %q, want empty", f.Slices[0].Arch)
	}
}

func TestInspectNotRegular(t *testing.T) {
	if _, err := Inspect(t.TempDir()); err == nil || !strings.Contains(err.Error(), "expected a regular file") {
		t.Errorf("directory: %v", err)
	}
	if _, err := Inspect(filepath.Join(t.TempDir(), "nope.a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A FIFO is refused, not read (a read would wait for a writer forever).
	fifo := filepath.Join(t.TempDir(), "libcrypto.a")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Inspect(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "expected a regular file") {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Inspect blocked on a FIFO")
	}
}

// ParseELF reads the header only, and refuses headers that lie.
func TestParseELFHeader(t *testing.T) {
	b, err := os.ReadFile("/proc/self/exe") // a real ELF executable of this machine
	if err != nil {
		t.Skip("no /proc/self/exe")
	}
	e, err := ParseELF(bytes.NewReader(b), int64(len(b)))
	if err != nil || e.Type != elf.ET_EXEC && e.Type != elf.ET_DYN || e.Class != elf.ELFCLASS64 || e.Arch == "" {
		t.Fatalf("%+v %v", e, err)
	}
	patch := func(off int, v ...byte) []byte { c := append([]byte(nil), b...); copy(c[off:], v); return c }
	for name, bad := range map[string][]byte{
		"truncated":             b[:40],
		"bad class":             patch(4, 7),
		"bad data encoding":     patch(5, 9),
		"bad version":           patch(6, 2),
		"section table outside": patch(40, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0),
		"program table outside": patch(54, 0xff, 0xff, 0xff, 0xff),
	} {
		if _, err := ParseELF(bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// A mapped file truncated while it is inspected faults; InspectBytes says
// so instead of crashing the process.
func TestInspectBytesFault(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.a")
	obj := machoObject(t, LCBuildVersion, PlatformMacOS, 0x000b0000)
	var entries []arEntry
	for i := 0; i < 64; i++ {
		entries = append(entries, arEntry{fmt.Sprintf("m%d.o/", i), append(append([]byte(nil), obj...), make([]byte, 64<<10)...)})
	}
	if err := os.WriteFile(p, buildAr(entries...), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(b)
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := InspectBytes(p, b); err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("err = %v", err)
	}
}

// inspectOne inspects path, which must be a thin file of format want, and
// returns its one slice.
func inspectOne(t *testing.T, path string, want Format) Slice {
	t.Helper()
	f, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != want || len(f.Slices) != 1 {
		t.Fatalf("format %s, %d slices", f.Format, len(f.Slices))
	}
	return f.Slices[0]
}

// TestOnCPUsFault: a fault on one of OnCPUs' workers (a page of a mapped
// file truncated meanwhile) is GuardFault's error in the caller, not a
// crash, and a worker's other panic goes on in the caller.
func TestOnCPUsFault(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := syscall.Mmap(int(f.Fd()), 0, 1<<20, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(b)
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	err = GuardFault("read", p, func() error {
		got := make([]byte, 64)
		OnCPUs(64, func() struct{} { return struct{}{} }, func(_ struct{}, k int) { got[k] = b[k*16<<10] })
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "read "+p+": the file changed while it was read") {
		t.Errorf("err = %v", err)
	}
	defer func() {
		if p := recover(); p != "worker 3" {
			t.Errorf("recovered %v, want a worker's panic", p)
		}
	}()
	OnCPUs(8, func() struct{} { return struct{}{} }, func(_ struct{}, k int) {
		if k == 3 {
			panic("worker 3")
		}
	})
}
