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
	"strings"
	"sync"
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

// RepoRoot is the root of this repository (where go.mod is): above this
// source file, or, when it was compiled with -trimpath (.ci/run compiles
// the tests so, which lets a second clone reuse Go's build cache) and its
// path is the module's import path, $OSSLBUILD_REPO_ROOT, else the
// nearest directory above the working directory whose go.mod declares
// this module. The answer is put in $OSSLBUILD_REPO_ROOT, so that the
// processes a test starts elsewhere find the same root.
func RepoRoot() string {
	repoRootOnce.Do(func() { repoRoot = findRepoRoot() })
	return repoRoot
}

var (
	repoRootOnce sync.Once
	repoRoot     string
)

// init resolves the root while the working directory is still the one the
// process started in (go test: the package's directory), before a test
// changes it (t.Chdir).
func init() {
	if _, file, _, ok := runtime.Caller(0); ok && !filepath.IsAbs(file) && os.Getenv("OSSLBUILD_REPO_ROOT") == "" {
		if wd, err := os.Getwd(); err == nil {
			if dir, ok := moduleAbove(wd); ok {
				os.Setenv("OSSLBUILD_REPO_ROOT", dir)
			}
		}
	}
}

// modulePath is this repository's module.
const modulePath = "github.com/osslbuild/osslbuild"

func findRepoRoot() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if dir, ok := moduleAbove(filepath.Dir(file)); ok {
			return dir
		}
	}
	if dir := os.Getenv("OSSLBUILD_REPO_ROOT"); dir != "" {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		panic("testfixture: the repository root: " + err.Error())
	}
	dir, ok := moduleAbove(wd)
	if !ok {
		panic("testfixture: no go.mod of " + modulePath + " above " + wd + " (compiled with -trimpath: run from inside the repository or set OSSLBUILD_REPO_ROOT)")
	}
	os.Setenv("OSSLBUILD_REPO_ROOT", dir)
	return dir
}

// moduleAbove is the nearest directory from dir up whose go.mod declares
// modulePath.
func moduleAbove(dir string) (string, bool) {
	for ; ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile(b) == modulePath {
			return dir, true
		}
		if filepath.Dir(dir) == dir {
			return "", false
		}
	}
}

// modfile is the module path a go.mod declares.
func modfile(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
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
// With patterns (tar --wildcards), only the members they match: a test
// that reads the C files writes a quarter of the tree.
func UnpackedRelease(t testing.TB, version string, patterns ...string) string {
	t.Helper()
	r := Get(t, version)
	dir := t.TempDir()
	args := []string{"tar", "-xzf", r.Tarball}
	if len(patterns) > 0 {
		args = append(append(args, "--wildcards"), patterns...)
	}
	RunIn(t, dir, args...)
	return filepath.Join(dir, "openssl-"+version)
}
