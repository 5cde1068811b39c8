package unpack

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/tartest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

var mtime = time.Date(2026, 8, 25, 11, 38, 0, 0, time.UTC)

type ent struct {
	name string
	typ  byte
	body string
	link string
	mode int64
	size int64 // overrides len(body) when non-zero
	pax  map[string]string
}

func dir(n string) ent          { return ent{name: n, typ: tar.TypeDir, mode: 0o775} }
func file(n, body string) ent   { return ent{name: n, typ: tar.TypeReg, body: body, mode: 0o664} }
func symlink(n, to string) ent  { return ent{name: n, typ: tar.TypeSymlink, link: to, mode: 0o777} }
func hardlink(n, to string) ent { return ent{name: n, typ: tar.TypeLink, link: to, mode: 0o664} }

// global is a pax global header, as git archive writes one first.
func global(comment string) ent {
	return ent{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": comment}}
}

// globals is n pax global headers.
func globals(n int) []ent {
	out := make([]ent, n)
	for i := range out {
		out[i] = global(fmt.Sprint(i))
	}
	return out
}

func tgz(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var es []tartest.Entry
	for i, e := range ents {
		size := int64(len(e.body))
		if e.typ != tar.TypeReg {
			size = 0
		}
		if e.size != 0 {
			size = e.size
		}
		h := tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, Size: size,
			ModTime: mtime.Add(time.Duration(i) * time.Second), PAXRecords: e.pax}
		if e.typ == tar.TypeXGlobalHeader {
			h.ModTime = time.Time{}
		}
		es = append(es, tartest.Entry{Header: h, Body: e.body})
	}
	// The error is ignored: the "too big" case declares more bytes than it writes.
	b, _ := tartest.TarGz(t, es...)
	return b
}

