package check

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/report"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// appendedLine is the build line of issue 40: Configure's flags, -O3, and
// nothing else of OpenSSL, where no loader maps it.
const appendedLine = "compiler: cc -O3 -DOPENSSL_PIC -DL_ENDIAN"

// dylib links a Mach-O object into a dylib with ld64.lld-14 against the
// SDK stubs' libSystem, as a real macOS dylib is linked (segments, a
// __LINKEDIT that ends the file, an ad hoc signature on arm64).
func (k *kit) dylib(name, arch, obj string) string {
	k.t.Helper()
	testfixture.Tools(k.t, "ld64.lld-14")
	stub := filepath.Join(toolchain.HeadersDir(), "darwin", "libSystem.11.tbd")
	if _, err := os.Stat(stub); err != nil {
		testfixture.Missing(k.t, "%v (scripts/setup-cross.sh)", err)
	}
	out := k.path(name)
	testfixture.RunIn(k.t, k.dir, "ld64.lld-14", "-arch", arch, "-platform_version", "macos", "11.0", "11.0", "-dylib",
		"-install_name", "@rpath/"+name, "-o", out, obj, stub)
	return out
}

// TestUnmappedIsNoEvidence: build information in bytes the format does
// not load is no evidence, and is reported as such, naming the bytes. A
// program with no OpenSSL, linked for real (ld64.lld-14 for macOS, gcc
// for Linux), with OpenSSL's compiler line where nothing loads it:
// appended past the end of a thin Mach-O dylib (past __LINKEDIT), in each
// slice of a universal one, past the end of an ELF shared object, in an
// ELF section no PT_LOAD segment maps, in an object's section the linker
// does not take. On 5392f1f's code each of these passed as OpenSSL at
// -O3, -strict included. The same line inside the image still counts.
func TestUnmappedIsNoEvidence(t *testing.T) {
	k := newKit(t)
	testfixture.Tools(t, "objcopy")
	line := "\x00" + appendedLine + "\x00"
	withLine := func(name, src string) string {
		t.Helper()
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		return testfixture.CopyBytes(t, append(data, line...), k.path(name))
	}
	lineFile := testfixture.CopyBytes(t, []byte(line), k.path("line.bin"))
	// nonAlloc adds a section holding the line to an ELF file; objcopy's
	// added sections have contents and no SHF_ALLOC.
	nonAlloc := func(name, src string) string {
		t.Helper()
		out := k.path(name)
		testfixture.RunIn(t, k.dir, "objcopy", "--add-section", ".osslbuild.note="+lineFile, src, out)
		return out
	}

	armObj := k.optimisedProgram("z-arm64.o", "arm64-apple-macos11", "")
	x86Obj := k.optimisedProgram("z-x86_64.o", "x86_64-apple-macos11", "")
	armDylib := k.dylib("libz-arm64.dylib", "arm64", armObj)
	x86Dylib := k.dylib("libz-x86_64.dylib", "x86_64", x86Obj)
	armAppended := withLine("libz-appended.dylib", armDylib)
	fat := k.lipo("libz-universal.dylib", withLine("libz-arm64-appended.dylib", armDylib), withLine("libz-x86_64-appended.dylib", x86Dylib))
	so := k.elf("libz.so", manyFuncs(80), "-O2", "-shared", "-fPIC")
	obj := k.elf("z.o", manyFuncs(80), "-O2", "-c")
	lib := k.ar("libz.a", false, nonAlloc("z-note.o", obj))
	// The control: the same line compiled into the image.
	inside := k.dylib("libz-inside.dylib", "arm64", k.optimisedProgram("zi.o", "arm64-apple-macos11", cBytes("flags", appendedLine)))

	size := func(p string) int64 {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	for _, tc := range []struct {
		name  string
		path  string
		where string // in the note, "" for the control
		start int64  // the run's start when known, else -1
		archs int
	}{
		{"past the end of a thin Mach-O", armAppended, "past the end of the Mach-O image (its last segment ends at byte " + fmt.Sprint(size(armDylib)) + ")", size(armDylib), 1},
		{"past the end of each slice of a universal Mach-O", fat, "past the end of the Mach-O image", -1, 2},
		{"past the end of an ELF shared object", withLine("libz-appended.so", so), "outside every PT_LOAD segment of the ELF image", -1, 1},
		{"in an ELF section no segment maps", nonAlloc("libz-note.so", so), "outside every PT_LOAD segment of the ELF image", -1, 1},
		{"in an ELF object's section the linker does not take", lib, "outside every allocated section of the ELF file", -1, 1},
		{"inside the image: evidence", inside, "", -1, 1},
	} {
		for _, strict := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/strict=%v", tc.name, strict), func(t *testing.T) {
				res, err := Check(context.Background(), Options{Path: tc.path, Strict: strict, Now: dec1})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("failures %q; notes %q", res.Failures, res.Notes)
				if tc.where == "" {
					s := res.Binaries[0].Slices[0]
					if !res.OK || s.Compiler != appendedLine[len("compiler: "):] || s.Opt != "-O3" || len(s.Unmapped) > 0 {
						t.Errorf("ok %v, compiler %q, opt %q, unmapped %+v: want the line inside the image judged -O3", res.OK, s.Compiler, s.Opt, s.Unmapped)
					}
					return
				}
				if res.OK || !strings.Contains(strings.Join(res.Failures, "\n"), "no OpenSSL build information") {
					t.Errorf("ok %v, failures %q: want nothing judged", res.OK, res.Failures)
				}
				data, err := os.ReadFile(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				at := int64(bytes.Index(data, []byte(appendedLine)))
				slices := res.Binaries[0].Slices
				if len(slices) != tc.archs {
					t.Fatalf("%d slices, want %d", len(slices), tc.archs)
				}
				for _, s := range slices {
					if s.Compiler != "" || s.OptStatus != "none" || len(s.Unmapped) != 1 {
						t.Fatalf("%s: compiler %q, opt status %q, unmapped %+v: want no evidence and one unmapped run", s.Arch, s.Compiler, s.OptStatus, s.Unmapped)
					}
					u := s.Unmapped[0]
					if !strings.Contains(u.Where, tc.where) || len(u.Strings) != 1 || u.Strings[0] != appendedLine || u.End <= u.Start ||
						tc.start >= 0 && (u.Start != tc.start || u.End != size(tc.path)) {
						t.Errorf("%s: unmapped %+v: want %q holding the line", s.Arch, u, tc.where)
					}
					if tc.archs == 1 && (at < u.Start || at+int64(len(appendedLine)) > u.End) {
						t.Errorf("unmapped %d-%d does not hold the line at %d", u.Start, u.End, at)
					}
					note := fmt.Sprintf("%s: bytes %d-%d, %s, hold %q: nothing loads these bytes, so they are no evidence", s.Arch, u.Start, u.End, u.Where, appendedLine)
					found := false
					for _, n := range res.Notes {
						found = found || strings.HasPrefix(n, tc.path) && strings.Contains(n, note)
					}
					if !found {
						t.Errorf("no note names %s and %q: %q", tc.path, note, res.Notes)
					}
				}
				// -json carries the runs.
				var buf bytes.Buffer
				if err := report.JSON(&buf, res); err != nil {
					t.Fatal(err)
				}
				var doc struct {
					Binaries []struct {
						Slices []struct {
							Unmapped []struct {
								Start, End int64
								Where      string
								Strings    []string
							} `json:"unmapped"`
						} `json:"slices"`
					} `json:"binaries"`
				}
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				if u := doc.Binaries[0].Slices[0].Unmapped; len(u) != 1 || u[0].Strings[0] != appendedLine || u[0].End != slices[0].Unmapped[0].End {
					t.Errorf("-json unmapped %+v", u)
				}
			})
		}
	}
}

