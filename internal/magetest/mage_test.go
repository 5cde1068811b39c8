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
	if len(argv) > 2 && argv[0] == "go" && argv[1] == "tool" && argv[2] == "mage" {
		defer testfixture.MageLock(t)()
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = testfixture.RepoRoot()
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	code := testfixture.ExitCode(t, cmd)
	return out.String(), code
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
