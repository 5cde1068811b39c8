package validate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func TestParseMinOpt(t *testing.T) {
	for in, want := range map[string]inspect.OptLevel{"0": inspect.O0, "1": inspect.O1, "2": inspect.O2, "3": inspect.O3, "s": inspect.Os, "z": inspect.Oz} {
		if got, err := ParseMinOpt(in); err != nil || got != want {
			t.Errorf("ParseMinOpt(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// Anything else is refused by name; -1 no longer means -O1.
	for _, in := range []string{"-1", "4", "fast", "g", "-O3", "O2", "", " 2", "2 "} {
		if _, err := ParseMinOpt(in); err == nil || !strings.Contains(err.Error(), `-minopt "`+in+`": expected 0, 1, 2, 3, s or z`) {
			t.Errorf("ParseMinOpt(%q): %v", in, err)
		}
	}
}

// -Os and -Oz optimise (for size): they meet a minimum of -O2, not -O3.
func TestSatisfies(t *testing.T) {
	for _, tc := range []struct {
		level, min inspect.OptLevel
		ok         bool
	}{
		{inspect.Os, inspect.O2, true}, {inspect.Oz, inspect.O2, true}, {inspect.Os, inspect.O3, false},
		{inspect.Oz, inspect.Os, true}, {inspect.Os, inspect.Oz, true}, {inspect.O2, inspect.Os, true},
		{inspect.O1, inspect.O2, false}, {inspect.O1, inspect.Os, false}, {inspect.Og, inspect.O1, false},
		{inspect.Ofast, inspect.O3, true}, {inspect.O3, inspect.O3, true}, {inspect.O0, inspect.O0, true},
		{inspect.O0, inspect.O1, false},
	} {
		if got := Satisfies(tc.level, tc.min); got != tc.ok {
			t.Errorf("Satisfies(%s, %s) = %v", tc.level, tc.min, got)
		}
	}
}

func TestNormArch(t *testing.T) {
	for in, want := range map[string]string{"aarch64": "arm64", "arm64": "arm64", "amd64": "x86_64", "x86-64": "x86_64", "x86_64": "x86_64", "arm64e": "arm64e"} {
		if got := NormArch(in); got != want {
			t.Errorf("NormArch(%q) = %q", in, got)
		}
	}
}

// rawLib archives objects compiled from C sources holding the given
// strings, for the policy's shapes.
func (tc toolchain) rawLib(t *testing.T, dir, name, target string, srcs ...string) string {
	t.Helper()
	var objs []obj
	for i, src := range srcs {
		p := filepath.Join(dir, name+string(rune('a'+i))+".c")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		o := strings.TrimSuffix(p, ".c") + ".o"
		run(t, tc.clang, "-target", target, "-ffreestanding", "-c", p, "-o", o)
		b, err := os.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj{name: filepath.Base(strings.TrimSuffix(o, ".o")), raw: b})
	}
	return tc.lib(t, dir, name, objs...)
}

// strs is a C source defining each string as a constant.
func strs(ss ...string) string {
	var b strings.Builder
	for i, s := range ss {
		b.WriteString("const char s" + string(rune('a'+i)) + "[] = \"" + strings.ReplaceAll(s, `"`, `\"`) + "\";\n")
	}
	return b.String()
}

// Binary: the check target's policy on any binary, slice by slice.
func TestBinaryPolicy(t *testing.T) {
	tc := needToolchain(t)
	d := t.TempDir()
	const bt, plat = "built on: Thu Jan  1 00:00:00 1970 UTC", "platform: darwin64-arm64-cc"
	lib := func(name string, ss ...string) *inspect.File {
		f, err := inspect.Inspect(tc.rawLib(t, d, name, armTarget, strs(ss...)))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		name   string
		f      *inspect.File
		p      Policy
		status OptStatus
		level  string // the lowest level shown, and its -O word
		flag   string
		fail   string // substring of the only violation; "" for none
	}{
		{"-O3", lib("o3.a", "OpenSSL 4.0.2 25 Aug 2026", bt, plat, "compiler: "+armGood), Policy{MinOpt: inspect.O2}, OptOK, "-O3", "-O3", ""},
		{"no -O", lib("o0.a", "OpenSSL 4.0.2 25 Aug 2026", bt, plat, "compiler: "+armO0), Policy{MinOpt: inspect.O2}, OptBelow, "-O0", "",
			"compiler line has no -O flag (built without optimisation (-O0)), expected at least -O2"},
		{"-Os passes -minopt=2", lib("os.a", bt, plat, "compiler: cc -Os -DL_ENDIAN"), Policy{MinOpt: inspect.O2}, OptOK, "-Os", "-Os", ""},
		{"-Oz fails -minopt=3", lib("oz.a", bt, plat, "compiler: cc -Oz -DL_ENDIAN"), Policy{MinOpt: inspect.O3}, OptBelow, "-Oz", "-Oz",
			`compiler line optimises at -Oz (last -O flag "-Oz"), expected at least -O3`},
		{"n/a is unknown, not -O0", lib("na.a", "OpenSSL 1.1.1 (compatible; BoringSSL)", "compiler: n/a", "built on: n/a", "platform: n/a"), Policy{MinOpt: inspect.O2}, OptUnknown, "-O0", "", ""},
		{"unknown fails with Strict", lib("nas.a", "OpenSSL 1.1.1 (compatible; BoringSSL)", "compiler: n/a", "built on: n/a", "platform: n/a"), Policy{MinOpt: inspect.O2, Strict: true}, OptUnknown, "-O0", "",
			`BoringSSL: no compiler line recorded ("compiler: n/a"): how it was optimised cannot be shown (unknown fails with -strict)`},
		{"libcrypto strings without a line are unknown", lib("noline.a", "OpenSSL 4.0.2 25 Aug 2026", bt, plat), Policy{MinOpt: inspect.O2}, OptUnknown, "-O0", "", ""},
		{"no build information: not judged", lib("plain.a", "hello"), Policy{MinOpt: inspect.O3, Strict: true}, OptNone, "-O0", "", ""},
		{"missing architecture", lib("arch.a", bt, plat, "compiler: "+armGood), Policy{MinOpt: inspect.O2, Archs: []string{"aarch64", "x86_64"}}, OptOK, "-O3", "-O3",
			"no x86_64 slice: expected aarch64, x86_64, found arm64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Binary(c.f, c.p)
			if len(r.Slices) != 1 || r.Slices[0].Opt.Status != c.status || r.Slices[0].Opt.Level.String() != c.level || r.Slices[0].Opt.Flag != c.flag {
				t.Fatalf("slices %+v, want status %s (%s, flag %q)", r.Slices, c.status, c.level, c.flag)
			}
			switch {
			case c.fail == "" && len(r.Violations) > 0:
				t.Errorf("violations %v", r.Violations)
			case c.fail != "" && (len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Detail, c.fail)):
				t.Errorf("violations %v, want one with %q", r.Violations, c.fail)
			}
			if c.status == OptUnknown && r.Slices[0].Unknown == "" {
				t.Error("unknown without a reason")
			}
		})
	}
}

