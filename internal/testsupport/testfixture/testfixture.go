// Package testfixture locates the downloaded fixtures (the release
// tarballs of scripts/fetch-fixtures.sh, the npm packages of
// scripts/fetch-realworld.sh) and the tools tests need, and holds the
// small helpers tests of several packages share, for tests in any package.
// It imports only the standard library, so any package's tests can use it.
//
// A test that needs a fixture skips with a reason when it is absent, except
// when CI=true: there a missing fixture fails the test, so CI can never pass by
// skipping.
package testfixture

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Release describes one pinned release fixture.
type Release struct {
	Version   string
	SHA256    string
	Size      int64
	Tarball   string // path to openssl-<v>.tar.gz
	Signature string // path to openssl-<v>.tar.gz.asc
}

// Pinned are the release fixtures fetch-fixtures.sh provides (values from
// upstream, byte-identical to Debian's .orig.tar.gz).
var Pinned = map[string]Release{
	"4.0.2":  {Version: "4.0.2", SHA256: "736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8", Size: 55153883},
	"3.5.7":  {Version: "3.5.7", SHA256: "a8c0d28a529ca480f9f36cf5792e2cd21984552a3c8e4aa11a24aa31aeac98e8", Size: 53153930},
	"3.0.20": {Version: "3.0.20", SHA256: "c80a01dfc70ece4dc21168932c37739042d404d46ccc81a5986dd75314ecda6f", Size: 15292815},
}

// RepoRoot is the root of this repository (where go.mod is).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			panic("testfixture: no go.mod above " + file)
		}
	}
}

// Dir is the directory holding the release fixtures: $OSSLBUILD_FIXTURES or
// <repo>/.fixtures/releases.
func Dir() string {
	return envDir("OSSLBUILD_FIXTURES", func() string { return filepath.Join(RepoRoot(), ".fixtures", "releases") })
}

// Missing skips the test (or fails it when CI=true) with the reason.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("required fixture missing (CI=true, no skipping): "+format, args...)
	}
	t.Skipf("prerequisite missing (scripts/fetch-fixtures.sh and scripts/setup-cross.sh provide the fixtures and toolchain): "+format, args...)
}

// Get returns the fixture for version, skipping or failing as Missing does
// when its files are absent.
func Get(t testing.TB, version string) Release {
	t.Helper()
	r, ok := Pinned[version]
	if !ok {
		t.Fatalf("testfixture: no pinned release %q", version)
	}
	NeedTier(t, TierFull, "the release tarball openssl-"+version)
	On(t, LinuxCross, LinuxNative) // scripts/fetch-fixtures.sh's Debian source packages
	r.Tarball = filepath.Join(Dir(), "openssl-"+version+".tar.gz")
	r.Signature = r.Tarball + ".asc"
	for _, p := range []string{r.Tarball, r.Signature} {
		if _, err := os.Stat(p); err != nil {
			Missing(t, "%s", p)
		}
	}
	return r
}

// UnpackedRelease is the source tree of a pinned release, unpacked with
// tar(1) into a temporary directory for the test: for tests that read the
// sources, never for builds (the pipeline's unpack stage is tested itself).
func UnpackedRelease(t testing.TB, version string) string {
	t.Helper()
	r := Get(t, version)
	dir := t.TempDir()
	RunIn(t, dir, "tar", "-xzf", r.Tarball)
	return filepath.Join(dir, "openssl-"+version)
}
