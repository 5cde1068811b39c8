package recipe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// Where TestRecipeFlags puts a flag in the schema-1 recipe, per target: the
// flags line it rewrites, the same line with the flag added, and the
// flag's index.
var flagSites = map[string]struct {
	old, new string
	index    int
}{
	"arm64":        {`flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", %q]`, 1},
	"x86_64":       {`flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, `flags = ["-mmacosx-version-min=10.15", "-march=core2", %q]`, 2},
	"linux-x86_64": {`flags = []`, `flags = [%q]`, 0},
}

// loadMutated writes the schema-1 recipe with old replaced by new into a
// file and loads it; line is the line new starts on.
func loadMutated(t *testing.T, old, new string) (r *Recipe, path string, line int, err error) {
	t.Helper()
	base, err := os.ReadFile(schema1)
	if err != nil {
		t.Fatal(err)
	}
	mut := strings.Replace(string(base), old, new, 1)
	if mut == string(base) && old != new {
		t.Fatalf("mutation %q did not apply", old)
	}
	path = filepath.Join(t.TempDir(), "consumer.toml")
	if err := os.WriteFile(path, []byte(mut), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Load(path)
	return r, path, lineOf(t, mut, new), err
}

// TestRecipeFlags: a target's flags are the allowed families; anything
// else is refused at file:line, naming the flag, why and what is allowed.
// Every refused row was accepted by 5392f1f's CheckFlag, or refused
// without its why and without naming what is allowed.
func TestRecipeFlags(t *testing.T) {
	tests := []struct {
		target, flag string
		why          string // "" = accepted
	}{
		// Allowed families.
		{"arm64", "-fvisibility=hidden", ""},
		{"linux-x86_64", "-fvisibility=hidden", ""},
		{"arm64", "-fstack-protector-strong", ""},
		{"arm64", "-fstack-clash-protection", ""},
		{"linux-x86_64", "-fPIC", ""},
		{"arm64", "-DPEDANTIC", ""}, // refused once the sources are read: TestCheckDefines
		{"arm64", "-DOPENSSL_NO_ASM", ""},
		{"arm64", "-DOPENSSL_TLS_SECURITY_LEVEL=2", ""},
		{"linux-x86_64", "-D_FORTIFY_SOURCE=2", ""},
		{"arm64", "-Wall", ""},
		{"arm64", "-Wno-unused-parameter", ""},
		{"arm64", "-Werror=format-security", ""},
		{"arm64", "-mcpu=apple-m1", ""},
		{"arm64", "-mtune=apple-m1", ""},
		{"linux-x86_64", "-march=x86-64-v3", ""},
		{"linux-x86_64", "-march=core2", ""},
		{"x86_64", "-mtune=x86-64-v2", ""},
		// Code loaded into the compiler, or programs run from elsewhere.
		{"arm64", "-fplugin=/tmp/evil.so", "loads code into the compiler: a compiler plugin"},
		{"arm64", "-fpass-plugin=/tmp/evil.so", "loads code into the compiler: a compiler plugin"},
		{"linux-x86_64", "-fplugin-arg-evil-x", "a compiler plugin"},
		{"arm64", "-B/tmp/bin", "loads code into the compiler: tells the compiler driver where to find the programs"},
		{"arm64", "-B", "tells the compiler driver where to find the programs"},
		{"arm64", "-fuse-ld=/tmp/ld", "tells the compiler driver where to find the programs"},
		{"arm64", "-resource-dir=/tmp/r", "tells the compiler driver where to find the programs"},
		{"arm64", "-Xclang", "passes the next argument to a part of the compiler unchecked"},
		{"arm64", "-Xarch_arm64", "for one architecture unchecked"},
		// Files read into the compile.
		{"arm64", "--config=/tmp/evil.cfg", "reads a file into the compile: reads more compiler flags from a clang configuration file"},
		{"arm64", "@/tmp/flags.rsp", "reads a file into the compile: a response file"},
		{"arm64", "-include/tmp/optimize-off.h", "reads a file into every source before its first line: a header holding #pragma clang optimize off"},
		{"arm64", "-include", "reads a file into every source"},
		{"arm64", "-imacros/tmp/m.h", "reads a file into every source"},
		{"linux-x86_64", "-specs=/tmp/evil.specs", "a GCC specs file"},
		{"arm64", "-I/tmp/include", "an include path"},
		{"arm64", "-I../../elsewhere", "an include path"},
		{"arm64", "-isystem/tmp/include", "an include path"},
		{"arm64", "-fprofile-use=/tmp/x.profdata", "reads a profile into the compile"},
		// Code generation changed behind -O3.
		{"arm64", "-fno-inline", "changes code generation behind -O3: changes inlining"},
		{"arm64", "-fno-inline-functions", "changes inlining"},
		{"linux-x86_64", "-finline-limit=0", "changes inlining"},
		{"arm64", "-fsanitize=address", "changes code generation behind -O3: a sanitiser"},
		{"linux-x86_64", "-fsanitize=undefined", "a sanitiser"},
		{"arm64", "-fprofile-instr-generate", "changes code generation behind -O3: profiling or coverage instrumentation"},
		{"linux-x86_64", "-fprofile-arcs", "profiling or coverage"},
		{"linux-x86_64", "-ftest-coverage", "profiling or coverage"},
		{"linux-x86_64", "--coverage", "profiling or coverage"},
		{"linux-x86_64", "-pg", "profiling or coverage"},
		{"arm64", "-finstrument-functions", "profiling or coverage"},
		{"arm64", "-U__OPTIMIZE__", "undefines a macro the compiler predefines"},
		{"arm64", "-U_FORTIFY_SOURCE", "undefines a macro"},
		{"arm64", "-D__OPTIMIZE__", "reserved to the compiler and C library"},
		{"arm64", "-no-asm", "Configure rewrites -no-X into its option no-X"},
		{"linux-x86_64", "-Wa,-defsym,x=1", "an assembler pass-through"},
		// CPUs: only what the evidence proves.
		{"x86_64", "-march=native", "-march=native is machine-dependent"},
		{"linux-x86_64", "-march=native", "machine-dependent"},
		{"linux-x86_64", "-mtune=native", "machine-dependent"},
		{"arm64", "-mcpu=apple-m2", ""},
		{"arm64", "-mcpu=apple-m3", `"apple-m3" is not an instruction-set level validation proves (it proves apple-m1, apple-m2)`},
		{"arm64", "-mcpu=native", "machine-dependent"},
		{"arm64", "-march=armv8.5-a", "chooses its CPU with -mcpu= and -mtune=, not -march="},
		{"linux-x86_64", "-march=haswell", `"haswell" is not an instruction-set level validation proves`},
		{"linux-x86_64", "-mcpu=core2", "chooses its CPU with -march= and -mtune="},
		{"x86_64", "-march=x86-64-v3", "a second -march (flags[1] gives one)"},
		// Everything else.
		{"arm64", "-g", "not a flag of the families a recipe may give"},
		{"arm64", "-ffast-math", "not a flag of the families"},
		{"linux-x86_64", "-mavx2", "not a flag of the families"},
		{"arm64", "-fvisibility=protected", "not a flag of the families"},
	}
	for _, tt := range tests {
		t.Run(tt.target+"/"+tt.flag, func(t *testing.T) {
			site := flagSites[tt.target]
			_, path, line, err := loadMutated(t, site.old, fmt.Sprintf(site.new, tt.flag))
			if tt.why == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
			msg := err.Error()
			where := fmt.Sprintf("recipe %s:%d: targets.%s.flags[%d]: flag %q: ", path, line, tt.target, site.index, tt.flag)
			for _, want := range []string{where, tt.why, "a target's flags for ", "-fvisibility=hidden|default", "-DNAME or -DNAME=VALUE"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not say %q:\n%v", want, msg)
				}
			}
		})
	}
}

// TestRecipeOptions: a recipe's options are the features the releases'
// Configure knows, less those refused by name; each refusal is at
// file:line with why. The caller's options (pyca's OPENSSL_BUILD_FLAGS)
// are held to the same names.
func TestRecipeOptions(t *testing.T) {
	tests := []struct{ option, why string }{
		{"no-legacy", ""},
		{"enable-weak-ssl-ciphers", ""},
		{"no-tls1_3", ""},
		{"enable-asan", "a sanitiser build"},
		{"enable-ubsan", "a sanitiser build"},
		{"enable-msan", "a sanitiser build"},
		{"enable-fuzz-libfuzzer", "a fuzzing build"},
		{"enable-fuzz-afl", "a fuzzing build"},
		{"no-asm", "drops OpenSSL's hand-written assembly"},
		{"no-sse2", "drops the SSE2 code paths"},
		{"386", "Configure's 386 switch"},
		{"--debug", "Configure's debug build: -O0 -g"},
		{"no-pic", "builds position-dependent code"},
		{"enable-crypto-mdebug", "builds OpenSSL's memory-debugging hooks"},
		{"enable-acvp-tests", "a feature for testing OpenSSL (its name says so)"},
		{"enable-sslkeylog", "a channel that writes TLS secrets out: every program linking the libraries appends its handshake secrets to the file SSLKEYLOGFILE names"},
		{"no-bogus-feature", "no feature of the Configure of OpenSSL 3.0.20, 3.5.7, 4.0.2"},
		{"enable-ssl2", "no feature of the Configure"}, // deprecated: Configure ignores it
	}
	for _, tt := range tests {
		t.Run(tt.option, func(t *testing.T) {
			_, path, line, err := loadMutated(t, `  { name = "no-shared" },`, fmt.Sprintf("  { name = \"no-shared\" },\n  { name = %q },", tt.option))
			if tt.why == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			where := fmt.Sprintf("recipe %s:%d: options[1].name: option %q: %s", path, line, tt.option, tt.why)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), where) {
				t.Errorf("want ErrInvalid saying %q, got\n%v", where, err)
			}
		})
	}
	if _, err := ParseOptions(pycaFlags); err != nil {
		t.Errorf("pyca's options: %v", err)
	}
	if _, err := ParseOptions("no-shared enable-asan no-asm"); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), "a sanitiser build") || !strings.Contains(err.Error(), "hand-written assembly") {
		t.Errorf("caller's enable-asan no-asm: %v", err)
	}
}

// TestReleaseOptions: a feature the release's Configure does not know is
// refused when the release is planned, before anything is fetched, in the
// words pipeline uses for Configure's own refusal; a release osslbuild has
// not read is held to every read release's features together.
func TestReleaseOptions(t *testing.T) {
	r := mustLoad(t)
	for _, tt := range []struct {
		version string
		options []string
		want    string
	}{
		{"3.0.20", []string{"no-shared", "no-apps"}, ""}, // apps is 3.2's, and the recipe limits no-apps to >= 3.2.0
		{"3.0.20", []string{"no-shared", "no-quic", "enable-zstd"}, "OpenSSL 3.0.20 does not know the option(s) enable-zstd no-quic"},
		{"4.0.2", []string{"no-shared", "no-engine"}, "OpenSSL 4.0.2 does not know the option(s) no-engine"},
		{"3.6.3", []string{"no-shared", "no-bogus"}, "the option(s) no-bogus name no feature the Configure of OpenSSL 3.0.20, 3.5.7, 4.0.2 knows"},
		{"3.6.3", []string{"no-shared", "no-quic"}, ""},
		{"3.5.7", strings.Fields(pycaFlags), ""},
		{"3.0.20", []string{"no-shared", "no-atexit", "enable-ec_nistp_64_gcc_128"}, ""},
	} {
		t.Run(tt.version+"/"+strings.Join(tt.options, ","), func(t *testing.T) {
			_, err := r.PlanFor(Release{Version: tt.version}, "arm64", tt.options)
			if tt.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("want ErrOption saying %q, got %v", tt.want, err)
			}
		})
	}
}

// TestDeploymentTargetOnce: min_os states the deployment target and the
// flag is derived from it, first among the flags; a recipe may repeat it
// in flags once, equal (the frozen schema-1 recipe does), and is refused
// for a second copy or another value. The embedded recipe and the examples
// say it once.
func TestDeploymentTargetOnce(t *testing.T) {
	for _, tt := range []struct {
		name, old, new string
		want           []string // x86_64's flags; nil when refused
		why            string
	}{
		{"given in flags, equal (schema 1)", `flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, `flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, []string{"-mmacosx-version-min=10.15", "-march=core2"}, ""},
		{"given after another flag, kept where it is", `flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, `flags = ["-march=core2", "-mmacosx-version-min=10.15"]`, []string{"-march=core2", "-mmacosx-version-min=10.15"}, ""},
		{"derived from min_os", `flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, `flags = ["-march=core2"]`, []string{"-mmacosx-version-min=10.15", "-march=core2"}, ""},
		{"no flags key", `flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, `# no flags`, []string{"-mmacosx-version-min=10.15"}, ""},
		{"unequal to min_os", `flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, `flags = ["-mmacosx-version-min=10.13", "-march=core2"]`, nil, `targets.x86_64.flags[0]: "-mmacosx-version-min=10.13" sets a deployment target other than min_os "10.15"`},
		{"given twice", `flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, `flags = ["-mmacosx-version-min=10.15", "-march=core2", "-mmacosx-version-min=10.15"]`, nil, `targets.x86_64.flags[2]: "-mmacosx-version-min=10.15" given twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _, _, err := loadMutated(t, tt.old, tt.new)
			if tt.want == nil {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.why) {
					t.Errorf("want ErrInvalid saying %q, got %v", tt.why, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.Plan("", "x86_64")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Slice.Flags, tt.want) {
				t.Errorf("flags %q, want %q", p.Slice.Flags, tt.want)
			}
		})
	}
	for _, f := range []string{"../../recipes/openssl.toml", "../../recipes/examples/pyca-infra.toml", "../../recipes/examples/python-build-standalone.toml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), `"-mmacosx-version-min=`); n > 0 {
			t.Errorf("%s gives the deployment flag %d times beside min_os: say it once, in min_os", f, n)
		}
	}
}

