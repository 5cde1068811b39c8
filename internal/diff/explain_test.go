package diff_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// archive compiles one object per source (name without ".o" -> C
// source) for triple and archives them in order.
func archive(t *testing.T, tc testfixture.Toolchain, triple string, srcs [][2]string) string {
	t.Helper()
	dir := t.TempDir()
	var objs []string
	for _, s := range srcs {
		objs = append(objs, tc.Compile(t, dir, triple, s[0], s[1]))
	}
	return tc.Archive(t, "", false, filepath.Join(dir, "lib.a"), objs...)
}

// summary is the differences one a line, each as path(member): detail.
func summary(diffs []diff.Difference) string {
	var b strings.Builder
	for _, d := range diffs {
		loc := d.Path
		if d.Member != "" {
			loc += "(" + d.Member + ")"
		}
		b.WriteString("\n  " + loc + ": " + d.Detail)
	}
	return b.String()
}

func TestCompareTreesNamesMemberSectionString(t *testing.T) {
	tc := testfixture.NeedToolchain(t)
	same := [2]string{"libcrypto-lib-a", "int a(void){return 1;}"}
	la := archive(t, tc, "arm64-apple-macos11", [][2]string{same, {"libcrypto-lib-cversion", `const char *d = "built on: Tue Aug 25 11:39:28 2026 UTC";`}})
	lb := archive(t, tc, "arm64-apple-macos11", [][2]string{same, {"libcrypto-lib-cversion", `const char *d = "built on: Mon Nov 30 06:00:00 2026 UTC";`}})
	ta, tb := t.TempDir(), t.TempDir()
	for _, x := range []struct{ tree, lib string }{{ta, la}, {tb, lb}} {
		os.MkdirAll(filepath.Join(x.tree, "lib"), 0o755)
		b, _ := os.ReadFile(x.lib)
		os.WriteFile(filepath.Join(x.tree, "lib", "libcrypto.a"), b, 0o644)
		os.WriteFile(filepath.Join(x.tree, "same.h"), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(tb, "extra.pc"), []byte("prefix=/tmp/rB"), 0o644)
	_, diffs, err := diff.CompareTrees(context.Background(), ta, tb)
	if err != nil {
		t.Fatal(err)
	}
	got := summary(diffs)
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
	x := archive(t, tc, "x86_64-apple-macos10.12", [][2]string{same})
	fa := tc.LipoCreate(t, filepath.Join(t.TempDir(), "fa.a"), x, la)
	fb := tc.LipoCreate(t, filepath.Join(t.TempDir(), "fb.a"), x, lb)
	ra, _ := os.ReadFile(fa)
	rb, _ := os.ReadFile(fb)
	d := diff.Explain("libcrypto.a", ra, rb)
	if len(d) != 1 || d[0].Member != "arm64:libcrypto-lib-cversion.o" || d[0].Offset <= 0 {
		t.Errorf("universal diff = %v", d)
	}
}

func TestCompareTextFile(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "libcrypto.pc"), []byte("prefix=/opt/a\n"), 0o644)
	os.WriteFile(filepath.Join(b, "libcrypto.pc"), []byte("prefix=/opt/b\n"), 0o644)
	files, d, err := diff.CompareTrees(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 1 || !strings.Contains(summary(d), "libcrypto.pc: first difference at byte 12") || d[0].Offset != 12 {
		t.Errorf("got %v", d)
	}
	if !slices.Equal(files, []string{"libcrypto.pc"}) {
		t.Errorf("files = %q", files)
	}
	_, d, _ = diff.CompareTrees(context.Background(), a, a)
	if len(d) != 0 {
		t.Errorf("a tree differs from itself: %v", d)
	}
}

func TestFindStrings(t *testing.T) {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "a"), []byte("xx/tmp/build-1/yy"), 0o644)
	os.WriteFile(filepath.Join(d, "b"), []byte("clean"), 0o644)
	hits, err := diff.FindStrings(context.Background(), d, []string{"/tmp/build-1", "/tmp/build-2"})
	if err != nil || len(hits) != 1 || hits[0].String() != `FAIL a: contains "/tmp/build-1"` {
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
	files, d, err := diff.CompareTarballs(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"x/", "x/include/", "x/include/a.h"}) {
		t.Errorf("files = %q", files)
	}
	got := summary(d)
	for _, want := range []string{"x/include/a.h: tar header mtime: 1970-01-01T00:16:40Z vs 1970-01-01T00:33:20Z", "x/: tar header mtime"} {
		if !strings.Contains(got, want) {
			t.Errorf("differences lack %q:%s", want, got)
		}
	}
	if _, d, _ := diff.CompareTarballs(context.Background(), a, a); len(d) != 0 {
		t.Errorf("a tarball differs from itself: %v", d)
	}
	os.WriteFile(filepath.Join(tree, "include", "a.h"), []byte("#define A 2\n"), 0o644)
	c := write(time.Unix(1000, 0))
	_, d, _ = diff.CompareTarballs(context.Background(), a, c)
	if len(d) != 1 || d[0].Path != "x/include/a.h" || !strings.Contains(d[0].Detail, "first difference at byte 10") {
		t.Errorf("content difference: %v", d)
	}
}

// TestDependsOnNoBuild: comparing two artifacts stands on the artifact
// and binary readers alone, never on the build (pipeline) nor on
// verify:reproducible (repro), which use the comparer, not the reverse.
func TestDependsOnNoBuild(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/osslbuild/osslbuild/internal/binary/inspect") {
		t.Fatalf("go list -deps names no inspect: not the list of diff's dependencies:\n%s", out)
	}
	for _, d := range deps {
		for _, banned := range []string{"/internal/pipeline", "/internal/repro"} {
			if strings.HasSuffix(d, banned) || strings.Contains(d, banned+"/") {
				t.Errorf("internal/diff depends on %s", d)
			}
		}
	}
}
