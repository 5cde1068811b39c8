// Package minitest builds real artifacts from testdata/mini-openssl, the
// tiny OpenSSL-shaped tree, with the real pipeline and the cross toolchain
// in seconds: for tests that need artifacts (two of them, built
// differently) without a real OpenSSL build. internal/pipeline's tests
// build it their own ways from its parts (Tarball, Recipe, Runtime).
package minitest

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// Version is the mini tree's own release.
const Version = "9.9.9"

// Options say how a mini artifact differs from the plain one.
type Options struct {
	// Version is the release to call the tree ("" = Version): its
	// tarball, top-level directory, VERSION.dat and version text.
	Version string
	// Options are the recipe's Configure options (nil: no-shared only).
	Options []string
	// Edits are source edits, file -> {old, new}, applied once each.
	Edits map[string][2]string
	// Root is where the build and its dist/ go ("" = a t.TempDir()): a
	// directory that outlives t lets tests share one build.
	Root string
	// Variant is the stage table to build with (nil: osslbuild's own;
	// pipeline.PycaWay: CFLAGS in Configure's environment, as the mini
	// Configure takes it as OpenSSL's does).
	Variant *pipeline.Variant
}

// Require skips a test that builds the mini tree where it cannot (in
// -short mode; without the cross toolchain, perl or make, failing then
// under CI=true) and declares it a gate-tier test of LinuxCross.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds with the cross toolchain; skipped in -short mode")
	}
	testfixture.On(t, testfixture.LinuxCross)
	if _, err := toolchain.New("cross"); err != nil {
		testfixture.Missing(t, "%v", err)
	}
	testfixture.Tools(t, "perl", "make")
}

// Build builds the recipe target (arm64, x86_64, linux-x86_64) of the
// mini tree as o says, and returns what was published (the directory and
// its .tar.gz, in a fresh dist/ of their own).
func Build(t testing.TB, target string, o Options) *artifact.Published {
	t.Helper()
	Require(t)
	v := o.Version
	if v == "" {
		v = Version
	}
	edits := map[string][2]string{}
	for k, e := range o.Edits {
		edits[k] = e
	}
	if v != Version {
		p := strings.Split(v, ".")
		if len(p) != 3 {
			t.Fatalf("minitest: version %q: want X.Y.Z", v)
		}
		edits["VERSION.dat"] = [2]string{"MAJOR=9\nMINOR=9\nPATCH=9\n", fmt.Sprintf("MAJOR=%s\nMINOR=%s\nPATCH=%s\n", p[0], p[1], p[2])}
		edits["include/openssl/opensslv.h"] = [2]string{"OpenSSL " + Version + " ", "OpenSSL " + v + " "}
	}
	mirror, sum, size := Tarball(t, v, edits)
	root := o.Root
	if root == "" {
		root = t.TempDir()
	}
	path := Recipe(t, v, o.Options, sum, size)
	r, err := recipe.LoadWith(path, recipe.LoadOptions{Unsigned: true}) // nobody signs the mini tree
	if err != nil {
		t.Fatal(err)
	}
	s := pipeline.Settings{Recipe: path, Loaded: r, Out: filepath.Join(root, "dist"), Work: filepath.Join(root, "work"), Jobs: 2, Rebuild: true}
	s.Fetch.Mirror, s.Fetch.Offline, s.Fetch.CacheDir = mirror, true, filepath.Join(root, "cache")
	var log strings.Builder
	res, err := pipeline.Slice(context.Background(), s, Runtime(t, &log), target, o.Variant)
	if err != nil {
		t.Fatalf("mini build of %s: %v\nlog:\n%s", target, err, log.String())
	}
	return res.Published
}

// Runtime is the runtime of a mini build: its log, and the mini tree's
// own consumer for the link stage (smoke/smoke.c needs OpenSSL's API).
func Runtime(t testing.TB, log io.Writer) pipeline.Runtime {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "testdata", "mini-openssl", "consumer.c"))
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.WithLinkProgram(pipeline.Runtime{Log: log, Revision: "test"}, link.Program{Name: "testdata/mini-openssl/consumer.c", Source: src})
}

// Tarball writes the mini tree as openssl-v.tar.gz into a fresh mirror
// directory, with edits (file -> {old, new}) applied, and returns the
// directory, the sha256 and the size.
func Tarball(t testing.TB, v string, edits map[string][2]string) (dir, sum string, size int64) {
	t.Helper()
	src := filepath.Join(testfixture.RepoRoot(), "testdata", "mini-openssl")
	dir = t.TempDir()
	path := filepath.Join(dir, "openssl-"+v+".tar.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	top := "openssl-" + v + "/"
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top + rel + "/", Mode: 0o755})
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if e, ok := edits[rel]; ok {
			if !strings.Contains(string(b), e[0]) {
				return fmt.Errorf("edit of %s: %q not found", rel, e[0])
			}
			b = []byte(strings.Replace(string(b), e[0], e[1], 1))
			used[rel] = true
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: top + rel, Mode: int64(fi.Mode().Perm()), Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range edits {
		if !used[k] {
			t.Fatalf("edit of %s: no such file", k)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return dir, hex.EncodeToString(h[:]), int64(len(b))
}

// Recipe writes a recipe for the mini release v (sha256 sum, size bytes,
// unsigned) with the real recipe's targets and Configure options (nil:
// no-shared only), and returns its path.
func Recipe(t testing.TB, v string, options []string, sum string, size int64) string {
	t.Helper()
	if options == nil {
		options = []string{"no-shared"}
	}
	var opts []string
	for _, o := range options {
		opts = append(opts, fmt.Sprintf("{ name = %q }", o))
	}
	p := filepath.Join(t.TempDir(), "mini.toml")
	body := fmt.Sprintf(`default = %[1]q
prefix = "/opt/osslbuild"
options = [%[4]s]

[targets.arm64]
configure = "darwin64-arm64-cc"
os = "macos"
arch = "arm64"
min_os = "11.0"
flags = ["-mmacosx-version-min=11.0"]
openssldir = "/opt/homebrew/etc/openssl@3"
artifact = "openssl-macos-arm64"

[targets.x86_64]
configure = "darwin64-x86_64-cc"
os = "macos"
arch = "x86_64"
min_os = "10.12"
flags = ["-mmacosx-version-min=10.12", "-march=core2"]
openssldir = "/usr/local/etc/openssl@3"
artifact = "openssl-macos-x86-64"

[targets.linux-x86_64]
configure = "linux-x86_64"
os = "linux"
arch = "x86_64"
flags = []
openssldir = "/opt/pyca/cryptography/openssl"
artifact = "openssl-linux-x86_64"

[[release]]
version = %[1]q
sha256 = %[2]q
size = %[3]d
urls = ["https://mini.invalid/openssl-%[1]s.tar.gz"]
signature = "optional"
`, v, sum, size, strings.Join(opts, ", "))
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
