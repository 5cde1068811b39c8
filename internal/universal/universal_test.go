package universal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

type sliceSpec struct {
	arch, triple, configure, minOS string
	flags                          []string
	opt                            string // -O flag in the embedded compiler line ("" = none)
	version                        string
	header                         string // content of include/openssl/configuration.h
	options                        []string
	// funcs functions compiled at codeOpt go into both libraries, so the
	// code classifier has enough to judge (0: too little evidence).
	funcs   int
	codeOpt string
}

func defaults(arch string) sliceSpec {
	if arch == "arm64" {
		return sliceSpec{arch: "arm64", triple: "arm64-apple-macos11", configure: "darwin64-arm64-cc", minOS: "11.0",
			flags: []string{"-mmacosx-version-min=11.0"}, opt: "-O3", version: "4.0.2", header: "#define X 1\n"}
	}
	return sliceSpec{arch: "x86_64", triple: "x86_64-apple-macos10.12", configure: "darwin64-x86_64-cc", minOS: "10.12",
		flags: []string{"-mmacosx-version-min=10.12", "-march=core2"}, opt: "-O3", version: "4.0.2", header: "#define X 1\n"}
}

// funcsSource is C with n functions that keep arguments and locals: at -O0
// each spills and reloads them, optimised none does.
func funcsSource(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "int %s%d(int a, int b, const int *p) { int s = 0; for (int i = 0; i < a; i++) s += p[i] * b + %d; return s ^ a; }\n", prefix, i, i)
	}
	return b.String()
}

func tools(t *testing.T) toolchain.Toolchain {
	t.Helper()
	testfixture.NeedTier(t, testfixture.TierGate, "the cross toolchain")
	testfixture.On(t, testfixture.LinuxCross)
	tc, err := toolchain.New("cross")
	if err != nil {
		testfixture.Missing(t, "%v", err)
	}
	return tc
}

