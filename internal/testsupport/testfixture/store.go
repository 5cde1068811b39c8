package testfixture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Store is where built test fixtures live (the end-to-end builds, the code
// corpus): $OSSLBUILD_E2E_DIR, else <user cache dir>/osslbuild/
// test-fixtures. It is outside the clone, so a second CI run on the same
// machine reuses every entry whose key did not change; each entry is keyed
// by what decides its bytes and is safe for concurrent test binaries.
func Store() string {
	return envDir("OSSLBUILD_E2E_DIR", func() string {
		cache, err := os.UserCacheDir()
		if err != nil {
			return filepath.Join(RepoRoot(), ".fixtures", "e2e")
		}
		return filepath.Join(cache, "osslbuild", "test-fixtures")
	})
}

// envDir is the directory the environment variable name gives, else
// fallback's.
func envDir(name string, fallback func() string) string {
	if d := os.Getenv(name); d != "" {
		return d
	}
	return fallback()
}

// Lock takes an exclusive lock on the file path (created if need be),
// waiting for other holders in this process or another, and returns its
// release.
func Lock(t testing.TB, path string) (release func()) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	return flock(t, path, 0)
}

// flock takes an exclusive lock on path (created if need be), with the
// flags added (LOCK_NB: nil when another holds it), and returns its
// release.
func flock(t testing.TB, path string, flags int) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|flags); err != nil {
		f.Close()
		if flags&syscall.LOCK_NB != 0 && errors.Is(err, syscall.EWOULDBLOCK) {
			return nil
		}
		t.Fatal(err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }
}

// BuildSlot waits for one of the machine's build slots and returns its
// release: a fixture build (OpenSSL with make -j on every core, the code
// corpus) holds one, so test binaries never build more at once than there
// are slots. There is one, so that two builds never compete for the same
// cores while packages' tests wait on them, unless OSSLBUILD_BUILD_SLOTS
// says more: the fixture step runs two builds at once, which fill the
// core one build leaves idle while it unpacks, runs Configure and proves
// what make made.
func BuildSlot(t testing.TB) (release func()) {
	t.Helper()
	slot := filepath.Join(Store(), "build.slot")
	n, _ := strconv.Atoi(os.Getenv("OSSLBUILD_BUILD_SLOTS"))
	if n <= 1 {
		return Lock(t, slot)
	}
	if err := os.MkdirAll(Store(), 0o755); err != nil {
		t.Fatal(err)
	}
	for {
		for i := range n {
			path := slot
			if i > 0 {
				path += "." + strconv.Itoa(i)
			}
			if release := flock(t, path, syscall.LOCK_NB); release != nil {
				return release
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// MageLock takes the lock every test holds while it runs `go tool mage` in
// this checkout, and returns its release. Mage compiles a magefile by
// writing mage_output_file.go beside it and removing it afterwards (always
// for -compile, and on a miss of its binary cache), so two compiles in one
// checkout at once, from two packages' test binaries, remove each other's
// file ("open ./mage_output_file.go: no such file or directory").
func MageLock(t testing.TB) (release func()) {
	t.Helper()
	sum := sha256.Sum256([]byte(RepoRoot()))
	return Lock(t, filepath.Join(os.TempDir(), "osslbuild-mage-"+hex.EncodeToString(sum[:8])+".lock"))
}
