package validate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// The cross toolchain of environment.md section 2 compiles real Mach-O
// objects; tests skip without it, and fail when CI=true.
type toolchain struct{ clang, ar, lipoPath string }

func needToolchain(t *testing.T) toolchain {
	t.Helper()
	tc := testfixture.NeedToolchain(t)
	return toolchain{clang: tc.Clang, ar: tc.Ar, lipoPath: tc.Lipo}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	testfixture.RunEnv(t, nil, name, args...)
}

// obj describes one archive member to compile.
type obj struct {
	name     string // member name without .o
	target   string // clang -target
	compiler string // "" for a plain object; else the compiler line to embed
	platform string // the "platform: " value, with compiler
	raw      []byte // use these bytes instead of compiling
}

// lib compiles objs into dir and archives them (Darwin format, as on macOS).
func (tc toolchain) lib(t *testing.T, dir, name string, objs ...obj) string {
	t.Helper()
	sub := filepath.Join(dir, strings.TrimSuffix(name, ".a")+".d")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	op := "rc"
	for _, o := range objs {
		out := filepath.Join(sub, o.name+".o")
		if o.raw != nil {
			if err := os.WriteFile(out, o.raw, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, out)
			op = "rcS" // llvm-ar would parse a malformed object for the symbol table
			continue
		}
		src := "int " + strings.ReplaceAll(o.name, "-", "_") + "_fn(int a) { return a + 1; }\n"
		if o.compiler != "" {
			src = testfixture.CVersionSrc(o.compiler, o.platform)
		}
		c := filepath.Join(sub, o.name+".c")
		if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, tc.clang, "-target", o.target, "-nostdinc", "-c", c, "-o", out)
		paths = append(paths, out)
	}
	a := filepath.Join(dir, name)
	run(t, tc.ar, append([]string{"--format=darwin", op, a}, paths...)...)
	return a
}

func (tc toolchain) lipo(t *testing.T, out string, ins ...string) string {
	t.Helper()
	run(t, tc.lipoPath, append(append([]string{"-create"}, ins...), "-output", out)...)
	return out
}

// The compiler lines a correct build embeds (environment.md section 2),
// and pyca's -O0 one (CFLAGS from the environment replaced -O3 -Wall).
const (
	armGood = "cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DOPENSSL_BUILDING_OPENSSL -DNDEBUG"
	armO0   = "cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DOPENSSL_BUILDING_OPENSSL -DNDEBUG"
	x86Good = "cc -fPIC -arch x86_64 -O3 -Wall -mmacosx-version-min=10.12 -march=core2 -DL_ENDIAN -DOPENSSL_PIC -DNDEBUG"

	armTarget = "arm64-apple-macos11"
	x86Target = "x86_64-apple-macos10.12"
)

var (
	expArm = Expect{Slice: platform.Slice{Arch: "arm64", MinOS: "11.0", Configure: "darwin64-arm64-cc", Flags: []string{"-mmacosx-version-min=11.0"}}, RequirePlatform: true, MinOpt: inspect.O3, RequireCompilerLine: true}
	expX86 = Expect{Slice: platform.Slice{Arch: "x86_64", MinOS: "10.12", Configure: "darwin64-x86_64-cc", Flags: []string{"-mmacosx-version-min=10.12", "-march=core2"}}, RequirePlatform: true, MinOpt: inspect.O3, RequireCompilerLine: true}
	expSSL = Expect{Slice: platform.Slice{Arch: "arm64", MinOS: "11.0"}} // libssl: no compiler or platform string
)

func cv(target, line, platform string) obj {
	return obj{name: "libcrypto-lib-cversion", target: target, compiler: line, platform: platform}
}
func plain(name, target string) obj { return obj{name: name, target: target} }

// want is one expected violation: its rule, member and a piece of its message.
type want struct {
	rule   Rule
	member string
	text   string
}