// TestUnmappedRealWorld: the case of issue 40 on a real binary nobody here
// built: libsql's Node-API module (a thin arm64 Mach-O with no OpenSSL)
// with OpenSSL's compiler line appended past its end. 5392f1f's code
// passed it as OpenSSL at -O3, -strict included.
func TestUnmappedRealWorld(t *testing.T) {
	orig := testfixture.RealworldFile(t, "@libsql/darwin-arm64", "0.5.29", "package/index.node")
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	p := testfixture.CopyBytes(t, append(data, "\x00"+appendedLine+"\x00"...), filepath.Join(t.TempDir(), "index.node"))
	for _, strict := range []bool{false, true} {
		res, err := Check(context.Background(), Options{Path: p, Strict: strict, Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		note := fmt.Sprintf("%s arm64: bytes %d-%d, past the end of the Mach-O image (its last segment ends at byte %d), hold %q: nothing loads these bytes", p, len(data), len(data)+len(appendedLine)+2, len(data), appendedLine)
		if res.OK || !strings.Contains(strings.Join(res.Failures, "\n"), "no OpenSSL build information") || !slices.Contains(res.Notes, note+", so they are no evidence") {
			t.Errorf("-strict=%v: ok %v, failures %q, notes %q: want nothing judged and the note %q", strict, res.OK, res.Failures, res.Notes, note)
		}
	}
}

// TestUnmappedCodeIsNoEvidence: machine code counts only where the loader
// maps it. An -O0 library under an -O3 line beside optimised code that
// never runs is still -O0, and the contradiction fails it: an ELF object
// (gcc -O0) given a section of gcc -O2 code without SHF_ALLOC, with its
// function symbols (llvm-objcopy-14), and a linked x86_64 dylib (clang-14
// -O0, ld64.lld-14) whose __text header points past __LINKEDIT at -O2 code
// appended there, while __TEXT still maps the -O0 code at its address.
// On 5392f1f's code both passed as optimised.
func TestUnmappedCodeIsNoEvidence(t *testing.T) {
	k := newKit(t)
	testfixture.Tools(t, "llvm-objcopy-14", "nm")
	const lineGccO3 = "gcc -fPIC -pthread -m64 -Wall -O3 -DOPENSSL_PIC"
	// ELF: the optimised code's bytes and symbols, added to the -O0 object.
	opt := k.elf("hot.o", strings.ReplaceAll(manyFuncs(80), "int f", "int hot_f"), "-O2", "-c")
	hot := k.path("hot.bin")
	testfixture.RunIn(t, k.dir, "llvm-objcopy-14", "-O", "binary", "--only-section=.text", opt, hot)
	args := []string{"llvm-objcopy-14", "--add-section", ".text.hot=" + hot, "--set-section-flags", ".text.hot=code,readonly,contents"}
	nm, err := exec.Command("nm", "--defined-only", opt).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(nm)), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "T" {
			args = append(args, "--add-symbol", f[2]+"=.text.hot:0x"+f[0]+",function,global")
		}
	}
	o0 := k.elf("cold.o", manyFuncs(40), "-O0", "-c")
	args = append(args, o0, k.path("cold-hot.o"))
	testfixture.RunIn(t, k.dir, args...)
	elfLib := k.ar("libcrypto-hot.a", false, k.elf("cv.o", cversion(lineGccO3, "linux-x86_64"), "-O3", "-c"), k.path("cold-hot.o"))

	// Mach-O: the -O0 dylib with its __text header pointed at -O2 code.
	// x86_64: ld64.lld-14 signs arm64 output, which the change would
	// leave stale (a failure of its own).
	x86 := "x86_64-apple-macos11"
	cold := k.dylib("libcrypto-cold.dylib", "x86_64", k.macho("cold.o", x86, cversion(lineX86O3, "darwin64-x86_64-cc")+manyFuncs(60)))
	warm := k.dylib("libcrypto-warm.dylib", "x86_64", k.optimisedProgram("warm.o", x86, ""))
	b, err := os.ReadFile(cold)
	if err != nil {
		t.Fatal(err)
	}
	textHdr := func(b []byte) (hdr int, off, size uint64) {
		name := make([]byte, 32)
		copy(name, "__text")
		copy(name[16:], "__TEXT")
		hdr = bytes.Index(b, name)
		if hdr < 0 {
			t.Fatal("no __TEXT,__text section header")
		}
		return hdr, uint64(binary.LittleEndian.Uint32(b[hdr+48:])), binary.LittleEndian.Uint64(b[hdr+40:])
	}
	hdr, _, size := textHdr(b)
	wb, err := os.ReadFile(warm)
	if err != nil {
		t.Fatal(err)
	}
	_, woff, wsize := textHdr(wb)
	at := (len(b) + 15) &^ 15
	patched := append(b, make([]byte, at-len(b))...)
	for uint64(len(patched)-at) < size {
		patched = append(patched, wb[woff:woff+wsize]...)
	}
	binary.LittleEndian.PutUint32(patched[hdr+48:], uint32(at))
	machoLib := testfixture.CopyBytes(t, patched, k.path("libcrypto-redirected.dylib"))

	for _, tc := range []struct{ name, path string }{
		{"an ELF section without SHF_ALLOC", elfLib},
		{"a Mach-O __text header pointing past the image", machoLib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(context.Background(), Options{Path: tc.path, MinOpt: "3"})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Binaries[0].Slices[0]
			t.Logf("code %+v; failures %q", s.Code, res.Failures)
			if res.OK || s.Code == nil || s.Code.Class != "-O0-like" ||
				!strings.Contains(strings.Join(res.Failures, "\n"), "compiler line says -O3 but the machine code looks -O0") {
				t.Errorf("ok %v, code %+v, failures %q: want the -O0 code that runs, contradicting the line", res.OK, s.Code, res.Failures)
			}
		})
	}
}
