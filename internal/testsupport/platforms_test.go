package testsupport_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// declared maps "package TestName" to the platforms the test's own body
// declares with testfixture.On (helpers declare for the tests that call
// them: see testfixture's Tool, Get, Realworld and e2e.Require).
func declared(t *testing.T) map[string][]string {
	t.Helper()
	root := testfixture.RepoRoot()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "On" {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || (x.Name != "testfixture") {
					return true
				}
				for _, a := range call.Args[1:] {
					if s, ok := a.(*ast.SelectorExpr); ok {
						key := "./" + filepath.ToSlash(rel) + " " + fn.Name.Name
						out[key] = append(out[key], s.Sel.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMacOSJob prints the tests ci.yml's macos job runs that need a Mac
// (they declare testfixture.MacOS), so a reader sees them without one:
//
//	go test -run '^TestMacOSJob$' -v ./internal/testsupport
//
// The job runs go test ./... there with CI=true: these may not skip; the
// tests that declare only Linux platforms skip naming them; every other
// test (pure Go) runs as it does everywhere.
func TestMacOSJob(t *testing.T) {
	var mac []string
	for k, ps := range declared(t) {
		if slices.Contains(ps, "MacOS") {
			mac = append(mac, k)
		}
	}
	sort.Strings(mac)
	t.Logf("the macos job's tests that need a Mac (testfixture.On(t, testfixture.MacOS)), each of which must run there:\n%s",
		strings.Join(mac, "\n"))
	for _, want := range []string{"./internal/toolchain TestMacOSNative"} {
		if !slices.Contains(mac, want) {
			t.Errorf("the macos job's list %q lacks %s", mac, want)
		}
	}
}