func TestStaticLibrary(t *testing.T) {
	tc := needToolchain(t)
	tests := []struct {
		name string
		lib  string
		objs []obj
		exp  Expect
		want []want
	}{
		{"good arm64 libcrypto", "libcrypto.a", []obj{cv(armTarget, armGood, "darwin64-arm64-cc"), plain("libcrypto-lib-aes", armTarget)}, expArm, nil},
		{"good x86_64 libcrypto (LC_VERSION_MIN_MACOSX)", "libcrypto.a", []obj{cv(x86Target, x86Good, "darwin64-x86_64-cc"), plain("libcrypto-lib-aes", x86Target)}, expX86, nil},
		{"good libssl without compiler line", "libssl.a", []obj{plain("libssl-lib-ssl_lib", armTarget)}, expSSL, nil},
		{"libssl when a line is required", "libssl.a", []obj{plain("libssl-lib-ssl_lib", armTarget)}, Expect{Slice: platform.Slice{Arch: "arm64"}, RequireCompilerLine: true},
			[]want{{RuleCompilerLine, "", `no "compiler: " line found`}}},
		{"-O0: no -O flag (pyca)", "libcrypto.a", []obj{cv(armTarget, armO0, "darwin64-arm64-cc")}, expArm,
			[]want{{RuleOptimisation, "libcrypto-lib-cversion.o", `compiler line has no -O flag (built without optimisation (-O0)), expected at least -O3: "cc -fPIC -arch arm64 -mmacosx`}}},
		{"-O3 then -O0", "libcrypto.a", []obj{cv(armTarget, "cc -arch arm64 -O3 -mmacosx-version-min=11.0 -O0", "darwin64-arm64-cc")}, expArm,
			[]want{{RuleOptimisation, "libcrypto-lib-cversion.o", `optimises at -O0 (last -O flag "-O0"), expected at least -O3`}}},
		{"-Os below -O3", "libcrypto.a", []obj{cv(armTarget, "cc -arch arm64 -Os -mmacosx-version-min=11.0", "darwin64-arm64-cc")}, expArm,
			[]want{{RuleOptimisation, "libcrypto-lib-cversion.o", `optimises at -Os`}}},
		{"wrong arch member", "libcrypto.a", []obj{cv(armTarget, armGood, "darwin64-arm64-cc"), plain("libcrypto-lib-x86", x86Target)}, expArm,
			[]want{{RuleCPU, "libcrypto-lib-x86.o", "CPU type is x86_64, expected arm64"}, {RuleDeployment, "libcrypto-lib-x86.o", "LC_VERSION_MIN_MACOSX minos is 10.12, expected 11.0"}}},
		{"wrong minos", "libcrypto.a", []obj{cv(armTarget, armGood, "darwin64-arm64-cc"), plain("libcrypto-lib-new", "arm64-apple-macos12")}, expArm,
			[]want{{RuleDeployment, "libcrypto-lib-new.o", "LC_BUILD_VERSION minos is 12.0, expected 11.0"}}},
		{"iOS object", "libcrypto.a", []obj{cv(armTarget, armGood, "darwin64-arm64-cc"), plain("libcrypto-lib-ios", "arm64-apple-ios14")}, expArm,
			[]want{{RuleDeployment, "libcrypto-lib-ios.o", "LC_BUILD_VERSION platform is iOS, expected macOS"}}},
		{"missing flag", "libcrypto.a", []obj{cv(x86Target, strings.Replace(x86Good, " -march=core2", "", 1), "darwin64-x86_64-cc")}, expX86,
			[]want{{RuleFlag, "libcrypto-lib-cversion.o", `compiler line lacks "-march=core2": "cc -fPIC -arch x86_64`}}},
		{"compiler line for another arch", "libcrypto.a", []obj{cv(armTarget, strings.Replace(armGood, "arm64", "x86_64", 1), "darwin64-arm64-cc")}, expArm,
			[]want{{RuleArchFlag, "libcrypto-lib-cversion.o", "compiler line has -arch x86_64, expected exactly -arch arm64"}}},
		{"duplicate compiler line", "libcrypto.a", []obj{cv(armTarget, armGood, "darwin64-arm64-cc"),
			{name: "libcrypto-lib-info", target: armTarget, compiler: armO0, platform: "darwin64-arm64-cc"}}, expArm,
			[]want{{RuleCompilerLine, "", `found 2 "compiler: " lines, expected exactly one: in libcrypto-lib-cversion.o at offset`},
				{RuleOptimisation, "libcrypto-lib-info.o", "has no -O flag"}}},
		{"wrong platform", "libcrypto.a", []obj{cv(armTarget, armGood, "darwin64-x86_64-cc")}, expArm,
			[]want{{RulePlatform, "libcrypto-lib-cversion.o", `built for Configure target "darwin64-x86_64-cc", expected "darwin64-arm64-cc"`}}},
		{"no platform string", "libcrypto.a", []obj{plain("libcrypto-lib-aes", armTarget)}, Expect{Slice: platform.Slice{Arch: "arm64", Configure: "darwin64-arm64-cc"}, RequirePlatform: true},
			[]want{{RulePlatform, "", `no "platform: " string found, expected "platform: darwin64-arm64-cc"`}}},
		{"non-object member", "libcrypto.a", []obj{cv(armTarget, armGood, "darwin64-arm64-cc"), {name: "README", raw: []byte("not an object\n")}}, expArm,
			[]want{{RuleFormat, "README.o", "expected a Mach-O object, found an unrecognised file (first bytes 6e6f7420616e206f)"}}},
		{"malformed member", "libcrypto.a", []obj{cv(armTarget, armGood, "darwin64-arm64-cc"), {name: "broken", raw: []byte("\xcf\xfa\xed\xfe\x0c\x00\x00\x01\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}}, expArm,
			[]want{{RuleFormat, "broken.o", "sizeofcmds 65535 runs past end of file: expected at most 0"}}},
		// Every violation is reported, not only the first.
		{"many at once", "libcrypto.a", []obj{cv(armTarget, "cc -arch x86_64", "linux-x86_64"), plain("libcrypto-lib-x86", x86Target)}, expArm,
			[]want{
				{RuleCPU, "libcrypto-lib-x86.o", "CPU type is x86_64"},
				{RuleDeployment, "libcrypto-lib-x86.o", "minos is 10.12"},
				{RuleOptimisation, "libcrypto-lib-cversion.o", "no -O flag"},
				{RuleArchFlag, "libcrypto-lib-cversion.o", "-arch x86_64"},
				{RuleFlag, "libcrypto-lib-cversion.o", "-mmacosx-version-min=11.0"},
				{RulePlatform, "libcrypto-lib-cversion.o", "linux-x86_64"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := tc.lib(t, t.TempDir(), tt.lib, tt.objs...)
			rep, err := StaticLibrary(lib, tt.exp)
			checkViolations(t, rep, err, tt.lib, tt.exp.Slice.Arch, tt.want)
		})
	}
}

// checkViolations requires exactly the wanted violations, in any order.
func checkViolations(t *testing.T, rep Report, err error, lib, arch string, wants []want) {
	t.Helper()
	if len(wants) == 0 {
		if err != nil || rep.Err() != nil {
			t.Fatalf("unexpected failure: %v", err)
		}
		return
	}
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	var verr *Error
	if !errors.As(err, &verr) || len(verr.Violations) != len(rep.Violations) {
		t.Fatalf("err %T does not carry the report's violations", err)
	}
	used := make([]bool, len(rep.Violations))
	for _, w := range wants {
		found := false
		for i, v := range rep.Violations {
			if !used[i] && v.Rule == w.rule && v.Member == w.member && strings.Contains(v.Detail, w.text) {
				used[i], found = true, true
				if v.Library != lib || (arch != "" && v.Arch != arch) {
					t.Errorf("violation located at %s %s, want %s %s", v.Library, v.Arch, lib, arch)
				}
				if v.Expected == "" || v.Found == "" {
					t.Errorf("violation %q lacks expected/found", v)
				}
				if !strings.Contains(err.Error(), v.String()) {
					t.Errorf("error text lacks %q:\n%s", v, err)
				}
				break
			}
		}
		if !found {
			t.Errorf("missing violation %s %s %q", w.rule, w.member, w.text)
		}
	}
	for i, v := range rep.Violations {
		if !used[i] {
			t.Errorf("unexpected violation [%s] %s", v.Rule, v)
		}
	}
	if t.Failed() {
		t.Logf("error:\n%v", err)
	}
}

func TestUniversal(t *testing.T) {
	tc := needToolchain(t)
	d := t.TempDir()
	arm := tc.lib(t, d, "arm64/libcrypto.a", cv(armTarget, armGood, "darwin64-arm64-cc"), plain("libcrypto-lib-aes", armTarget))
	x86 := tc.lib(t, d, "x86_64/libcrypto.a", cv(x86Target, x86Good, "darwin64-x86_64-cc"), plain("libcrypto-lib-aes", x86Target))
	x86O0 := tc.lib(t, d, "x86_64-o0/libcrypto.a", cv(x86Target, strings.Replace(x86Good, "-O3 ", "", 1), "darwin64-x86_64-cc"))
	arm64e := tc.lib(t, d, "arm64e/libcrypto.a", plain("libcrypto-lib-aes", "arm64e-apple-macos11"))
	good := tc.lipo(t, filepath.Join(d, "libcrypto.a"), arm, x86)
	onlyArm := tc.lipo(t, filepath.Join(d, "only-arm64.a"), arm)
	badX86 := tc.lipo(t, filepath.Join(d, "bad-x86.a"), arm, x86O0)
	extra := tc.lipo(t, filepath.Join(d, "extra.a"), arm, x86, arm64e)
	both := []Expect{expArm, expX86}

	tests := []struct {
		name string
		path string
		exps []Expect
		want []want
		arch string // expected Arch of every violation, "" to not check
	}{
		{"good universal2", good, both, nil, ""},
		{"missing slice", onlyArm, both, []want{{RuleSlices, "", "universal file has no x86_64 slice: expected slices arm64, x86_64, found arm64"}}, "x86_64"},
		{"each slice validated", badX86, both, []want{{RuleOptimisation, "libcrypto-lib-cversion.o", "has no -O flag"}}, "x86_64"},
		{"unexpected slice", extra, both, []want{{RuleSlices, "", "unexpected arm64e slice"}}, "arm64e"},
		{"thin is not universal", arm, both, []want{{RuleFormat, "", "expected a universal file with slices arm64, x86_64, found a thin ar file"}}, ""},
		{"thin is not universal even for one arch", arm, []Expect{expArm}, []want{{RuleFormat, "", "expected a universal file with slices arm64"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Universal(tt.path, tt.exps)
			checkViolations(t, rep, err, filepath.Base(tt.path), tt.arch, tt.want)
		})
	}

	// StaticLibrary accepts a one-slice universal file, but not a two-slice one.
	if rep, err := StaticLibrary(onlyArm, expArm); err != nil {
		t.Errorf("one-slice universal: %v (%+v)", err, rep.Violations)
	}
	rep, err := StaticLibrary(good, expArm)
	checkViolations(t, rep, err, "libcrypto.a", "x86_64", []want{{RuleSlices, "", "unexpected x86_64 slice: expected slices arm64, found arm64, x86_64"}})

	// Validate takes facts a caller already has.
	f, err := inspect.Inspect(good)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := Validate(f, both...); err != nil || rep.Err() != nil || rep.File != f {
		t.Errorf("Validate: %v %+v", err, rep.Violations)
	}
}

func TestErrors(t *testing.T) {
	d := t.TempDir()
	garbage := filepath.Join(d, "garbage.a")
	if err := os.WriteFile(garbage, []byte("!<arch>\nshort"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(d, "text.a")
	if err := os.WriteFile(text, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Every entry point that reads a file by path says the same of it: a
	// file unreadable as a binary is invalid (ErrInvalid, with the cause);
	// one that is absent is an I/O failure, not a verdict.
	ctx := context.Background()
	for _, entry := range []struct {
		name string
		run  func(path string) error
	}{
		{"StaticLibrary", func(p string) error { _, err := StaticLibrary(p, expArm); return err }},
		{"UniversalContext", func(p string) error { _, err := UniversalContext(ctx, p, []Expect{expArm}); return err }},
		{"Dylib", func(p string) error { _, err := Dylib(ctx, p, []Expect{expArm}, DylibExpect{}); return err }},
	} {
		t.Run(entry.name, func(t *testing.T) {
			err := entry.run(garbage)
			if !errors.Is(err, ErrInvalid) || !errors.Is(err, inspect.ErrMalformed) || !strings.Contains(err.Error(), "garbage.a") {
				t.Errorf("malformed archive: %v", err)
			}
			err = entry.run(text)
			if !errors.Is(err, ErrInvalid) || !errors.Is(err, inspect.ErrUnknownFormat) {
				t.Errorf("unknown format: %v", err)
			}
			err = entry.run(filepath.Join(d, "absent.a"))
			if errors.Is(err, ErrInvalid) || !errors.Is(err, os.ErrNotExist) {
				t.Errorf("absent file: %v", err)
			}
		})
	}
	for _, exps := range [][]Expect{nil, {{}}, {expArm, expArm}, {{Slice: platform.Slice{Arch: "arm64", MinOS: "eleven"}}}} {
		if _, err := Universal(garbage, exps); err == nil || errors.Is(err, ErrInvalid) {
			t.Errorf("bad expectation %+v: %v", exps, err)
		}
	}
}

func TestErrorText(t *testing.T) {
	one := &Error{Path: "lib/libcrypto.a", Violations: []Violation{{Library: "libcrypto.a", Member: "libcrypto-lib-cversion.o", Arch: "arm64",
		Detail: `compiler line has no -O flag (built without optimisation (-O0)), expected at least -O3: "cc -fPIC -arch arm64"`}}}
	if got, want := one.Error(), `validate libcrypto.a(libcrypto-lib-cversion.o) arm64: compiler line has no -O flag (built without optimisation (-O0)), expected at least -O3: "cc -fPIC -arch arm64"`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	many := &Error{Path: "lib/libcrypto.a"}
	for i := 0; i < 25; i++ {
		many.Violations = append(many.Violations, Violation{Library: "libcrypto.a", Member: "x.o", Detail: "d"})
	}
	s := many.Error()
	if !strings.HasPrefix(s, "validate lib/libcrypto.a: 25 violations:") || !strings.HasSuffix(s, "... and 5 more") || strings.Count(s, "\n") != maxListed+1 {
		t.Errorf("many:\n%s", s)
	}
	if (Violation{Library: "libssl.a", Detail: "d"}).String() != "libssl.a: d" {
		t.Error("violation without member and arch")
	}
}
