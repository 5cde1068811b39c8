package testfixture

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realworldDir holds the npm packages of testdata/realworld/packages.txt
// (scripts/fetch-realworld.sh): $OSSLBUILD_REALWORLD, else
// <user cache dir>/osslbuild/realworld, outside the clone like the fixture
// store, so a clean clone does not fetch 200 MB again.
func realworldDir() string {
	return envDir("OSSLBUILD_REALWORLD", func() string {
		cache, err := os.UserCacheDir()
		if err != nil {
			return filepath.Join(RepoRoot(), ".fixtures", "realworld")
		}
		return filepath.Join(cache, "osslbuild", "realworld")
	})
}

// Realworld returns the path of a pinned package's tarball, skipping
// (failing with CI=true) when it has not been fetched. The size is checked
// here; the script checked the digest.
func Realworld(t testing.TB, name, version string) string {
	t.Helper()
	NeedTier(t, TierFull, "the real-world package "+name+"@"+version)
	On(t, LinuxCross, LinuxNative) // .ci/run fetches them
	f, err := os.Open(filepath.Join(RepoRoot(), "testdata", "realworld", "packages.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 || strings.HasPrefix(fields[0], "#") || fields[0] != name || fields[1] != version {
			continue
		}
		file := strings.ReplaceAll(strings.TrimPrefix(name, "@"), "/", "-") + "-" + version + ".tgz"
		p := filepath.Join(realworldDir(), file)
		st, err := os.Stat(p)
		if err != nil || fmt.Sprint(st.Size()) != fields[2] {
			Missing(t, "%s@%s: %s (scripts/fetch-realworld.sh)", name, version, p)
		}
		return p
	}
	t.Fatalf("%s@%s is not in testdata/realworld/packages.txt", name, version)
	return ""
}

// RealworldFile extracts member (a path inside the package tarball, such
// as "package/native/lib/libcrypto.3.dylib") of a pinned package into a
// temporary directory and returns its path, for tests that need the
// file itself (to change a byte of it).
func RealworldFile(t testing.TB, name, version, member string) string {
	t.Helper()
	tgz := Realworld(t, name, version)
	f, err := os.Open(tgz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no %s: %v", tgz, member, err)
		}
		if h.Name != member {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		return CopyBytes(t, b, filepath.Join(t.TempDir(), filepath.Base(member)))
	}
}

// CopyBytes writes b to dst (mode 0644) and returns dst.
func CopyBytes(t testing.TB, b []byte, dst string) string {
	t.Helper()
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
