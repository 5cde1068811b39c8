package rebuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/diff"
)

// TestReportFilesNamesSides: verify:rebuild's lines, explained by diff's
// comparer, call the artifact and the rebuild by name, and pass only the
// files that are the same.
func TestReportFilesNamesSides(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for dir, files := range map[string]map[string]string{
		a: {"same.h": "x", "lib.pc": "prefix=/opt/a\n", "gone.h": "y"},
		b: {"same.h": "x", "lib.pc": "prefix=/opt/b\n", "new.h": "z"},
	} {
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var report strings.Builder
	r := &rebuilder{res: &Result{Log: diff.Log{W: &report, Sides: sides}}}
	r.reportFiles(context.Background(), a, b)
	want := []string{
		"FAIL gone.h: only in the artifact",
		`FAIL lib.pc: first difference at byte 12: "prefix=/opt/a\n" vs "prefix=/opt/b\n"`,
		"FAIL new.h: only in the rebuild",
		"PASS same.h",
	}
	if got := strings.Split(strings.TrimSpace(report.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("report:\n%s\nwant:\n%s", report.String(), strings.Join(want, "\n"))
	}
}
