package recipe

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/lifecycle"
	"github.com/osslbuild/osslbuild/keys"
)

// pycaFlags is pyca/infra's OPENSSL_BUILD_FLAGS (cryptography-linux/openssl-version.sh).
const pycaFlags = "no-zlib no-shared no-module no-comp no-apps no-docs no-sm2-precomp no-atexit enable-ec_nistp_64_gcc_128"

func TestCheckOption(t *testing.T) {
	for _, tt := range []struct {
		opt     string
		want    string // "" = accepted; else a part of the error
		instead string // a part of what the refusal says to write instead
	}{
		{"no-zlib", "", ""},
		{"enable-ec_nistp_64_gcc_128", "", ""},
		{"no-buildtest-c++", "", ""},
		{"no-tls1_3", "", ""},
		{"--libdir=lib", "", ""},
		{"--api=3.0", "", ""},
		{"-O0", "optimisation is OpenSSL's own -O3", "leave it out: OpenSSL's Configure sets -O3 itself"},
		{"-O3", "optimisation is OpenSSL's own -O3", "leave it out"},
		{"-march=native", "a compiler flag", "targets.<name>.flags"},
		{"-mmacosx-version-min=12.0", "a compiler flag", `set min_os = "12.0" in the recipe's macOS target`},
		{"-DOPENSSL_NO_ASM", "a compiler flag", "write the option no-asm if it is a feature"},
		{"-DFOO=1", "a compiler flag", "targets.<name>.flags"},
		{"-Wl,-rpath,/x", "a linker flag", "leave it out: the static libraries link nothing"},
		{"-lz", "a linker flag", "leave it out"},
		{"-static", "a linker flag", "leave it out"},
		{"+-O0", "a compiler flag", "targets.<name>.flags"},
		{"-g", "a compiler flag", "targets.<name>.flags"},
		{"CFLAGS=-O0", "a variable assignment: Configure would set CFLAGS", "targets.<name>.flags"},
		{"CC=gcc", "a variable assignment: Configure would set CC", "osslbuild chooses the tools"},
		{"LDFLAGS=-s", "a variable assignment: Configure would set LDFLAGS", "osslbuild builds Configure's environment itself"},
		{"--prefix=/usr", "osslbuild sets --prefix and --openssldir itself", "set prefix in the recipe"},
		{"--openssldir=/etc/ssl", "long options are limited to --libdir=VALUE, --api=VALUE", "set openssldir in the recipe's targets.<name>"},
		{"--cross-compile-prefix=x86_64-w64-mingw32-", "long options are limited", "osslbuild chooses the compiler"},
		{"--release", "long options are limited", "only --libdir=lib and --api=X.Y"},
		{"--strict-warnings", "long options are limited", "leave it out"},
		// Features Configure knows that instrument the code, drop its
		// assembly or build for debugging: refused by name (5392f1f
		// accepted every no-X and enable-X).
		{"--debug", "Configure's debug build: -O0 -g", "leave it out: the release build is OpenSSL's -O3"},
		{"-d", "Configure's debug build: -O0 -g", "leave it out"},
		{"--pgo", "profile-guided", "leave it out"},
		{"enable-asan", "a sanitiser build", "leave it out: sanitiser builds are for testing OpenSSL"},
		{"enable-ubsan", "a sanitiser build", "leave it out"},
		{"enable-msan", "a sanitiser build", "leave it out"},
		{"enable-fuzz-libfuzzer", "a fuzzing build", "leave it out"},
		{"enable-fuzz-afl", "a fuzzing build", "leave it out"},
		{"no-asm", "drops OpenSSL's hand-written assembly", "leave it out"},
		{"no-sse2", "drops the SSE2 code paths", "leave it out"},
		{"386", "Configure's 386 switch", "leave it out"},
		{"no-pic", "position-independent code", "leave it out"},
		{"enable-crypto-mdebug", "memory-debugging hooks", "leave it out"},
		{"enable-unit-test", "test hooks", "leave it out"},
		{"enable-allocfail-tests", "test hooks", "leave it out"},
		// The classes those belong to, not their names: a feature named
		// for testing OpenSSL, and one that writes TLS secrets out.
		{"enable-acvp-tests", "a feature for testing OpenSSL", "leave it out"},
		{"enable-external-tests", "a feature for testing OpenSSL", "leave it out"},
		{"enable-sslkeylog", "SSLKEYLOGFILE", "SSL_CTX_set_keylog_callback"},
		{"enable-trace", "writes TLS secrets out", "leave it out"},
		{"no-acvp-tests", "", ""},
		{"no-sslkeylog", "", ""},
		{"enable-tests", "", ""},
		// Turning such a feature off, or on where it is already, is not.
		{"no-asan", "", ""},
		{"enable-asm", "", ""},
		{"no-fuzz-afl", "", ""},
		{"--libdir=", `--libdir takes lib (the artifact's layout), not ""`, "write --libdir=lib"},
		{"--libdir=../../../../tmp/x", `--libdir takes lib (the artifact's layout), not "../../../../tmp/x"`, "write --libdir=lib"},
		{"--libdir=/tmp/x", "--libdir takes lib", "write --libdir=lib"},
		{"--libdir=lib64", "--libdir takes lib", "write --libdir=lib"},
		{"--libdir=lib/../..", "--libdir takes lib", "write --libdir=lib"},
		{"--api=../x", "--api takes an OpenSSL version", "such as --api=1.1.1"},
		{"darwin64-x86_64-cc", "a bare word may be taken as the Configure target", "the Configure target is the recipe's targets.<name>.configure"},
		{"linux-armv4", "a bare word may be taken as the Configure target", "leave it out"},
		{"threads", "want no-FEATURE or enable-FEATURE", "write enable-threads"},
		{"zlib", "Configure reads the bare word zlib as enable-zlib", "write enable-zlib"},
		{"no-zlib no-shared", "want a single Configure option", "separated by spaces"},
		{"no-$(id)", "want a single Configure option", "one by one"},
		{"", "want a single Configure option", "one by one"},
		{"No-Zlib", "want no-FEATURE", "write it in lower case: no-zlib"},
	} {
		t.Run(tt.opt, func(t *testing.T) {
			err := CheckOption(tt.opt)
			if tt.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `"`+tt.opt+`"`) {
				t.Errorf("CheckOption(%q) = %v; want ErrOption naming the option and %q", tt.opt, err, tt.want)
			}
			// Every refusal says what to write instead.
			if _, instead, ok := strings.Cut(err.Error(), "; instead, "); !ok || !strings.Contains(instead, tt.instead) {
				t.Errorf("CheckOption(%q) = %v; want it to say what to write instead: %q", tt.opt, err, tt.instead)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	got, err := ParseOptions("  " + strings.ReplaceAll(pycaFlags, " ", " \t ") + "\n")
	if err != nil || strings.Join(got, " ") != pycaFlags {
		t.Errorf("ParseOptions(pyca's flags) = %q, %v", got, err)
	}
	// Every bad option is named, not only the first.
	_, err = ParseOptions("no-zlib -O0 CFLAGS=-g")
	if !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), `"-O0"`) || !strings.Contains(err.Error(), `"CFLAGS=-g"`) {
		t.Errorf("ParseOptions with two bad options: %v", err)
	}
	if _, err := ParseOptions("   "); !errors.Is(err, ErrOption) {
		t.Errorf("empty option string: %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{"4.0.1": "4.0.1", "openssl-4.0.1": "4.0.1", " openssl-3.0.20\n": "3.0.20", "1.1.1w": "1.1.1w", "0.9.8zh": "0.9.8zh", "": ""} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"4.0", "openssl-", "OpenSSL_4_0_1", "4.0.1-beta1", "v4.0.1", "openssl-openssl-4.0.1", "1.1.1zzz", "04.0.1"} {
		if _, err := ParseVersion(in); err == nil || !strings.Contains(err.Error(), "want X.Y.Z or openssl-X.Y.Z") {
			t.Errorf("ParseVersion(%q) = %v", in, err)
		}
	}
}

func TestUpstreamURLs(t *testing.T) {
	for v, old := range map[string]string{"4.0.3": "old/4.0/", "3.0.22": "old/3.0/", "1.1.1w": "old/1.1.1/"} {
		urls := UpstreamURLs(v)
		want := []string{
			"https://github.com/openssl/openssl/releases/download/openssl-" + v + "/openssl-" + v + ".tar.gz",
			"https://www.openssl.org/source/openssl-" + v + ".tar.gz",
			"https://www.openssl.org/source/" + old + "openssl-" + v + ".tar.gz",
		}
		if !slices.Equal(urls, want) {
			t.Errorf("UpstreamURLs(%s) = %q\nwant %q", v, urls, want)
		}
	}
	// The recipe's own releases use the same URLs.
	r := mustLoad(t)
	for _, rel := range r.Releases {
		for _, u := range rel.URLs {
			if !slices.Contains(UpstreamURLs(rel.Version), u) {
				t.Errorf("release %s: recipe URL %s is not one of UpstreamURLs", rel.Version, u)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	r := mustLoad(t)
	pinned, _ := r.Release("4.0.2")
	other := strings.Repeat("ab", 32)
	tests := []struct {
		name, version, sha string
		listed             bool
		want               string // error part; "" = resolves
		is                 error
	}{
		{"default", "", "", true, "", nil},
		{"listed, pyca's form", "openssl-4.0.2", "", true, "", nil},
		{"listed with its pin", "openssl-4.0.2", pinned.SHA256, true, "", nil},
		{"listed with its pin in capitals", "4.0.2", strings.ToUpper(pinned.SHA256), true, "", nil},
		{"listed, another pin", "4.0.2", other, false, "OpenSSL 4.0.2: sha256 " + other + " given, but recipes/openssl.toml pins " + pinned.SHA256, ErrPin},
		{"unlisted without a pin", "4.0.3", "", false, "give its sha256 to build a release the recipe does not list", ErrUnknown},
		{"unlisted", "openssl-4.0.3", other, false, "", nil},
		{"unlisted, another release's bytes", "4.0.3", pinned.SHA256, false, "is OpenSSL 4.0.2 in recipes/openssl.toml, so it cannot be OpenSSL 4.0.3", ErrPin},
		{"bad sha256", "4.0.3", "736b4675", false, `sha256 "736b4675" for OpenSSL 4.0.3: want 64 hex digits`, nil},
		{"bad version", "4.0", other, false, "want X.Y.Z or openssl-X.Y.Z", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, listed, err := r.Resolve(tt.version, tt.sha)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
					t.Fatalf("Resolve(%q, %q) = %v; want an error with %q (%v)", tt.version, tt.sha, err, tt.want, tt.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if listed != tt.listed {
				t.Errorf("listed = %v", listed)
			}
			if listed {
				want, _ := r.Release(strings.TrimPrefix(tt.version, "openssl-"))
				if rel.SHA256 != want.SHA256 || rel.Size != want.Size {
					t.Errorf("release %+v, want the recipe's %+v", rel, want)
				}
				return
			}
			if rel.Version != "4.0.3" || rel.SHA256 != other || rel.Size != 0 || !slices.Equal(rel.URLs, UpstreamURLs("4.0.3")) ||
				!slices.Equal(rel.Signers, keys.Fingerprints()) || !rel.SignatureRequired() {
				t.Errorf("unlisted release %+v: want upstream's URLs, every pinned key, a required signature", rel)
			}
		})
	}
}

func TestPlanForCallerOptions(t *testing.T) {
	r := mustLoad(t)
	pyca := strings.Fields(pycaFlags)
	rel := func(v string) Release {
		t.Helper()
		rel, err := r.Release(v)
		if err != nil {
			t.Fatal(err)
		}
		return rel
	}
	// pyca's flags on 4.0.2 are exactly the recipe's options: same plan.
	own, err := r.Plan("4.0.2", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.PlanFor(rel("4.0.2"), "arm64", pyca)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Slice.Options, own.Slice.Options) || p.Slice.Skipped != nil || !p.CallerOptions || own.CallerOptions {
		t.Errorf("pyca's flags on 4.0.2: options %v skipped %v; the recipe's: %v", p.Slice.Options, p.Slice.Skipped, own.Slice.Options)
	}
	// The recipe's per-version rules apply to the caller's options.
	p, err = r.PlanFor(rel("3.0.20"), "x86_64", pyca)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"no-apps", "no-docs", "no-sm2-precomp"}; !slices.Equal(p.Slice.Skipped, want) {
		t.Errorf("3.0.20 skipped %v, want %v", p.Slice.Skipped, want)
	}
	// Options the recipe does not mention pass (the release's Configure
	// judges them); the target's own options follow the caller's.
	p, err = r.PlanFor(rel("4.0.2"), "linux-x86_64", []string{"no-deprecated", "no-zlib", "no-deprecated", "no-shared"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"no-deprecated", "no-zlib", "no-shared", "--libdir=lib"}; !slices.Equal(p.Slice.Options, want) {
		t.Errorf("options %v, want %v", p.Slice.Options, want)
	}
	// Options that would build shared libraries a static recipe does not
	// ship are refused before anything runs, naming the fix.
	if _, err := r.PlanFor(rel("4.0.2"), "arm64", []string{"no-zlib"}); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), "add no-shared") {
		t.Errorf("options without no-shared for a static recipe: %v", err)
	}
	// Bad options are refused, every one named, with the release.
	_, err = r.PlanFor(rel("4.0.2"), "arm64", []string{"no-zlib", "-O0", "CFLAGS=-O0", "-march=native"})
	for _, w := range []string{"OpenSSL 4.0.2 for arm64", `"-O0"`, `"CFLAGS=-O0"`, `"-march=native"`} {
		if !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), w) {
			t.Errorf("PlanFor with bad options: %v; want ErrOption naming %s", err, w)
		}
	}
}

// TestRecipeOptionRules: the recipe's own options are held to the rules
// that hold a caller's.
func TestRecipeOptionRules(t *testing.T) {
	base, err := os.ReadFile("../../recipes/openssl.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"-O0", "CFLAGS=-O0", "-march=native", "--prefix=/usr", "linux-x86_64"} {
		mut := strings.Replace(string(base), `{ name = "no-comp" }`, `{ name = "`+bad+`" }`, 1)
		_, err := Parse("recipes/openssl.toml", []byte(mut))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "options[3].name") || !strings.Contains(err.Error(), bad) {
			t.Errorf("recipe option %q: %v", bad, err)
		}
	}
}

// Every release the recipe lists belongs to a series whose end of life
// the lifecycle table knows: a bump to a new series adds its row there,
// the one table check and the build read.
func TestRecipeSeriesKnown(t *testing.T) {
	r := mustLoad(t)
	for _, rel := range r.Releases {
		if s, ok := lifecycle.Of(rel.Version); !ok || s.Before {
			t.Errorf("%s: OpenSSL %s: series not in internal/lifecycle's table", r.Path, rel.Version)
		}
	}
}