// makeSlice writes a small but real slice artifact: libraries of objects
// compiled for the arch, carrying OpenSSL-style build-info strings.
func makeSlice(t *testing.T, s sliceSpec) Slice {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"lib/pkgconfig", "include/openssl"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	line := "compiler: cc -fPIC -arch " + s.arch
	if s.opt != "" {
		line += " " + s.opt
	}
	line += " -Wall " + strings.Join(s.flags, " ") + " -DNDEBUG"
	src := filepath.Join(dir, "cversion.c")
	os.WriteFile(src, []byte(`const char *c = "`+line+`"; const char *p = "platform: `+s.configure+`"; const char *v = "OpenSSL 4.0.2 1 Jul 2026"; int f(void){return 1;}`), 0o644)
	src2 := filepath.Join(dir, "ssl.c")
	os.WriteFile(src2, []byte(`int g(void){return 2;}`), 0o644)
	for _, c := range []struct{ src, obj, lib string }{{src, "libcrypto-lib-cversion.o", "libcrypto.a"}, {src2, "libssl-lib-s.o", "libssl.a"}} {
		objs := []string{filepath.Join(t.TempDir(), c.obj)}
		testfixture.Run(t, "clang-14", "-target", s.triple, "-c", "-o", objs[0], c.src)
		if s.funcs > 0 {
			fsrc := filepath.Join(t.TempDir(), "funcs.c")
			os.WriteFile(fsrc, []byte(funcsSource(strings.TrimSuffix(c.lib, ".a")+"_f", s.funcs)), 0o644)
			objs = append(objs, strings.TrimSuffix(objs[0], ".o")+"-funcs.o")
			// Compiled with the -march its line claims, as a build is:
			// clang-14's default for x86_64 macOS is penryn (SSE4.1).
			args := []string{"clang-14", "-target", s.triple, "-ffreestanding", s.codeOpt}
			for _, f := range s.flags {
				if strings.HasPrefix(f, "-march=") {
					args = append(args, f)
				}
			}
			testfixture.Run(t, append(args, "-c", "-o", objs[1], fsrc)...)
		}
		testfixture.Run(t, append([]string{"llvm-ar-14", "rcs", filepath.Join(dir, "lib", c.lib)}, objs...)...)
	}
	os.Remove(src)
	os.Remove(src2)
	os.WriteFile(filepath.Join(dir, "include/openssl/configuration.h"), []byte(s.header), 0o644)
	os.WriteFile(filepath.Join(dir, "include/openssl/ssl.h"), []byte("/* same */\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "lib/pkgconfig/libcrypto.pc"), []byte("prefix=${pcfiledir}/../..\n"), 0o644)
	// Each slice carries its own SBOM, which differs; merge must not care.
	os.WriteFile(filepath.Join(dir, "sbom.json"), []byte(`{"arch":"`+s.arch+`"}`), 0o644)
	m := &artifact.Manifest{
		Name:    "openssl-macos-" + s.arch,
		Recipe:  artifact.RecipeRef{Name: "openssl", SHA256: "r"},
		OpenSSL: artifact.Source{Version: s.version, SHA256: "src-" + s.version},
		Target:  platform.Slice{Name: s.arch, Configure: s.configure, OS: "macos", Arch: s.arch, MinOS: s.minOS, Flags: s.flags, Options: s.options},
	}
	if err := artifact.WriteManifest(context.Background(), dir, m); err != nil {
		t.Fatal(err)
	}
	return Slice{Dir: dir, Manifest: m}
}

// mergeAs merges as an osslbuild whose own record of the release and
// patches is a's (test slices are not built from a recipe).
func mergeAs(tc toolchain.Toolchain, a, b Slice, dst string, dispatch []string) (*artifact.Manifest, error) {
	return Merge(context.Background(), tc, a, b, dst, dispatch, Provenance{Osslbuild: "merging osslbuild", OpenSSL: a.Manifest.OpenSSL, Patches: a.Manifest.Patches})
}

// TestMergeRecordsClaims: the universal manifest states the merging
// osslbuild's facts as its own and each slice's unverifiable records (the
// osslbuild, toolchain and recipe that built it, its source's origin) as
// that slice's claims; slices patched otherwise than the merging osslbuild
// patches the release are refused.
func TestMergeRecordsClaims(t *testing.T) {
	tc := tools(t)
	arm, x86 := makeSlice(t, defaults("arm64")), makeSlice(t, defaults("x86_64"))
	arm.Manifest.Osslbuild, x86.Manifest.Osslbuild = "made-up revision", "another"
	m, err := mergeAs(tc, arm, x86, filepath.Join(t.TempDir(), Name), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Osslbuild != "merging osslbuild" {
		t.Errorf("universal manifest names osslbuild %q, want the merging one", m.Osslbuild)
	}
	for _, s := range m.Slices {
		if s.Osslbuild != "" || s.Recipe != (artifact.RecipeRef{}) || s.Claims == nil || s.Claims.Recipe.SHA256 != "r" {
			t.Errorf("%s slice: osslbuild %q recipe %+v claims %+v", s.Target.Arch, s.Osslbuild, s.Recipe, s.Claims)
		}
	}
	if got := []string{m.Slices[0].Claims.Osslbuild, m.Slices[1].Claims.Osslbuild}; got[0] != "another" || got[1] != "made-up revision" {
		t.Errorf("claimed revisions %q, want each slice's own", got)
	}
	x86.Manifest.Patches = []artifact.Patch{{Name: "evil.patch", SHA256: "00"}}
	if _, err := mergeAs(tc, arm, x86, filepath.Join(t.TempDir(), Name), nil); !errors.Is(err, ErrRefused) {
		t.Errorf("slices patched unlike each other merged: %v", err)
	}
	p := Provenance{OpenSSL: arm.Manifest.OpenSSL, Patches: []artifact.Patch{{Name: "fix.patch", SHA256: "11"}}}
	x86.Manifest.Patches = nil
	if _, err := Merge(context.Background(), tc, arm, x86, filepath.Join(t.TempDir(), Name), nil, p); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "this osslbuild applies") {
		t.Errorf("slices without the patches this osslbuild applies: %v", err)
	}
}

func TestMergeGood(t *testing.T) {
	tc := tools(t)
	as, xs := defaults("arm64"), defaults("x86_64")
	as.funcs, as.codeOpt, xs.funcs, xs.codeOpt = 40, "-O2", 40, "-O2"
	arm, x86 := makeSlice(t, as), makeSlice(t, xs)
	dst := filepath.Join(t.TempDir(), Name)
	m, err := mergeAs(tc, arm, x86, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Read the fat header back with our parser and with llvm-lipo.
	f, err := inspect.Inspect(filepath.Join(dst, "lib", "libcrypto.a"))
	if err != nil {
		t.Fatal(err)
	}
	var archs []string
	for _, s := range f.Slices {
		archs = append(archs, s.Arch)
	}
	if strings.Join(archs, ",") != "x86_64,arm64" {
		t.Errorf("slices = %v", archs)
	}
	out, err := exec.Command("llvm-lipo-14", "-info", filepath.Join(dst, "lib", "libssl.a")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "x86_64 arm64") {
		t.Errorf("llvm-lipo -info: %s %v", out, err)
	}
	if len(m.Slices) != 2 || len(m.CompilerLines) != 2 || len(m.HeaderDispatch) != 0 {
		t.Errorf("manifest: slices %d, compiler lines %d, dispatch %v", len(m.Slices), len(m.CompilerLines), m.HeaderDispatch)
	}
	// The merged libraries' own code evidence: each library, each arch,
	// in the fat file's order, optimised.
	var got []string
	for _, c := range m.CodeEvidence {
		got = append(got, fmt.Sprintf("%s %s %s %d", c.Library, c.Arch, c.Class, c.Functions))
	}
	want := []string{"libcrypto.a x86_64 optimised 41", "libcrypto.a arm64 optimised 41", "libssl.a x86_64 optimised 41", "libssl.a arm64 optimised 41"}
	if !slices.Equal(got, want) {
		t.Errorf("code evidence %q, want %q", got, want)
	}
	// Merging the same inputs again gives the same files.
	dst2 := filepath.Join(t.TempDir(), Name)
	if _, err := mergeAs(tc, x86, arm, dst2, nil); err != nil {
		t.Fatal(err)
	}
	h1, _ := artifact.HashTree(context.Background(), dst)
	h2, _ := artifact.HashTree(context.Background(), dst2)
	for k, v := range h1 {
		if h2[k] != v {
			t.Errorf("%s differs between two merges (input order swapped)", k)
		}
	}
}

func TestMergeRefuses(t *testing.T) {
	tc := tools(t)
	tests := []struct {
		name     string
		arm, x86 func(*sliceSpec)
		sameArch bool
		wantIn   string
	}{
		{name: "same arch twice", sameArch: true, wantIn: "both slices are arm64"},
		{name: "version mismatch", x86: func(s *sliceSpec) { s.version = "3.5.7" }, wantIn: "OpenSSL versions differ"},
		{name: "O0 slice", arm: func(s *sliceSpec) { s.opt = "" }, wantIn: "-O0"},
		{name: "O2 slice", x86: func(s *sliceSpec) { s.opt = "-O2" }, wantIn: "-O2"},
		{name: "options differ", x86: func(s *sliceSpec) { s.options = []string{"no-zlib"} }, wantIn: "option sets differ: [] vs [no-zlib]"},
		{name: "wrong minos", arm: func(s *sliceSpec) { s.triple = "arm64-apple-macos12" }, wantIn: "12.0"},
		{name: "line -O3, code -O0", x86: func(s *sliceSpec) { s.funcs, s.codeOpt = 40, "-O0" },
			wantIn: "compiler line says -O3 but the machine code looks -O0 (score 0."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as, xs := defaults("arm64"), defaults("x86_64")
			if tt.arm != nil {
				tt.arm(&as)
			}
			if tt.x86 != nil {
				tt.x86(&xs)
			}
			if tt.sameArch {
				xs = as
			}
			dst := filepath.Join(t.TempDir(), Name)
			_, err := mergeAs(tc, makeSlice(t, as), makeSlice(t, xs), dst, nil)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Fatalf("want ErrRefused mentioning %q, got %v", tt.wantIn, err)
			}
			if _, err := os.Stat(dst); err == nil {
				t.Errorf("a refused merge left %s behind", dst)
			}
		})
	}
}

// TestHeaderDispatch: when a public header differs (as configuration.h does
// with enable-ec_nistp_64_gcc_128 on x86_64 only), the merged header selects
// each architecture's version, and a compile for each arch sees its own.
func TestHeaderDispatch(t *testing.T) {
	tc := tools(t)
	as, xs := defaults("arm64"), defaults("x86_64")
	as.header = "#ifndef CONF_H\n#define CONF_H\n# define OSSL_ARCH_VALUE 64\n#endif\n"
	xs.header = "#ifndef CONF_H\n#define CONF_H\n# define OSSL_ARCH_VALUE 86\n# define OPENSSL_NO_EC_NISTP_64_GCC_128_NOT\n#endif\n"
	dst := filepath.Join(t.TempDir(), Name)
	// Not declared by the recipe: refused, naming the header.
	if _, err := mergeAs(tc, makeSlice(t, as), makeSlice(t, xs), filepath.Join(t.TempDir(), Name), nil); !errors.Is(err, ErrRefused) ||
		!strings.Contains(err.Error(), "include/openssl/configuration.h differs between the slices") {
		t.Fatalf("undeclared header difference: %v", err)
	}
	m, err := mergeAs(tc, makeSlice(t, as), makeSlice(t, xs), dst, []string{"include/openssl/configuration.h"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.HeaderDispatch, ",") != "include/openssl/configuration.h" {
		t.Fatalf("dispatch = %v", m.HeaderDispatch)
	}
	for triple, want := range map[string]string{"arm64-apple-macos11": "64", "x86_64-apple-macos10.12": "86", "riscv64-unknown-elf": "#error"} {
		src := filepath.Join(t.TempDir(), "t.c")
		os.WriteFile(src, []byte("#include <openssl/configuration.h>\nint v = OSSL_ARCH_VALUE;\n"), 0o644)
		out, err := exec.Command("clang-14", "-target", triple, "-E", "-I", filepath.Join(dst, "include"), src).CombinedOutput()
		if want == "#error" {
			if err == nil || !bytes.Contains(out, []byte("x86_64 and arm64 only")) {
				t.Errorf("%s: want #error, got %s", triple, out)
			}
			continue
		}
		if err != nil || !bytes.Contains(out, []byte("int v = "+want)) {
			t.Errorf("%s: want value %s: %v\n%s", triple, want, err, out)
		}
	}
}

func TestNonHeaderDifferenceRefused(t *testing.T) {
	tc := tools(t)
	a, x := makeSlice(t, defaults("arm64")), makeSlice(t, defaults("x86_64"))
	os.WriteFile(filepath.Join(x.Dir, "lib/pkgconfig/libcrypto.pc"), []byte("prefix=/somewhere\n"), 0o644)
	_, err := mergeAs(tc, a, x, filepath.Join(t.TempDir(), Name), nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "lib/pkgconfig/libcrypto.pc differs") {
		t.Errorf("got %v", err)
	}
	os.Remove(filepath.Join(x.Dir, "lib/pkgconfig/libcrypto.pc"))
	_, err = mergeAs(tc, a, x, filepath.Join(t.TempDir(), Name), nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "missing from openssl-macos-x86_64") {
		t.Errorf("got %v", err)
	}
}
