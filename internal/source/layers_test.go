package source_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

const module = "github.com/osslbuild/osslbuild"

// deps are the packages pattern builds with (go list -deps: non-test
// files only, so a test of the sources may still load a recipe).
func deps(t *testing.T, pattern string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pattern)
	cmd.Dir = testfixture.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps %s: %v\n%s", pattern, err, stderr)
	}
	return strings.Fields(string(out))
}

// TestBelowTheRecipe: the sources are a layer below the recipe, which
// imports source/signature and source/release; internal/source and its
// packages importing internal/recipe would make the layers a cycle.
func TestBelowTheRecipe(t *testing.T) {
	const recipe = module + "/internal/recipe"
	src := deps(t, module+"/internal/source/...")
	// The listing must have found the sources, or it passes vacuously.
	if !slices.Contains(src, module+"/internal/source/release") || !slices.Contains(src, module+"/internal/source") {
		t.Fatalf("go list -deps internal/source/... named neither internal/source nor its release:\n%s", strings.Join(src, "\n"))
	}
	if slices.Contains(src, recipe) {
		t.Errorf("internal/source/... imports %s; what the sources need of a recipe belongs below it (internal/source/release)", recipe)
	}
	// And the recipe stands on the release the sources take.
	if !slices.Contains(deps(t, recipe), module+"/internal/source/release") {
		t.Errorf("%s does not import internal/source/release: recipe.Release is that type", recipe)
	}
}
