package testfixture

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModuleAbove: under -trimpath RepoRoot walks up from the working
// directory to the go.mod of this module, past a nested module's (a
// testdata tree) and past a go.mod that names none.
func TestModuleAbove(t *testing.T) {
	root := t.TempDir()
	WriteTree(t, root, map[string]string{
		"go.mod":                        "module " + modulePath + "\n\ngo 1.26\n",
		"internal/x/testdata/m/go.mod":  "module example.com/other\n",
		"internal/x/testdata/m/a/b.txt": "",
		"internal/y/go.mod":             "// no module line\n",
	})
	for _, tt := range []struct {
		from string
		want string
		ok   bool
	}{
		{".", root, true},
		{"internal/x/testdata/m/a", root, true},
		{"internal/y", root, true},
	} {
		got, ok := moduleAbove(filepath.Join(root, tt.from))
		if got != tt.want || ok != tt.ok {
			t.Errorf("moduleAbove(%s) = %q, %v; want %q, %v", tt.from, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := moduleAbove(filepath.Join(root, "internal/x/testdata/m")); ok && got != root {
		t.Errorf("moduleAbove stopped at another module's go.mod: %s", got)
	}
	if _, ok := moduleAbove(t.TempDir()); ok {
		t.Error("moduleAbove found this module above a directory outside it")
	}
	if got := RepoRoot(); got == "" || modfile(mustReadFile(t, filepath.Join(got, "go.mod"))) != modulePath {
		t.Errorf("RepoRoot() = %q, not this module's root", got)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
