package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestPluginRecipeNotRun: a recipe whose flags load a compiler plugin is
// refused at file:line before anything is fetched, and the plugin never
// runs. The plugin is real (clang-14 builds it, its constructor leaves a
// file), and the control shows the flag would run it: 5392f1f accepted
// the recipe, and make would have.
func TestPluginRecipeNotRun(t *testing.T) {
	t.Parallel()
	tc := testfixture.NeedToolchain(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "plugin-ran")
	src := filepath.Join(dir, "plugin.c")
	// No headers: open(2) with O_WRONLY|O_CREAT, declared here.
	if err := os.WriteFile(src, []byte("int open(const char *, int, ...);\nint close(int);\n"+
		"__attribute__((constructor)) static void ran(void) { int fd = open(MARKER, 0101, 0644); if (fd >= 0) close(fd); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, "plugin.so")
	testfixture.Run(t, tc.Clang, "-shared", "-fPIC", `-DMARKER="`+marker+`"`, "-o", plugin, src)
	unit := filepath.Join(dir, "unit.c")
	if err := os.WriteFile(unit, []byte("int f(void) { return 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testfixture.Run(t, tc.Clang, "-fplugin="+plugin, "-c", unit, "-o", filepath.Join(dir, "unit.o"))
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: the plugin did not run under clang -fplugin=: %v", err)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	s := miniSettings(t, nil)
	b, err := os.ReadFile(s.Recipe)
	if err != nil {
		t.Fatal(err)
	}
	hostile := filepath.Join(t.TempDir(), "hostile.toml")
	text := strings.Replace(string(b), `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-fplugin=`+plugin+`"]`, 1)
	if err := os.WriteFile(hostile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Recipe = hostile
	_, err = pipeline.Slice(context.Background(), s, quiet(), "arm64", nil)
	want := hostile + `:10: targets.arm64.flags[1]: flag "-fplugin=` + plugin + `": loads code into the compiler: a compiler plugin`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want a refusal saying %q, got %v", want, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the plugin ran")
	}
	for _, d := range []string{s.Out, s.Work, s.Fetch.CacheDir} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the refused build created %s", d)
		}
	}
}
