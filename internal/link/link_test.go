package link_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

func cross(t *testing.T) toolchain.Toolchain {
	t.Helper()
	testfixture.NeedTier(t, testfixture.TierGate, "the cross toolchain")
	testfixture.On(t, testfixture.LinuxCross)
	tc, err := toolchain.New("cross")
	if err != nil {
		testfixture.Missing(t, "%v", err)
	}
	return tc
}

// tinyArtifact is an artifact tree whose libcrypto.a holds one object,
// compiled for triple from src, and whose libssl.a holds an empty one: a
// stand-in small enough to show what the linker does with one symbol.
func tinyArtifact(t *testing.T, triple, src string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"include/openssl", "lib", "obj"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "include/openssl/ssl.h"), nil, 0o644)
	for lib, code := range map[string]string{"libcrypto": src, "libssl": "int tiny_ssl;\n"} {
		c := filepath.Join(dir, "obj", lib+"-f.c")
		o := strings.TrimSuffix(c, ".c") + ".o"
		os.WriteFile(c, []byte(code), 0o644)
		for _, args := range [][]string{
			{"clang-14", "-target", triple, "-c", "-o", o, c},
			{"llvm-ar-14", "rc", filepath.Join(dir, "lib", lib+".a"), o},
		} {
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
		}
	}
	os.RemoveAll(filepath.Join(dir, "obj"))
	return dir
}

var tinyMain = link.Program{Name: "main.c", Source: []byte("int main(void) { return 0; }\n")}

// TestDeploymentTarget is pyca/cryptography#5215 in miniature: an object
// in libcrypto.a calls ___chkstk_darwin, which macOS has from 10.15. Linked
// for 10.12 (every member loaded: nothing calls the function) it fails,
// naming the symbol, the object and the first macOS that has it; for 10.15
// it links.
func TestDeploymentTarget(t *testing.T) {
	tc := cross(t)
	src := "extern void __chkstk_darwin(void);\nvoid probe(void) { __chkstk_darwin(); }\n"
	dir := tinyArtifact(t, "x86_64-apple-macos10.12", src)
	ctx := context.Background()

	_, err := link.Check(ctx, tc, link.Options{Dir: dir, Program: tinyMain, Work: t.TempDir(),
		Slices: []platform.Slice{{OS: "macos", Arch: "x86_64", MinOS: "10.12"}}})
	if !errors.Is(err, link.ErrNeedsNewerOS) || !errors.Is(err, link.ErrUndefined) {
		t.Fatalf("linked for 10.12: got %v, want a needs-newer-macOS error", err)
	}
	for _, want := range []string{"x86_64 (macOS 10.12)", "___chkstk_darwin", "libcrypto.a(libcrypto-f.o)", "needs macOS 10.15 or later", "hides it for macOS 10.6 to 10.14"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}

	checks, err := link.Check(ctx, tc, link.Options{Dir: dir, Program: tinyMain, Work: t.TempDir(),
		Slices: []platform.Slice{{OS: "macos", Arch: "x86_64", MinOS: "10.15"}}})
	if err != nil {
		t.Fatalf("linked for 10.15: %v", err)
	}
	c := checks[0]
	if c.Platform != "macos 10.15" || c.System != "libSystem.11.tbd from npm "+toolchain.HeadersPackage ||
		!strings.HasPrefix(c.Linker, "ld64.lld-14 (") || len(c.SystemSHA256) != 64 || c.Members != 2 || c.Note == "" {
		t.Errorf("record %+v", c)
	}
	if !strings.Contains(c.Note, "no libSystem stub for macOS 10.15") {
		t.Errorf("note %q does not say that no stub covers 10.15", c.Note)
	}
}

// TestUndefinedSymbol: a member using a symbol nothing defines is refused
// although the program never calls it, because every member is loaded.
func TestUndefinedSymbol(t *testing.T) {
	tc := cross(t)
	dir := tinyArtifact(t, "arm64-apple-macos11.0", "extern int OSSL_gone(void);\nint uses(void) { return OSSL_gone(); }\n")
	_, err := link.Check(context.Background(), tc, link.Options{Dir: dir, Program: tinyMain, Work: t.TempDir(),
		Slices: []platform.Slice{{OS: "macos", Arch: "arm64", MinOS: "11.0"}}})
	if !errors.Is(err, link.ErrUndefined) || errors.Is(err, link.ErrNeedsNewerOS) {
		t.Fatalf("got %v, want an undefined-symbol error", err)
	}
	if !strings.Contains(err.Error(), "undefined symbol _OSSL_gone, referenced by libcrypto.a(libcrypto-f.o)") {
		t.Errorf("error does not name the symbol and object: %v", err)
	}
}

func TestMissingLibrary(t *testing.T) {
	tc := cross(t)
	dir := tinyArtifact(t, "arm64-apple-macos11.0", "int f(void) { return 1; }\n")
	os.Remove(filepath.Join(dir, "lib", "libssl.a"))
	_, err := link.Check(context.Background(), tc, link.Options{Dir: dir, Program: tinyMain,
		Slices: []platform.Slice{{OS: "macos", Arch: "arm64", MinOS: "11.0"}}})
	if !errors.Is(err, link.ErrMissingLibrary) || !strings.Contains(err.Error(), "lib/libssl.a") {
		t.Errorf("got %v, want a missing-library error naming lib/libssl.a", err)
	}
}

func toolchainFor(t *testing.T, s platform.Slice) toolchain.Toolchain {
	t.Helper()
	if s.OS == "macos" {
		return cross(t)
	}
	tc, err := toolchain.For("", s)
	if err != nil {
		testfixture.Missing(t, "%v", err)
	}
	return tc
}
