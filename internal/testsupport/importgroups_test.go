package testsupport_test

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// importKind orders import groups as goimports -local writes them: the
// standard library, other modules, then this module.
func importKind(path string) int {
	switch {
	case within(path, module):
		return 2
	case strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return 1
	}
	return 0
}

// TestImportGroups: every tracked Go file imports the standard library
// first, then other modules, then osslbuild's own packages, each kind in
// groups of its own (goimports -local github.com/osslbuild/osslbuild).
func TestImportGroups(t *testing.T) {
	root := testfixture.RepoRoot()
	out, err := exec.Command("git", "-C", root, "ls-files", "*.go").Output()
	if err != nil {
		testfixture.Missing(t, "git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 100 {
		t.Fatalf("git ls-files lists %d Go files", len(files))
	}
	for _, f := range files {
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, filepath.Join(root, f), nil, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		highest, prevKind, prevLine := -1, -1, 0
		for _, im := range af.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			k, line := importKind(path), fset.Position(im.Pos()).Line
			switch {
			case k < highest:
				t.Errorf("%s:%d: %s comes after a later group (want the standard library, other modules, then %s)", f, line, path, module)
			case prevKind >= 0 && k != prevKind && line == prevLine+1:
				t.Errorf("%s:%d: %s shares a group with imports of another kind", f, line, path)
			}
			highest, prevKind, prevLine = max(highest, k), k, line
		}
	}
}
