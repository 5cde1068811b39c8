package repro

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// archive compiles one object per source (name -> C source) for triple and
// archives them in order.
func archive(t *testing.T, triple string, srcs [][2]string) string {
	t.Helper()
	dir := t.TempDir()
	var objs []string
	for _, s := range srcs {
		c := filepath.Join(dir, s[0]+".c")
		os.WriteFile(c, []byte(s[1]), 0o644)
		o := filepath.Join(dir, s[0])
		if out, err := exec.Command("clang-14", "-target", triple, "-O2", "-c", "-o", o, c).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		objs = append(objs, o)
	}
	lib := filepath.Join(dir, "lib.a")
	if out, err := exec.Command("llvm-ar-14", append([]string{"rcs", lib}, objs...)...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return lib
}

func TestCompareTreesNamesMemberSectionString(t *testing.T) {
	testfixture.Tools(t, "clang-14", "llvm-ar-14", "llvm-lipo-14")
	same := [2]string{"libcrypto-lib-a.o", "int a(void){return 1;}"}
	la := archive(t, "arm64-apple-macos11", [][2]string{same, {"libcrypto-lib-cversion.o", `const char *d = "built on: Tue Aug 25 11:39:28 2026 UTC";`}})
	lb := archive(t, "arm64-apple-macos11", [][2]string{same, {"libcrypto-lib-cversion.o", `const char *d = "built on: Mon Nov 30 06:00:00 2026 UTC";`}})
	ta, tb := t.TempDir(), t.TempDir()
	for _, x := range []struct{ tree, lib string }{{ta, la}, {tb, lb}} {
		os.MkdirAll(filepath.Join(x.tree, "lib"), 0o755)
		b, _ := os.ReadFile(x.lib)
		os.WriteFile(filepath.Join(x.tree, "lib", "libcrypto.a"), b, 0o644)
		os.WriteFile(filepath.Join(x.tree, "same.h"), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(tb, "extra.pc"), []byte("prefix=/tmp/rB"), 0o644)
	diffs, err := CompareTrees(context.Background(), ta, tb)
	if err != nil {
		t.Fatal(err)
	}
	got := Summary(diffs, 10)
	for _, want := range []string{
		"extra.pc: only in the second build",
		"lib/libcrypto.a(libcrypto-lib-cversion.o): section __TEXT,__cstring differs",
		`"built on: Tue Aug 25 11:39:28 2026 UTC" vs "built on: Mon Nov 30 06:00:00 2026 UTC"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:%s", want, got)
		}
	}
	if strings.Contains(got, "libcrypto-lib-a.o") || strings.Contains(got, "same.h") {
		t.Errorf("report names identical parts:%s", got)
	}

	// In a universal file, the member is named with its slice.
	x := archive(t, "x86_64-apple-macos10.12", [][2]string{same})
	fa, fb := filepath.Join(t.TempDir(), "fa.a"), filepath.Join(t.TempDir(), "fb.a")
	for _, f := range []struct{ out, arm string }{{fa, la}, {fb, lb}} {
		if out, err := exec.Command("llvm-lipo-14", "-create", x, f.arm, "-output", f.out).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	ra, _ := os.ReadFile(fa)
	rb, _ := os.ReadFile(fb)
	d := CompareBytes("libcrypto.a", ra, rb)
	if len(d) != 1 || d[0].Member != "arm64:libcrypto-lib-cversion.o" {
		t.Errorf("universal diff = %v", d)
	}
}

func TestCompareTextFile(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "libcrypto.pc"), []byte("prefix=/opt/a\n"), 0o644)
	os.WriteFile(filepath.Join(b, "libcrypto.pc"), []byte("prefix=/opt/b\n"), 0o644)
	d, err := CompareTrees(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 1 || !strings.Contains(d[0].String(), "libcrypto.pc: first difference at byte 12") {
		t.Errorf("got %v", d)
	}
	d, _ = CompareTrees(context.Background(), a, a)
	if len(d) != 0 {
		t.Errorf("a tree differs from itself: %v", d)
	}
}

func TestFindStrings(t *testing.T) {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "a"), []byte("xx/tmp/build-1/yy"), 0o644)
	os.WriteFile(filepath.Join(d, "b"), []byte("clean"), 0o644)
	hits, err := FindStrings(context.Background(), d, []string{"/tmp/build-1", "/tmp/build-2"})
	if err != nil || len(hits) != 1 || !strings.HasPrefix(hits[0], "a contains") {
		t.Errorf("hits = %v, %v", hits, err)
	}
}

// TestCompareTarballsNamesHeaderFields: two tarballs of identical trees that
// differ only in their entries' headers are explained field by field, not
// as "the encoding differs"; a content difference names the entry.
func TestCompareTarballsNamesHeaderFields(t *testing.T) {
	tree := t.TempDir()
	os.MkdirAll(filepath.Join(tree, "include"), 0o755)
	os.WriteFile(filepath.Join(tree, "include", "a.h"), []byte("#define A 1\n"), 0o644)
	write := func(mtime time.Time) string {
		p := filepath.Join(t.TempDir(), "x.tar.gz")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := artifact.WriteTarball(context.Background(), tree, "x", mtime, f); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write(time.Unix(1000, 0)), write(time.Unix(2000, 0))
	d, err := CompareTarballs(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := Summary(d, 10)
	for _, want := range []string{"x/include/a.h: tar header mtime: 1970-01-01T00:16:40Z vs 1970-01-01T00:33:20Z", "x/: tar header mtime"} {
		if !strings.Contains(got, want) {
			t.Errorf("differences lack %q:%s", want, got)
		}
	}
	if d, _ := CompareTarballs(context.Background(), a, a); len(d) != 0 {
		t.Errorf("a tarball differs from itself: %v", d)
	}
	os.WriteFile(filepath.Join(tree, "include", "a.h"), []byte("#define A 2\n"), 0o644)
	c := write(time.Unix(1000, 0))
	d, _ = CompareTarballs(context.Background(), a, c)
	if len(d) != 1 || d[0].Path != "x/include/a.h" || !strings.Contains(d[0].Detail, "first difference at byte 10") {
		t.Errorf("content difference: %v", d)
	}
}