// TestBOM: a recipe starting with a UTF-8 byte-order mark is refused at
// line 1, saying so and what to do.
func TestBOM(t *testing.T) {
	base, err := os.ReadFile(schema1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bom.toml")
	if err := os.WriteFile(path, append([]byte("\xef\xbb\xbf"), base...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	want := "recipe " + path + ":1: the file starts with a UTF-8 byte-order mark (BOM"
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "save it as UTF-8 without a BOM") {
		t.Errorf("want ErrInvalid saying %q, got %v", want, err)
	}
}

// TestCheckDefines: once OpenSSL 4.0.2's sources are read (a build does
// it after unpacking them, before Configure), a define they test to choose
// their code is refused at the recipe's line, naming the release's file
// and line that decide it; a name they never test, or a parameter they
// give a default, is not. Before CheckDefines, -DPEDANTIC and -DI386_ONLY
// reached Configure (and the compile) without a word.
func TestCheckDefines(t *testing.T) {
	src := os.DirFS(testfixture.UnpackedRelease(t, "4.0.2", "*.c", "*.h", "*.inc", "*.h.in", "*.S", "*.pl"))
	arm := flagSites["arm64"]
	for _, tt := range []struct {
		name, target, old, new string
		key, why               string // "" = accepted
	}{
		{"PEDANTIC", "arm64", arm.old, fmt.Sprintf(arm.new, "-DPEDANTIC"), "targets.arm64.flags[1]", "chooses its code by PEDANTIC (crypto/"},
		// Configure's refused 386 option by another name; the deployment
		// target derived from min_os comes first among the flags.
		{"I386_ONLY", "x86_64", `flags = ["-mmacosx-version-min=10.15", "-march=core2"]`, `flags = ["-march=core2", "-DI386_ONLY"]`, "targets.x86_64.flags[1]", "chooses its code by I386_ONLY (crypto/modes/gcm128.c:341: #if !defined(I386_ONLY) && "},
		{"OPENSSL_NO_ASM", "arm64", arm.old, fmt.Sprintf(arm.new, "-DOPENSSL_NO_ASM"), "targets.arm64.flags[1]", "give the option no-asm"},
		{"OPENSSL_SMALL_FOOTPRINT", "arm64", arm.old, fmt.Sprintf(arm.new, "-DOPENSSL_SMALL_FOOTPRINT"), "targets.arm64.flags[1]", "chooses its code by OPENSSL_SMALL_FOOTPRINT ("},
		{"BSAES_ASM_EXTENDED_KEY", "arm64", arm.old, fmt.Sprintf(arm.new, "-DBSAES_ASM_EXTENDED_KEY"), "targets.arm64.flags[1]", "(crypto/aes/asm/bsaes-armv"},
		{"FOO", "arm64", arm.old, fmt.Sprintf(arm.new, "-DFOO=1"), "", ""},
		{"a parameter", "arm64", arm.old, fmt.Sprintf(arm.new, "-DOPENSSL_TLS_SECURITY_LEVEL=2"), "", ""},
		{"a feature macro of the C library's", "arm64", arm.old, fmt.Sprintf(arm.new, "-D_FORTIFY_SOURCE=2"), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, path, line, err := loadMutated(t, tt.old, tt.new)
			if err != nil {
				t.Fatalf("refused before the sources are read: %v", err)
			}
			p, err := r.PlanFor(Release{Version: "4.0.2"}, tt.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = p.CheckDefines(src)
			if tt.why == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			t.Log(err)
			where := fmt.Sprintf("recipe %s:%d: %s: flag ", path, line, tt.key)
			if !errors.Is(err, ErrFlag) || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("want ErrFlag saying %q and %q, got\n%v", where, tt.why, err)
			}
		})
	}
}
