package repro_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/repro"
)

// TestCompareDistsPrintsOneLinePerFile: verify:reproducible prints, as
// verify:rebuild does, one PASS or FAIL line per tarball entry, one per
// tarball, and one FAIL per output that names a build directory.
func TestCompareDistsPrintsOneLinePerFile(t *testing.T) {
	distA, distB := t.TempDir(), t.TempDir()
	tarball := func(dist, name, header string) string {
		tree := t.TempDir()
		if err := os.WriteFile(filepath.Join(tree, "a.h"), []byte(header), 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dist, name+".tar.gz")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := artifact.WriteTarball(context.Background(), tree, name, time.Unix(1000, 0), f); err != nil {
			t.Fatal(err)
		}
		return p
	}
	xa, xb := tarball(distA, "x", "A\n"), tarball(distB, "x", "B\n")
	tarball(distA, "y", "same\n")
	tarball(distB, "y", "same\n")
	if err := os.MkdirAll(filepath.Join(distB, "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(distB, "y", "lib.pc"), []byte("prefix=/leak/dir\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	log := &diff.Log{W: &out}
	if err := repro.CompareDists(context.Background(), []string{"x", "y"}, distA, distB, []string{"/leak/dir"}, log); err != nil {
		t.Fatal(err)
	}
	da, _ := ctxio.SHA256(context.Background(), xa, true)
	db, _ := ctxio.SHA256(context.Background(), xb, true)
	want := strings.Join([]string{
		"PASS x/",
		`FAIL x/a.h: first difference at byte 0: "A\n" vs "B\n"`,
		"FAIL x.tar.gz: " + da + " vs " + db,
		"PASS y/",
		"PASS y/a.h",
		"PASS y.tar.gz",
		`FAIL y/lib.pc: build directory leaked into the second build: contains "/leak/dir"`,
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if passed, failed := log.Count(); passed != 4 || failed != 3 {
		t.Errorf("count = %d PASS, %d FAIL, want 4, 3", passed, failed)
	}
}
