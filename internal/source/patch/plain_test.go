package patch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// TestTraditionalDiff: a patch made with diff -u (no git header) names files
// with their a/ b/ prefixes; they must be stripped as patch -p1 does, for a
// change and for a new file alike.
func TestTraditionalDiff(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte("a\n"), 0o644)
	fsys := fstest.MapFS{"001.patch": {Data: []byte("Applies-To: >= 1.0.0\n\n" +
		"--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n" +
		"--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1 @@\n+n\n")}}
	if _, err := Apply(context.Background(), fsys, "1.0.0", dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "x.txt")); string(b) != "b\n" {
		t.Errorf("x.txt = %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "sub", "new.txt")); err != nil || string(b) != "n\n" {
		t.Errorf("sub/new.txt: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Error("created a b/ directory: prefix not stripped")
	}
}