// archive writes data to a file called name in a directory of its own.
func archive(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func extract(t *testing.T, data []byte, opts Options) (string, Result, error) {
	t.Helper()
	parent := t.TempDir()
	dest := filepath.Join(parent, "src")
	res, err := Extract(context.Background(), archive(t, "test.tar.gz", data), dest, opts)
	if err != nil {
		// Nothing at dest and no temporary directory left behind.
		left, _ := os.ReadDir(parent)
		if len(left) != 0 {
			t.Errorf("failed extraction left %v in %s", left, parent)
		}
	}
	return dest, res, err
}

func TestGood(t *testing.T) {
	data := tgz(t,
		dir("openssl-9.9.9/"),
		file("openssl-9.9.9/Configure", "#!perl\n"),
		dir("openssl-9.9.9/crypto/"),
		file("openssl-9.9.9/crypto/cversion.c", "int x;\n"),
		ent{name: "openssl-9.9.9/config", typ: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o775},
		symlink("openssl-9.9.9/crypto/link.c", "cversion.c"),
		symlink("openssl-9.9.9/up", "crypto/../Configure"),
		hardlink("openssl-9.9.9/crypto/hard.c", "openssl-9.9.9/crypto/cversion.c"),
	)
	dest, res, err := extract(t, data, Options{TopDir: "openssl-9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	// The tree: three files and a hard link to one of them, a directory
	// below the root, two symlinks.
	files, dirs, links := count(t, dest)
	orig, _ := os.Stat(filepath.Join(dest, "crypto", "cversion.c"))
	hard, _ := os.Stat(filepath.Join(dest, "crypto", "hard.c"))
	if res.TopDir != "openssl-9.9.9" || files != 4 || dirs != 1 || links != 2 || !os.SameFile(orig, hard) {
		t.Errorf("result %+v: %d files, %d directories, %d symlinks; hard.c a hard link to cversion.c: %v", res, files, dirs, links, os.SameFile(orig, hard))
	}
	if want := mtime.Add(7 * time.Second); !res.Newest.Equal(want) {
		t.Errorf("newest %v, want %v", res.Newest, want)
	}
	// The root is the archive's top-level directory: 0755 like every other
	// directory (not the 0700 of the temporary directory it was built in),
	// with its own mtime.
	for name, mode := range map[string]os.FileMode{".": 0o755 | os.ModeDir, "Configure": 0o644, "config": 0o755, "crypto": 0o755 | os.ModeDir} {
		fi, err := os.Lstat(filepath.Join(dest, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode(), mode)
		}
	}
	b, err := os.ReadFile(filepath.Join(dest, "crypto", "link.c"))
	if err != nil || string(b) != "int x;\n" {
		t.Errorf("link.c: %q %v", b, err)
	}
	for name, want := range map[string]time.Time{".": mtime, "crypto/cversion.c": mtime.Add(3 * time.Second)} {
		if fi, err := os.Stat(filepath.Join(dest, name)); err != nil || !fi.ModTime().Equal(want) {
			t.Errorf("%s mtime: %v, want %v", name, fi.ModTime(), want)
		}
	}
}

func TestHostile(t *testing.T) {
	top := dir("o/")
	for _, tc := range []struct {
		name string
		ents []ent
		opts Options
		want error
		// member the error must name
		member string
	}{
		{"traversal", []ent{top, file("o/../evil", "x")}, Options{}, ErrUnsafePath, "o/../evil"},
		{"traversal inside", []ent{top, file("o/a/../../evil", "x")}, Options{}, ErrUnsafePath, "o/a/../../evil"},
		{"absolute", []ent{top, file("/etc/evil", "x")}, Options{}, ErrUnsafePath, "/etc/evil"},
		{"escaping symlink", []ent{top, symlink("o/l", "../../etc")}, Options{}, ErrUnsafePath, "o/l"},
		{"absolute symlink", []ent{top, symlink("o/l", "/etc/passwd")}, Options{}, ErrUnsafePath, "o/l"},
		// Each link alone resolves inside lexically; chained they leave.
		{"symlink chain", []ent{top, dir("o/a/b/"), symlink("o/a/b/x", "../.."), symlink("o/y", "a/b/x/../z")}, Options{}, ErrUnsafePath, "o/y"},
		{"symlink chain reversed order", []ent{top, dir("o/a/b/"), symlink("o/y", "a/b/x/../z"), symlink("o/a/b/x", "../..")}, Options{}, ErrUnsafePath, "o/y"},
		{"symlink loop", []ent{top, symlink("o/a", "b"), symlink("o/b", "a")}, Options{}, ErrUnsafePath, "o/a"},
		{"write through symlink", []ent{top, symlink("o/l", "."), file("o/l/f", "x")}, Options{}, ErrUnsafePath, "o/l/f"},
		{"hard link outside", []ent{top, hardlink("o/h", "/etc/passwd")}, Options{}, ErrUnsafePath, "o/h"},
		{"hard link other top", []ent{top, hardlink("o/h", "p/f")}, Options{}, ErrUnsafePath, "o/h"},
		{"hard link before target", []ent{top, hardlink("o/h", "o/f"), file("o/f", "x")}, Options{}, ErrUnsafePath, "o/h"},
		{"hard link to symlink", []ent{top, symlink("o/s", "f"), hardlink("o/h", "o/s")}, Options{}, ErrUnsafePath, "o/h"},
		{"char device", []ent{top, {name: "o/tty", typ: tar.TypeChar, mode: 0o666}}, Options{}, ErrUnsupported, "o/tty"},
		{"block device", []ent{top, {name: "o/sda", typ: tar.TypeBlock, mode: 0o666}}, Options{}, ErrUnsupported, "o/sda"},
		{"fifo", []ent{top, {name: "o/fifo", typ: tar.TypeFifo, mode: 0o666}}, Options{}, ErrUnsupported, "o/fifo"},
		{"too big declared", []ent{top, {name: "o/big", typ: tar.TypeReg, mode: 0o644, size: 1 << 40}}, Options{}, ErrTooLarge, "o/big"},
		{"too big total", []ent{top, file("o/a", "12345"), file("o/b", "67890")}, Options{Limits: inspect.Limits{MaxTotalBytes: 2050}}, ErrTooLarge, ""},
		{"too many entries", []ent{top, file("o/a", ""), file("o/b", ""), file("o/c", "")}, Options{Limits: inspect.Limits{MaxMembers: 3}}, ErrTooLarge, "o/c"},
		// Global headers are members too: each costs a read of up to
		// 1 MiB, so an unbounded run of them is unbounded work.
		{"too many global headers", append(globals(4), top, file("o/a", "")), Options{Limits: inspect.Limits{MaxMembers: 3}}, ErrTooLarge, "pax_global_header"},
		{"global headers after files", append([]ent{top, file("o/a", "")}, globals(2)...), Options{Limits: inspect.Limits{MaxMembers: 3}}, ErrTooLarge, "pax_global_header"},
		{"global header bytes", []ent{global(strings.Repeat("x", 600)), global(strings.Repeat("y", 600)), top}, Options{Limits: inspect.Limits{MaxTotalBytes: 1000}}, ErrTooLarge, ""},
		{"two top dirs", []ent{top, file("o/a", "x"), dir("p/")}, Options{}, ErrLayout, "p/"},
		{"file at top", []ent{file("README", "x")}, Options{}, ErrLayout, "README"},
		{"wrong top dir", []ent{top}, Options{TopDir: "openssl-1.0.0"}, ErrLayout, "o/"},
		{"duplicate file", []ent{top, file("o/a", "x"), file("o/a", "y")}, Options{}, ErrDuplicate, "o/a"},
		{"data on a directory", []ent{top, {name: "o/d/", typ: tar.TypeDir, mode: 0o755, size: 512}}, Options{}, ErrUnsupported, "o/d/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest, _, err := extract(t, tgz(t, tc.ents...), tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			// A member is named as "member" or archive(member); a bound
			// broken by the stream between members names the archive.
			named := tc.member == "" || strings.Contains(err.Error(), `"`+tc.member+`"`) || strings.Contains(err.Error(), "("+tc.member+")")
			if !strings.Contains(err.Error(), "test.tar.gz") || !named {
				t.Errorf("error does not name archive and member %q: %v", tc.member, err)
			}
			if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("dest exists after failure: %v", err)
			}
		})
	}
}

func TestDestExists(t *testing.T) {
	dest := t.TempDir()
	_, err := Extract(context.Background(), archive(t, "x.tar.gz", tgz(t, dir("o/"))), dest, Options{})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("want ErrExists, got %v", err)
	}
}

