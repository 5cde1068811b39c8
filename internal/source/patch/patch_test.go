package patch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/osslbuild/osslbuild/internal/osslver/constraint"
	"github.com/osslbuild/osslbuild/internal/source/unpack"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReal patches a real OpenSSL 4.0.2 tree, extracted with package unpack:
// first a set that fails (the tree must stay untouched), then a good one.
func TestReal(t *testing.T) {
	r := testfixture.Get(t, "4.0.2")
	dir := filepath.Join(t.TempDir(), "openssl-4.0.2")
	if _, err := unpack.Extract(context.Background(), r.Tarball, dir, unpack.Options{TopDir: "openssl-4.0.2"}); err != nil {
		t.Fatal(err)
	}
	orig := read(t, filepath.Join(dir, "crypto/cversion.c"))

	t.Run("does not apply", func(t *testing.T) {
		_, err := Apply(context.Background(), os.DirFS("testdata/conflict"), "4.0.2", dir)
		if !errors.Is(err, ErrDoesNotApply) {
			t.Fatalf("want ErrDoesNotApply, got %v", err)
		}
		for _, want := range []string{"0002-stale-hunk.patch", "crypto/cversion.c", "hunk 2", "@@ -24,6 +25,6 @@"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q: %v", want, err)
			}
		}
		t.Log(err)
		// 0001 applied in memory, but nothing was written.
		if read(t, filepath.Join(dir, "crypto/cversion.c")) != orig {
			t.Error("tree changed although the set failed")
		}
	})

	t.Run("good", func(t *testing.T) {
		applied, err := Apply(context.Background(), os.DirFS("testdata/good"), "4.0.2", dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range applied {
			names = append(names, p.Name)
			b, _ := os.ReadFile(filepath.Join("testdata/good", p.Name))
			sum := sha256.Sum256(b)
			if p.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("%s: sha256 %s", p.Name, p.SHA256)
			}
		}
		// 0003 is for 1.1.1 only and must not be selected.
		if got := strings.Join(names, ","); got != "0001-cversion-comment.patch,0002-add-file.patch" {
			t.Fatalf("applied %s", got)
		}
		got := read(t, filepath.Join(dir, "crypto/cversion.c"))
		want := strings.Replace(orig, "#include \"buildinf.h\"\n", "#include \"buildinf.h\"\n\n/* Patched by osslbuild (test patch 0001). */\n", 1)
		want = strings.Replace(want, "unsigned int OPENSSL_version_patch(void)\n", "/* osslbuild: patch level below */\nunsigned int OPENSSL_version_patch(void)\n", 1)
		if got != want {
			t.Errorf("cversion.c not patched as expected:\n%s", got[:min(len(got), 1200)])
		}
		if s := read(t, filepath.Join(dir, "osslbuild/PATCHED.txt")); s != "osslbuild test file\n" {
			t.Errorf("new file: %q", s)
		}
		fi, _ := os.Stat(filepath.Join(dir, "crypto/cversion.c"))
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v", fi.Mode())
		}
		// No temporary file left beside the patched one.
		if _, err := os.Lstat(filepath.Join(dir, "crypto/.cversion.c.patching")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temporary file: %v", err)
		}
	})
}

func TestSelect(t *testing.T) {
	fsys := os.DirFS("testdata/good")
	for v, want := range map[string]string{
		"4.0.2":  "0001-cversion-comment.patch,0002-add-file.patch",
		"3.5.7":  "0001-cversion-comment.patch,0002-add-file.patch",
		"3.0.20": "0002-add-file.patch",
		"1.1.1":  "0003-old-series-only.patch",
		"4.1.0":  "0002-add-file.patch",
	} {
		sel, err := Select(fsys, v)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range sel {
			names = append(names, p.Name)
		}
		if got := strings.Join(names, ","); got != want {
			t.Errorf("%s: selected %q, want %q", v, got, want)
		}
	}
}

