package inspect_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// signedDylib links a small arm64 dylib with ld64.lld-14, which signs
// arm64 output ad hoc as Apple's linker does, and returns its bytes.
func signedDylib(t *testing.T, arch, minOS string) []byte {
	t.Helper()
	testfixture.Tools(t, "clang-14", "ld64.lld-14")
	stubs, _ := filepath.Glob(filepath.Join(toolchain.HeadersDir(), "darwin", "libSystem.11.tbd"))
	if len(stubs) == 0 {
		testfixture.Missing(t, "no libSystem.11.tbd under %s (scripts/setup-cross.sh)", toolchain.HeadersDir())
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	// Several pages of code, so a flip lands in a page of its own.
	code := "int foo(int x){return x*3;}\nint bar(void){return foo(2);}\n"
	for i := 0; i < 400; i++ {
		code += "int f" + strconv.Itoa(i) + "(int x){return x*" + strconv.Itoa(i+7) + "+foo(x);}\n"
	}
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, out := filepath.Join(dir, "a.o"), filepath.Join(dir, "liba.1.dylib")
	for _, argv := range [][]string{
		{"clang-14", "-target", arch + "-apple-macos" + minOS, "-O2", "-c", src, "-o", obj},
		{"ld64.lld-14", "-arch", arch, "-platform_version", "macos", minOS, "11.0", "-dylib", "-install_name", "/opt/x/lib/liba.1.dylib", "-o", out, obj, stubs[0]},
	} {
		if b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, b)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signature(t *testing.T, b []byte) (*inspect.MachO, *inspect.CodeSignature, error) {
	t.Helper()
	m, err := inspect.ParseMachOBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := inspect.ReadCodeSignature(bytes.NewReader(b), 0, m)
	return m, cs, err
}

// TestCodeSignature: ld64.lld's ad-hoc signature of a real arm64 dylib
// verifies; a byte flipped in __TEXT, or in the code directory's hashes,
// makes it stale (naming the page); Resign makes it hold again, and on an
// image it already holds for changes no byte (the hashes are the
// linker's); an x86_64 dylib carries none.
func TestCodeSignature(t *testing.T) {
	orig := signedDylib(t, "arm64", "11.0")
	m, cs, err := signature(t, orig)
	if err != nil || cs == nil {
		t.Fatalf("signature %+v, %v", cs, err)
	}
	if !cs.Valid() || cs.Kind() != "ad hoc (linker-signed)" || cs.HashType != "sha256" || cs.PageSize != 4096 || cs.Identifier != "liba.1.dylib" {
		t.Errorf("ld64.lld's signature: %+v (%s)", cs, cs.Kind())
	}
	if m.ID == nil || m.ID.Name != "/opt/x/lib/liba.1.dylib" || !slices.ContainsFunc(m.Loads, func(d inspect.Dylib) bool { return d.Name == "/usr/lib/libSystem.B.dylib" }) {
		t.Errorf("install name %+v, loads %+v", m.ID, m.Loads)
	}

	var text inspect.Section
	for _, s := range m.Sections {
		if s.Name == "__text" {
			text = s
		}
	}
	tampered := bytes.Clone(orig)
	at := int(text.Offset) + int(text.Size)/2
	tampered[at] ^= 0x01
	if _, cs, err := signature(t, tampered); err != nil || cs.Valid() || !slices.Contains(cs.Stale, at/4096) {
		t.Errorf("a byte flipped in __TEXT at %d: %+v, %v", at, cs, err)
	}
	again := bytes.Clone(tampered)
	if err := inspect.Resign(again, 0, m); err != nil {
		t.Fatal(err)
	}
	if _, cs, err := signature(t, again); err != nil || !cs.Valid() {
		t.Errorf("after Resign: %+v, %v", cs, err)
	}
	same := bytes.Clone(orig)
	if err := inspect.Resign(same, 0, m); err != nil || !bytes.Equal(same, orig) {
		t.Errorf("Resign of a valid image changed it (%v)", err)
	}

	// A flip inside the code directory's first page hash.
	cd := bytes.Clone(orig)
	slot := bytes.Index(cd[m.CodeSignature.Offset:], []byte{0xfa, 0xde, 0x0c, 0x02})
	hashOffset := int(cd[int(m.CodeSignature.Offset)+slot+16])<<24 | int(cd[int(m.CodeSignature.Offset)+slot+17])<<16 | int(cd[int(m.CodeSignature.Offset)+slot+18])<<8 | int(cd[int(m.CodeSignature.Offset)+slot+19])
	cd[int(m.CodeSignature.Offset)+slot+hashOffset] ^= 0x80
	if _, cs, err := signature(t, cd); err != nil || cs.Valid() || !slices.Contains(cs.Stale, 0) {
		t.Errorf("a byte flipped in the code directory's hashes: %+v, %v", cs, err)
	}
	// A flip in its magic: malformed.
	mag := bytes.Clone(orig)
	mag[int(m.CodeSignature.Offset)+slot] ^= 0xff
	if _, _, err := signature(t, mag); !errors.Is(err, inspect.ErrSignature) {
		t.Errorf("a broken code directory magic: %v", err)
	}

	// llvm-install-name-tool-14 re-signs what it rewrites.
	if _, err := exec.LookPath("llvm-install-name-tool-14"); err == nil {
		p := filepath.Join(t.TempDir(), "liba.1.dylib")
		os.WriteFile(p, orig, 0o755)
		if b, err := exec.Command("llvm-install-name-tool-14", "-id", "@rpath/liba.1.dylib", p).CombinedOutput(); err != nil {
			t.Fatalf("llvm-install-name-tool-14: %v\n%s", err, b)
		}
		b, _ := os.ReadFile(p)
		m2, cs, err := signature(t, b)
		if err != nil || !cs.Valid() || m2.ID.Name != "@rpath/liba.1.dylib" {
			t.Errorf("after llvm-install-name-tool-14 -id: %+v %+v, %v", m2.ID, cs, err)
		}
	}

	x86 := signedDylib(t, "x86_64", "10.12")
	if _, cs, err := signature(t, x86); cs != nil || err != nil {
		t.Errorf("x86_64 dylib signature %+v, %v: ld64.lld signs only arm64", cs, err)
	}
}
