package validate_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// linkDylib compiles a libcrypto-shaped C file for arch at minos and links
// it with ld64.lld-14 into dir/name with install name id, linking extra
// (other dylibs, flags) too; returns the path.
func linkDylib(t *testing.T, dir, arch, minos, name, id string, extra ...string) string {
	t.Helper()
	testfixture.Tools(t, "clang-14", "ld64.lld-14")
	stub := filepath.Join(toolchain.HeadersDir(), "darwin", "libSystem.11.tbd")
	if _, err := os.Stat(stub); err != nil {
		testfixture.Missing(t, "%v (scripts/setup-cross.sh)", err)
	}
	src := filepath.Join(dir, name+".c")
	code := "static const char compiler_flags[] = \"compiler: cc -fPIC -arch " + arch + " -O3 -Wall -mmacosx-version-min=" + minos + "\";\n" +
		"const char *OpenSSL_version_text(void){return compiler_flags;}\n"
	for i := 0; i < 300; i++ {
		code += "int CRYPTO_f" + strconv.Itoa(i) + "(int x){return x*" + strconv.Itoa(i+3) + "+1;}\n"
	}
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, out := filepath.Join(dir, name+".o"), filepath.Join(dir, name)
	for _, argv := range [][]string{
		{"clang-14", "-target", arch + "-apple-macos" + minos, "-O2", "-c", src, "-o", obj},
		append([]string{"ld64.lld-14", "-arch", arch, "-platform_version", "macos", minos, "11.0", "-dylib", "-install_name", id, "-o", out, obj, stub}, extra...),
	} {
		if b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, b)
		}
	}
	return out
}

// TestDylibRules: a dylib the build made is held to its install name, its
// dependencies (libSystem and the sibling, by their expected names), no
// run path, no build path, its deployment target and CPU, and on arm64 a
// code signature whose hashes hold: each broken one is named.
func TestDylibRules(t *testing.T) {
	dir := t.TempDir()
	slice := platform.Slice{Name: "arm64", OS: "macos", Arch: "arm64", MinOS: "11.0", Configure: "darwin64-arm64-cc", Flags: []string{"-mmacosx-version-min=11.0"}}
	exp := validate.Expect{Slice: slice}
	d := validate.DylibExpect{InstallName: "@rpath/libcrypto.3.dylib", Loads: []string{"/usr/lib/libSystem.B.dylib"}, Forbidden: []string{"/build/work-1234"}}
	good := linkDylib(t, dir, "arm64", "11.0", "good.dylib", "@rpath/libcrypto.3.dylib")
	if rep, err := validate.Dylib(context.Background(), good, []validate.Expect{exp}, d); err != nil {
		t.Fatalf("a good dylib: %v\n%+v", err, rep.Violations)
	}
	other := linkDylib(t, dir, "arm64", "11.0", "libz.1.dylib", "/usr/local/lib/libz.1.dylib")

	flip := func(name string, at func(m *inspect.MachO) int) string {
		b, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		m, err := inspect.ParseMachOBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		b[at(m)] ^= 0x01
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o755)
		return p
	}
	text := func(m *inspect.MachO) int {
		for _, s := range m.Sections {
			if s.Name == "__text" {
				return int(s.Offset) + int(s.Size)/2
			}
		}
		t.Fatal("no __text")
		return 0
	}
	codeDir := func(m *inspect.MachO) int {
		b, _ := os.ReadFile(good)
		at := int(m.CodeSignature.Offset) + bytes.Index(b[m.CodeSignature.Offset:], []byte{0xfa, 0xde, 0x0c, 0x02})
		hashOffset := int(b[at+16])<<24 | int(b[at+17])<<16 | int(b[at+18])<<8 | int(b[at+19])
		return at + hashOffset
	}
	for _, tt := range []struct {
		name, path string
		exp        validate.Expect
		rule       validate.Rule
		want       string
	}{
		{"install name in the build directory", linkDylib(t, dir, "arm64", "11.0", "built.dylib", "/build/work-1234/lib/libcrypto.3.dylib"), exp, validate.RuleInstallName, "install name is /build/work-1234/lib/libcrypto.3.dylib, expected @rpath/libcrypto.3.dylib"},
		{"build path anywhere", linkDylib(t, dir, "arm64", "11.0", "built2.dylib", "/build/work-1234/lib/libcrypto.3.dylib"), exp, validate.RuleBuildPath, "names the build directory /build/work-1234"},
		{"extra dependency", linkDylib(t, dir, "arm64", "11.0", "extra.dylib", "@rpath/libcrypto.3.dylib", other), exp, validate.RuleDependency, "LC_LOAD_DYLIB /usr/local/lib/libz.1.dylib"},
		{"run path", linkDylib(t, dir, "arm64", "11.0", "rpath.dylib", "@rpath/libcrypto.3.dylib", "-rpath", "/opt/x"), exp, validate.RuleDependency, "LC_RPATH /opt/x"},
		{"wrong minos", linkDylib(t, dir, "arm64", "12.0", "minos.dylib", "@rpath/libcrypto.3.dylib"), exp, validate.RuleDeployment, "12.0"},
		{"stale signature: __TEXT", flip("text.dylib", text), exp, validate.RuleCodeSignature, "changed after signing"},
		{"stale signature: code directory", flip("cd.dylib", codeDir), exp, validate.RuleCodeSignature, "page 0"},
		{"unsigned arm64", linkDylib(t, dir, "arm64", "11.0", "nosig.dylib", "@rpath/libcrypto.3.dylib", "-no_adhoc_codesign"), exp, validate.RuleCodeSignature, "no code signature"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := validate.Dylib(context.Background(), tt.path, []validate.Expect{tt.exp}, d)
			if err == nil {
				t.Fatalf("accepted")
			}
			found := false
			for _, v := range rep.Violations {
				if v.Rule == tt.rule && strings.Contains(v.String(), tt.want) && v.Library == filepath.Base(tt.path) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s violation saying %q, naming %s: %v", tt.rule, tt.want, filepath.Base(tt.path), rep.Violations)
			}
		})
	}

	// x86_64 needs no signature; an unsigned arm64 dylib fails.
	x86 := linkDylib(t, dir, "x86_64", "10.12", "x86.dylib", "@rpath/libcrypto.3.dylib")
	xs := slice
	xs.Arch, xs.MinOS, xs.Flags = "x86_64", "10.12", []string{"-mmacosx-version-min=10.12"}
	if rep, err := validate.Dylib(context.Background(), x86, []validate.Expect{{Slice: xs}}, d); err != nil {
		t.Errorf("an unsigned x86_64 dylib: %v %v", err, rep.Violations)
	}
}
