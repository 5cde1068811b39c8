// Package e2e provides the expensive end-to-end fixtures (real OpenSSL
// slices cross-built by osslbuild) to tests in any package, building each
// at most once per source state: go test runs package binaries in parallel,
// so builds are shared through a directory and serialised with a lock.
//
// The directory is $OSSLBUILD_E2E_DIR, else <repo>/.fixtures/e2e. Entries,
// and the artifact cache the builds use, are keyed by a digest of this
// repository's Go sources, recipes and patches (Key), so a stale build from
// older code is never reused.
//
// This package is where every built fixture is declared, so tests share
// builds rather than each making its own: Universal2 and Slice (one
// build:universal2 run), PycaArm64 and PycaX8664 (the pyca way, -O0), and
// LinuxX8664 and PycaLinuxX8664 (native linux-x86_64 builds, for bench,
// link and code tests). Release tarballs and other downloaded fixtures are
// testfixture's.
package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// Version is the release the end-to-end fixtures build.
const Version = "4.0.2"

// Dir is the shared fixture directory.
func Dir() string {
	if d := os.Getenv("OSSLBUILD_E2E_DIR"); d != "" {
		return d
	}
	return filepath.Join(testfixture.RepoRoot(), ".fixtures", "e2e")
}

var (
	keyOnce sync.Once
	key     string
)

// Key digests what decides a build's bytes: every non-test Go file of the
// module, the recipes, patches, keys and smoke program (its link is
// recorded), go.mod and go.sum, so no fixture
// built by older code is ever reused. OSSLBUILD_E2E_KEY overrides it, to
// reuse fixtures while editing.
func Key() string {
	keyOnce.Do(func() {
		if k := os.Getenv("OSSLBUILD_E2E_KEY"); k != "" {
			key = k
			return
		}
		root := testfixture.RepoRoot()
		h := sha256.New()
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "dist" || rel == "build") {
					return filepath.SkipDir
				}
				return nil
			}
			top, _, _ := strings.Cut(rel, "/")
			if !d.Type().IsRegular() || strings.HasSuffix(rel, "_test.go") ||
				!(strings.HasSuffix(rel, ".go") || top == "recipes" || top == "patches" || top == "keys" || top == "smoke" || rel == "go.mod" || rel == "go.sum") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
			h.Write(b)
			return nil
		})
		key = hex.EncodeToString(h.Sum(nil))[:16]
	})
	return key
}

// Require skips (or fails with CI=true) when the cross toolchain or the
// release fixture is missing, and in -short mode.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end build skipped in -short mode")
	}
	if runtime.GOOS != "linux" {
		t.Skip("end-to-end fixtures are cross-built on Linux")
	}
	if _, err := toolchain.New("cross"); err != nil {
		testfixture.Missing(t, "%v", err)
	}
	testfixture.Get(t, Version)
}

// Settings are what the fixtures build with: the release fixtures as an
// offline mirror, output and work under dir, and an artifact cache of
// their own per Key (test binaries cannot tell osslbuild's revision, so a
// cache shared across source states could serve slices built by older
// code).
func Settings(t testing.TB, dir string) pipeline.Settings {
	s := pipeline.Settings{
		Version: Version,
		Out:     filepath.Join(dir, "dist"),
		Work:    filepath.Join(dir, "work"),
		Jobs:    runtime.NumCPU(),
	}
	s.Fetch.Mirror = testfixture.Dir()
	s.Fetch.Offline = true
	s.Fetch.CacheDir = filepath.Join(Dir(), Key(), "cache")
	return s
}

// Runtime logs to t and records the fixture key as osslbuild's revision.
func Runtime(t testing.TB) pipeline.Runtime {
	return pipeline.Runtime{Log: &testLog{t: t}, Revision: "test-" + Key()}
}

// Universal2 returns the fixture directory holding, under dist/, the
// arm64, x86_64 and universal2 artifacts of one build:universal2 run, built
// on first use. Every slice test shares it: one real build per run.
func Universal2(t testing.TB) string {
	t.Helper()
	Require(t)
	return Shared(t, "universal2", func(dir string) error {
		_, err := pipeline.Universal2(context.Background(), Settings(t, dir), Runtime(t))
		return err
	})
}

// Slice returns the published artifact directory of target (a recipe
// target of universal2: arm64 or x86_64), from the Universal2 fixture.
func Slice(t testing.TB, target string) string {
	t.Helper()
	dist := filepath.Join(Universal2(t), "dist")
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := r.Target(target)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dist, tt.Artifact)
}

// Shared runs build once for name (per Key), in a fresh directory that is
// renamed into place only when build succeeds, and returns that directory.
// Concurrent callers, in this process or another, wait for the first.
func Shared(t testing.TB, name string, build func(dir string) error) string {
	t.Helper()
	root := filepath.Join(Dir(), Key())
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(root, name)
	unlock := lock(t, final+".lock")
	defer unlock()
	if _, err := os.Stat(filepath.Join(final, ".done")); err == nil {
		return final
	}
	os.RemoveAll(final)
	tmp, err := os.MkdirTemp(root, "."+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Logf("e2e: building shared fixture %s in %s", name, tmp)
	if err := build(tmp); err != nil {
		t.Fatalf("e2e fixture %s: %v", name, err)
	}
	os.WriteFile(filepath.Join(tmp, ".done"), nil, 0o644)
	if err := os.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	return final
}

func lock(t testing.TB, path string) func() {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }
}

// testLog forwards pipeline output to t.Log line by line.
type testLog struct {
	t  testing.TB
	mu sync.Mutex
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