// Version: every version string against the expectation (one edited copy
// is enough), and one version across the slices of a fat file.
func TestVersionRules(t *testing.T) {
	tc := needToolchain(t)
	d := t.TempDir()
	arm := tc.lib(t, d, "arm/libcrypto.a", cv(armTarget, armGood, "darwin64-arm64-cc"))
	exp := expArm
	exp.Version = "4.0.2"
	rep, err := StaticLibrary(arm, exp)
	checkViolations(t, rep, err, "libcrypto.a", "arm64", nil)
	exp.Version = "4.0.3"
	rep, err = StaticLibrary(arm, exp)
	checkViolations(t, rep, err, "libcrypto.a", "arm64", []want{{RuleVersion, "libcrypto-lib-cversion.o", `embeds "OpenSSL 4.0.2 25 Aug 2026", expected OpenSSL 4.0.3`}})

	// An x86_64 slice whose version string says 4.0.3.
	src := strings.Replace(testfixture.CVersionSrc(x86Good, "darwin64-x86_64-cc"), "OpenSSL 4.0.2 ", "OpenSSL 4.0.3 ", 1)
	p := filepath.Join(d, "cv403.c")
	os.WriteFile(p, []byte(src), 0o644)
	o := filepath.Join(d, "libcrypto-lib-cversion.o")
	run(t, tc.clang, "-target", x86Target, "-nostdinc", "-c", p, "-o", o)
	raw, _ := os.ReadFile(o)
	x := tc.lib(t, d, "x/libcrypto.a", obj{name: "libcrypto-lib-cversion", raw: raw})
	fat := tc.lipo(t, filepath.Join(d, "mixed.a"), arm, x)
	f, err := inspect.Inspect(fat)
	if err != nil {
		t.Fatal(err)
	}
	r := Binary(f, Policy{MinOpt: inspect.O2})
	if len(r.Violations) != 1 || r.Violations[0].Rule != RuleVersion || r.Violations[0].Arch != "" ||
		!strings.Contains(r.Violations[0].Detail, `slices embed different versions: x86_64 "OpenSSL 4.0.3 25 Aug 2026", arm64 "OpenSSL 4.0.2 25 Aug 2026"`) {
		t.Errorf("violations %v", r.Violations)
	}
	x86 := expX86
	x86.Version, x86.Slice.MinOS, x86.Slice.Flags = "4.0.2", "10.12", nil
	arm64 := expArm
	arm64.Version = "4.0.2"
	rep, err = Universal(fat, []Expect{arm64, x86})
	if err == nil || !strings.Contains(err.Error(), `x86_64: embeds "OpenSSL 4.0.3 25 Aug 2026", expected OpenSSL 4.0.2`) ||
		!strings.Contains(err.Error(), "slices embed different versions") {
		t.Errorf("universal: %v", err)
	}
}

// Architecture names are one vocabulary: an ELF library expected as amd64
// is the x86_64 one inspect reports.
func TestArchAliases(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	tc := needToolchain(t)
	d := t.TempDir()
	c := filepath.Join(d, "cv.c")
	os.WriteFile(c, []byte(strs("platform: linux-x86_64", "compiler: gcc -O3 -DL_ENDIAN")), 0o644)
	o := filepath.Join(d, "cv.o")
	run(t, "gcc", "-c", c, "-o", o)
	a := filepath.Join(d, "libcrypto.a")
	run(t, tc.ar, "rc", a, o)
	rep, err := StaticLibrary(a, Expect{Slice: platform.Slice{OS: "linux", Arch: "amd64", Configure: "linux-x86_64"}, MinOpt: inspect.O3, RequirePlatform: true, RequireCompilerLine: true})
	if err != nil {
		t.Errorf("amd64 expectation on an x86_64 library: %v %+v", err, rep.Violations)
	}
}
