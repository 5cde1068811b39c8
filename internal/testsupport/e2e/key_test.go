package e2e_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestKeyFollowsTheBuildPath: the fixtures' key changes with what decides
// a build's bytes (the Configure invocation, the recipe, the fixtures' own
// settings) and not with what
// only judges or reports them (check, the rules): those run over every
// fixture on every use instead.
func TestKeyFollowsTheBuildPath(t *testing.T) {
	root := testfixture.RepoRoot()
	dirs, err := e2e.BuildPath(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"internal/configure", "internal/pipeline", "internal/toolchain", "internal/source/fetch", "internal/platform", "internal/bench", "internal/testsupport/e2e"} {
		if !slices.Contains(dirs, want) {
			t.Errorf("build path %v lacks %s", dirs, want)
		}
	}
	for _, not := range append([]string{"internal/check", "internal/report"}, e2e.Verdicts...) {
		if slices.Contains(dirs, not) {
			t.Errorf("build path holds %s", not)
		}
	}
	tools := []string{"clang-14: Debian clang version 14.0.6"}
	base := e2e.KeyOf(root, dirs, tools, os.ReadFile)
	edited := func(rel string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			b, err := os.ReadFile(p)
			if p == filepath.Join(root, filepath.FromSlash(rel)) {
				b = append(b, "\n// edited\n"...)
			}
			return b, err
		}
	}
	for _, tt := range []struct {
		file    string
		changes bool
	}{
		{"internal/configure/configure.go", true},
		{"recipes/openssl.toml", true},
		{"smoke/smoke.c", true},
		{"internal/testsupport/e2e/linux.go", true}, // the Linux fixtures' options
		{"internal/check/render.go", false},
		{"internal/binary/validate/rules.go", false},
		{"internal/configure/configure_test.go", false},
	} {
		if _, err := os.Stat(filepath.Join(root, tt.file)); err != nil {
			t.Fatal(err)
		}
		if got := e2e.KeyOf(root, dirs, tools, edited(tt.file)) != base; got != tt.changes {
			t.Errorf("editing %s changes the key: %v, want %v", tt.file, got, tt.changes)
		}
	}
	if e2e.KeyOf(root, dirs, []string{"clang-14: Debian clang version 14.0.7"}, os.ReadFile) == base {
		t.Error("another compiler keeps the key")
	}
}
