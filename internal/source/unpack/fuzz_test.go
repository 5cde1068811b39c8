package unpack

import (
	"bytes"
	"compress/gzip"
	"context"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtract feeds arbitrary tar streams to the extractor (below the gzip
// layer, so mutations are not wasted on checksums) and asserts that
// nothing is ever written outside dest, that a failure leaves nothing
// behind, and that every symlink left in the tree resolves inside it.
func FuzzExtract(f *testing.F) {
	for _, ents := range [][]ent{
		{dir("o/"), file("o/a", "x"), symlink("o/l", "a"), hardlink("o/h", "o/a")},
		{dir("o/"), dir("o/a/b/"), symlink("o/a/b/x", "../.."), symlink("o/y", "a/b/x/../z")},
		{dir("o/"), symlink("o/l", "."), file("o/l/f", "x")},
		{dir("o/"), file("o/../evil", "x")},
		{dir("o/"), symlink("o/s", "d"), dir("o/d/"), file("o/d/f", "x")},
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
		_, err := extractTar(context.Background(), bytes.NewReader(tarData), "fuzz.tar", dest, Options{Limits: inspect.Limits{MaxTotalBytes: 1 << 20, MaxMembers: 500}})

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
		filepath.WalkDir(dest, func(p string, d os.DirEntry, werr error) error {
			if werr != nil {
				t.Fatal(werr)
			}
			if d.Type()&os.ModeSymlink != 0 {
				if !resolvesInside(dest, p) {
					target, _ := os.Readlink(p)
					t.Fatalf("symlink %s -> %s leaves %s", p, target, dest)
				}
			}
			return nil
		})
	})
}

// resolvesInside follows the path p (inside root) through the real symlinks
// on disk, tolerating a missing tail, and reports whether it stays in root.
// It is independent of the package's own model of the tree.
func resolvesInside(root, p string) bool {
	rel, _ := filepath.Rel(root, p)
	todo := strings.Split(rel, string(filepath.Separator))
	var stack []string
	for n := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return false
			}
			stack = stack[:len(stack)-1]
			continue
		}
		stack = append(stack, c)
		cur := filepath.Join(append([]string{root}, stack...)...)
		fi, err := os.Lstat(cur)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if n++; n > 100 {
			return true // a loop: it never reaches anything, inside or out
		}
		target, _ := os.Readlink(cur)
		if filepath.IsAbs(target) {
			return false
		}
		stack = stack[:len(stack)-1]
		todo = append(strings.Split(target, "/"), todo...)
	}
	return true
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
