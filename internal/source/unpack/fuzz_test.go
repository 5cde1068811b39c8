package unpack

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// FuzzExtract feeds arbitrary tar streams to the extractor (the fuzzer
// mutates the tar, not the gzip layer over it) and asserts that
// nothing is ever written outside dest, that a failure leaves nothing
// behind, and that every symlink left in the tree resolves inside it, as
// the system resolves it (leaves), not as the package models it.
func FuzzExtract(f *testing.F) {
	for _, ents := range [][]ent{
		{dir("o/"), file("o/a", "x"), symlink("o/l", "a"), hardlink("o/h", "o/a")},
		{dir("o/"), dir("o/a/b/"), symlink("o/a/b/x", "../.."), symlink("o/y", "a/b/x/../z")},
		{dir("o/"), symlink("o/l", "."), file("o/l/f", "x")},
		{dir("o/"), file("o/../evil", "x")},
		{dir("o/"), symlink("o/s", "d"), dir("o/d/"), file("o/d/f", "x")},
		// Links that leave the tree, each a way for walkLinks to be wrong.
		{dir("o/"), symlink("o/l", "../evil")},
		{dir("o/"), dir("o/d/"), symlink("o/d/l", "../../sentinel")},
		{dir("o/"), dir("o/d/"), symlink("o/d/up", ".."), symlink("o/x", "d/up/../box")},
		{dir("o/"), symlink("o/l", "/etc")},
	} {
		f.Add(gunzip(f, tgz(f, ents...)))
	}
	f.Fuzz(func(t *testing.T, tarData []byte) {
		root := t.TempDir()
		sentinel := filepath.Join(root, "sentinel")
		if err := os.WriteFile(sentinel, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		box := filepath.Join(root, "box")
		if err := os.Mkdir(box, 0o755); err != nil {
			t.Fatal(err)
		}
		dest := filepath.Join(box, "out")
		// Gzipped here, not by the fuzzer, so mutations are not wasted on
		// checksums; the archive lives outside root, whose listing is checked.
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		if _, err := zw.Write(tarData); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		archive := filepath.Join(t.TempDir(), "fuzz.tar.gz")
		if err := os.WriteFile(archive, gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Extract(context.Background(), archive, dest, Options{Limits: inspect.Limits{MaxTotalBytes: 1 << 20, MaxMembers: 500}})

		names := func(d string) []string {
			ents, _ := os.ReadDir(d)
			var out []string
			for _, e := range ents {
				out = append(out, e.Name())
			}
			return out
		}
		if got := strings.Join(names(root), ","); got != "box,sentinel" {
			t.Fatalf("root holds %s", got)
		}
		if b, _ := os.ReadFile(sentinel); string(b) != "keep" {
			t.Fatalf("sentinel changed: %q", b)
		}
		want := ""
		if err == nil {
			want = "out"
		}
		if got := strings.Join(names(box), ","); got != want {
			t.Fatalf("box holds %q after err=%v", got, err)
		}
		if err != nil {
			return
		}
		tree, err := os.OpenRoot(dest)
		if err != nil {
			t.Fatal(err)
		}
		defer tree.Close()
		real, err := filepath.EvalSymlinks(dest)
		if err != nil {
			t.Fatal(err)
		}
		filepath.WalkDir(dest, func(p string, d os.DirEntry, werr error) error {
			if werr != nil {
				t.Fatal(werr)
			}
			if d.Type()&os.ModeSymlink != 0 {
				if why := leaves(tree, real, dest, p); why != "" {
					target, _ := os.Readlink(p)
					t.Fatalf("symlink %s -> %s leaves %s: %s", p, target, dest, why)
				}
			}
			return nil
		})
	})
}

// leaves says how following the symlink p (inside dest) leaves dest, as
// the system resolves it, or "" when it does not. Both judges are
// independent of walkLinks, the package's own model of the tree: os.Root
// (the standard library's openat walk, one directory descriptor at a time)
// refuses any path that escapes its root, existing or not; and where the
// link resolves to something that exists, the kernel's answer
// (filepath.EvalSymlinks, real is dest's) must lie inside dest too. A
// dangling link inside, or a loop, leaves nothing.
func leaves(tree *os.Root, real, dest, p string) string {
	rel, err := filepath.Rel(dest, p)
	if err != nil {
		return err.Error()
	}
	if _, err := tree.Stat(rel); err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return err.Error()
	}
	got, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "" // dangling or a loop: it reaches nothing
	}
	if r, err := filepath.Rel(real, got); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "it resolves to " + got
	}
	return ""
}

func gunzip(t testing.TB, b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