// A letter release cannot be ordered by Applies-To (go-version reads
// 1.1.1w as a pre-release of 1.1.1): refused, naming the patch.
func TestSelectLetterRelease(t *testing.T) {
	_, err := Select(os.DirFS("testdata/good"), "1.1.1w")
	if !errors.Is(err, constraint.ErrUnordered) || !strings.Contains(err.Error(), "0001-cversion-comment.patch") || !strings.Contains(err.Error(), "1.1.1w") {
		t.Errorf("Select(1.1.1w) = %v; want ErrUnordered naming the patch and the version", err)
	}
	if sel, err := Select(os.DirFS("testdata"), "1.1.1w"); err != nil || len(sel) != 0 {
		t.Errorf("no patches: %v, %v", sel, err)
	}
}

func TestBadHeaders(t *testing.T) {
	for _, d := range []string{"noheader", "badheader"} {
		t.Run(d, func(t *testing.T) {
			// Even for a version the patch would not be selected for.
			_, err := Select(os.DirFS(filepath.Join("testdata", d)), "4.0.2")
			if !errors.Is(err, ErrHeader) {
				t.Fatalf("want ErrHeader, got %v", err)
			}
			if !strings.Contains(err.Error(), "0001-") {
				t.Errorf("error does not name the patch: %v", err)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	diff := "diff --git a/%[1]s b/%[1]s\nnew file mode 100644\n--- /dev/null\n+++ b/%[1]s\n@@ -0,0 +1 @@\n+x\n"
	for name, body := range map[string]string{
		"two headers": "Applies-To: >= 1.0\nApplies-To: >= 2.0\n\n" + strings.ReplaceAll(diff, "%[1]s", "f"),
		"empty alt":   "Applies-To: >= 1.0 ||\n\n" + strings.ReplaceAll(diff, "%[1]s", "f"),
		"escape":      "Applies-To: >= 1.0\n\n" + strings.ReplaceAll(diff, "%[1]s", "../evil"),
		"no diff":     "Applies-To: >= 1.0\n",
		"letters":     "Applies-To: >= 1.1.1t\n\n" + strings.ReplaceAll(diff, "%[1]s", "f"),
		"rename":      "Applies-To: >= 1.0\n\ndiff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n",
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{"0001-x.patch": {Data: []byte(body)}}
			_, err := Apply(context.Background(), fsys, "4.0.2", t.TempDir())
			if err == nil || !strings.Contains(err.Error(), "0001-x.patch") {
				t.Fatalf("want an error naming the patch, got %v", err)
			}
		})
	}
}

func TestCreateExisting(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x\n"), 0o644)
	fsys := fstest.MapFS{"0001-x.patch": {Data: []byte("Applies-To: >= 1.0\n\ndiff --git a/f b/f\nnew file mode 100755\n--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+y\n")}}
	if _, err := Apply(context.Background(), fsys, "4.0.2", dir); !errors.Is(err, ErrDoesNotApply) {
		t.Fatalf("want ErrDoesNotApply, got %v", err)
	}
}

func TestSymlinkTarget(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("a\n"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "f"))
	fsys := fstest.MapFS{"0001-x.patch": {Data: []byte("Applies-To: >= 1.0\n\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n")}}
	if _, err := Apply(context.Background(), fsys, "4.0.2", dir); err == nil {
		t.Fatal("patched through a symlink")
	}
	if read(t, outside) != "a\n" {
		t.Fatal("file outside the tree changed")
	}
}

func TestDeleteAndMode(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gone"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "run"), []byte("a\n"), 0o644)
	fsys := fstest.MapFS{"0001-x.patch": {Data: []byte("Applies-To: >= 4.0.0\n\n" +
		"diff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n" +
		"diff --git a/run b/run\nold mode 100644\nnew mode 100755\n")}}
	applied, err := Apply(context.Background(), fsys, "4.0.2", dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || strings.Join(applied[0].Files, ",") != "gone,run" {
		t.Errorf("applied %+v", applied)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("gone: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "run")); fi.Mode().Perm() != 0o755 {
		t.Errorf("run: mode %v", fi.Mode())
	}
}
