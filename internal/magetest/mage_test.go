package magetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// mage runs `go tool mage args...` in the repository root with env added to
// a minimal environment, returning combined output and the exit code.
func mage(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	return run(t, env, append([]string{"go", "tool", "mage"}, args...)...)
}

// run runs argv in the repository root with env added to this process's
// environment, returning combined output and the exit code.
func run(t *testing.T, env []string, argv ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = testfixture.RepoRoot()
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	code := testfixture.ExitCode(t, cmd)
	return out.String(), code
}

func TestList(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile")
	}
	out, code := mage(t, nil, "-l")
	if code != 0 {
		t.Fatalf("mage -l exited %d:\n%s", code, out)
	}
	for _, target := range []string{"build:arm64", "build:x86_64", "build:universal2", "build:merge", "source:fetch", "source:unpack", "verify:reproducible", "recipe:bump"} {
		if !strings.Contains(out, target) {
			t.Errorf("mage -l lacks %s:\n%s", target, out)
		}
	}
}

// TestSourceFetch is the "done when" of the sources issue, as a user runs it.
func TestSourceFetch(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile")
	}
	for _, v := range []string{"4.0.2", "3.5.7"} {
		testfixture.Get(t, v)
	}
	cache := t.TempDir()
	env := []string{"OSSLBUILD_MIRROR=" + testfixture.Dir(), "OSSLBUILD_CACHE=" + cache, "OSSLBUILD_OFFLINE=1"}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"default release", []string{"source:fetch"}, []string{"openssl-4.0.2.tar.gz sha256 736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8", "signed 2026-08-25 by B146647E45A7B33947AB226B2A2C87D161692D40"}},
		{"3.5.7, signed by the expired key", []string{"source:fetch", "-version=3.5.7"}, []string{"openssl-3.5.7.tar.gz sha256 a8c0d28a", "by BA5473A2B0587B07FB27CF2D216094DFD0CB81EF"}},
		{"cache hit", []string{"source:fetch"}, []string{"(cached)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := mage(t, env, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(cache, "sha256", "736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8", "openssl-4.0.2.tar.gz")); err != nil {
		t.Errorf("tarball not in the content-addressed cache: %v", err)
	}
}

// TestSourceFetchRefusesCorruptMirror: a corrupted copy in the mirror is
// refused naming expected and actual sha256, and nothing enters the cache.
func TestSourceFetchRefusesCorruptMirror(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile")
	}
	fx := testfixture.Get(t, "4.0.2")
	mirror := t.TempDir()
	b, err := os.ReadFile(fx.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	b[1000] ^= 0x40
	os.WriteFile(filepath.Join(mirror, "openssl-4.0.2.tar.gz"), b, 0o644)
	asc, _ := os.ReadFile(fx.Signature)
	os.WriteFile(filepath.Join(mirror, "openssl-4.0.2.tar.gz.asc"), asc, 0o644)
	cache := t.TempDir()
	out, code := mage(t, []string{"OSSLBUILD_MIRROR=" + mirror, "OSSLBUILD_CACHE=" + cache, "OSSLBUILD_OFFLINE=1"}, "source:fetch")
	if code == 0 {
		t.Fatalf("corrupted mirror accepted:\n%s", out)
	}
	for _, w := range []string{"openssl-4.0.2.tar.gz", "want 736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8", "got "} {
		if !strings.Contains(out, w) {
			t.Errorf("error lacks %q:\n%s", w, out)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "sha256", fx.SHA256)); len(ents) > 0 {
		t.Errorf("cache holds %d entries after a refused fetch", len(ents))
	}
}

func TestUnknownVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile")
	}
	out, code := mage(t, []string{"OSSLBUILD_OFFLINE=1"}, "source:fetch", "-version=9.9.9")
	if code == 0 || !strings.Contains(out, "release 9.9.9") || !strings.Contains(out, "4.0.2") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestCheckExitCode runs `go tool mage check` as a user (and a CI step)
// does: a library whose build information says -O3 passes with exit 0; the
// same library whose compiler line has no -O flag (the pyca bug) fails
// with a non-zero exit naming the member; a bad flag or path fails too.
func TestCheckExitCode(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile")
	}
	testfixture.Tools(t, "clang-14", "llvm-ar-14")
	lib := func(flags string) string {
		dir := t.TempDir()
		src := filepath.Join(dir, "cversion.c")
		os.WriteFile(src, []byte(`#define PLATFORM "platform: darwin64-arm64-cc"
#define DATE "built on: Thu Jan  1 00:00:00 1970 UTC"
static const char compiler_flags[] = "compiler: cc -fPIC -arch arm64 `+flags+` -mmacosx-version-min=11.0 -DL_ENDIAN";
const char *OpenSSL_version(int t)
{
    switch (t) {
    case 0: return "OpenSSL 9.9.9 30 Nov 2026";
    case 1: return compiler_flags;
    case 2: return DATE;
    case 3: return PLATFORM;
    }
    return "not available";
}
`), 0o644)
		obj := filepath.Join(dir, "libcrypto-lib-cversion.o")
		a := filepath.Join(dir, "libcrypto.a")
		for _, args := range [][]string{
			{"clang-14", "-target", "arm64-apple-macos11", "-O2", "-c", "-o", obj, src},
			{"llvm-ar-14", "rcs", a, obj},
		} {
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		return a
	}
	good, bad := lib("-O3 -Wall"), lib("")
	for _, tc := range []struct {
		name string
		args []string
		code bool // want a non-zero exit
		want string
	}{
		{"-O3 library", []string{"check", good}, false, ""},
		{"-O0 library", []string{"check", bad}, true, "libcrypto-lib-cversion.o"},
		{"-O0 library at -minopt=0", []string{"check", bad, "-minopt=0"}, false, ""},
		{"bad -minopt", []string{"check", good, "-minopt=-1"}, true, "-minopt"},
		{"missing path", []string{"check", filepath.Join(t.TempDir(), "nope.a")}, true, "nope.a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := mage(t, nil, tc.args...)
			if (code != 0) != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want non-zero %v and %q in:\n%s", code, tc.code, tc.want, out)
			}
		})
	}
	// A build target refuses an environment boolean it cannot read.
	out, code := mage(t, []string{"OSSLBUILD_OFFLINE=maybe"}, "source:fetch")
	if code == 0 || !strings.Contains(out, "OSSLBUILD_OFFLINE") {
		t.Errorf("OSSLBUILD_OFFLINE=maybe: exit %d:\n%s", code, out)
	}
}