func TestEmptyAndGarbage(t *testing.T) {
	for name, data := range map[string][]byte{"empty tar": tgz(t), "not gzip": []byte("hello")} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := extract(t, data, Options{}); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	parent := t.TempDir()
	_, err := Extract(ctx, archive(t, "x.tar.gz", tgz(t, dir("o/"), file("o/a", "x"))), filepath.Join(parent, "d"), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

func TestReal(t *testing.T) {
	r := testfixture.Get(t, "4.0.2")
	dest := filepath.Join(t.TempDir(), "src")
	res, err := Extract(context.Background(), r.Tarball, dest, Options{TopDir: "openssl-4.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	for _, f := range []string{"Configure", "crypto/cversion.c", "include/openssl/opensslv.h.in", "VERSION.dat"} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Error(err)
		}
	}
	// The release was cut on 2026-08-25 (the signature's date).
	if d := res.Newest.Format(time.DateOnly); d != "2026-08-25" {
		t.Errorf("newest mtime %v", res.Newest)
	}
	if files, dirs, _ := count(t, dest); files < 5000 || dirs < 200 || res.Bytes < 100<<20 {
		t.Errorf("implausible counts: %d files, %d directories, %+v", files, dirs, res)
	}
}

// count is how many regular files, directories (the root aside) and
// symlinks the tree at dest holds.
func count(t *testing.T, dest string) (files, dirs, links int) {
	t.Helper()
	err := filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == dest:
		case d.IsDir():
			dirs++
		case d.Type()&fs.ModeSymlink != 0:
			links++
		default:
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, dirs, links
}

// The on-disk check catches what the in-memory model cannot see, such as a
// link reached under another spelling on a case-insensitive filesystem;
// here the chain is built directly on disk.
func TestResolveOnDisk(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "x"), 0o755)
	os.Symlink("..", filepath.Join(root, "x", "sub"))
	os.Symlink("x/sub/../..", filepath.Join(root, "y"))
	os.Symlink("x/sub/f", filepath.Join(root, "ok"))
	if err := resolveOnDisk(root, "y"); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("y: want ErrUnsafePath, got %v", err)
	}
	if err := resolveOnDisk(root, "ok"); err != nil {
		t.Errorf("ok: %v", err)
	}
}

// TestGlobalHeaders: git archive's single pax global header, and a few more,
// are accepted within the limits and leave no trace in the tree.
func TestGlobalHeaders(t *testing.T) {
	ents := append(globals(3), dir("o/"), file("o/a", "x"))
	dest, res, err := extract(t, tgz(t, ents...), Options{Limits: inspect.Limits{MaxMembers: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes != 1 {
		t.Errorf("result %+v", res)
	}
	if got, _ := os.ReadDir(dest); len(got) != 1 || got[0].Name() != "a" {
		t.Errorf("tree holds %v", got)
	}
}
