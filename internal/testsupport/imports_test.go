package testsupport_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

const (
	module  = "github.com/osslbuild/osslbuild"
	support = module + "/internal/testsupport"
)

// TestOnlyTestsImportTestSupport keeps test support out of what osslbuild
// builds: no non-test file outside internal/testsupport may import a
// package under it. go list's Imports are those of the non-test files, so
// _test.go files may import it freely. The mage tag adds magefile.go.
func TestOnlyTestsImportTestSupport(t *testing.T) {
	for _, tags := range []string{"", "mage"} {
		cmd := exec.Command("go", "list", "-tags="+tags, "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
		cmd.Dir = testfixture.RepoRoot()
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("go list -tags=%q: %v\n%s", tags, err, stderr)
		}
		pkgs := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			pkgs++
			pkg := fields[0]
			if within(pkg, support) {
				continue
			}
			for _, imp := range fields[1:] {
				if within(imp, support) {
					t.Errorf("-tags=%q: %s (not a test file) imports %s: test support belongs only in _test.go files or under internal/testsupport", tags, pkg, imp)
				}
			}
		}
		// A listing that names nothing would pass vacuously.
		if pkgs < 2 {
			t.Fatalf("go list -tags=%q named %d packages:\n%s", tags, pkgs, out)
		}
	}
}

// within reports whether pkg is dir or a package below it.
func within(pkg, dir string) bool {
	return pkg == dir || strings.HasPrefix(pkg, dir+"/")
}
