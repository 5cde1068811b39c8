package magetest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

const pbsExample = "recipes/examples/python-build-standalone.toml"

// TestRecipeFlag: -recipe=FILE reaches the targets as a user types it: a
// consumer's recipe picks the release source:fetch verifies.
// (testdata/script/recipe-refusals.txtar holds the refusals: a hostile
// recipe, a FIFO, a directory.)
func TestRecipeFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile")
	}
	testfixture.Get(t, "3.5.7")
	example := filepath.Join(testfixture.RepoRoot(), pbsExample)
	env := []string{"OSSLBUILD_MIRROR=" + testfixture.Dir(), "OSSLBUILD_CACHE=" + t.TempDir(), "OSSLBUILD_OFFLINE=1"}
	out, code := mage(t, env, "source:fetch", "-recipe="+example)
	if code != 0 || !strings.Contains(out, "openssl-3.5.7.tar.gz sha256 a8c0d28a") {
		t.Errorf("source:fetch -recipe=%s (default 3.5.7): exit %d\n%s", pbsExample, code, out)
	}
}

// TestRecipeBumpConsumerFile: recipe:bump -recipe=FILE adds a verified
// release to the consumer's own file, keeping its comments, and leaves
// osslbuild's recipe alone.
func TestRecipeBumpConsumerFile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile")
	}
	old := testfixture.Get(t, "3.0.20")
	testfixture.Get(t, "3.5.7")
	b, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), pbsExample))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "[[release]]")
	text = strings.Replace(text[:i], `default = "3.5.7"`, `default = "3.0.20"`, 1) +
		"[[release]]\nversion = \"3.0.20\"\nsha256 = \"" + old.SHA256 + "\"\nsize = " + strconv.Itoa(int(old.Size)) +
		"\nurls = [\"https://www.openssl.org/source/old/3.0/openssl-3.0.20.tar.gz\"]\nsigners = [\"BA5473A2B0587B07FB27CF2D216094DFD0CB81EF\", \"B146647E45A7B33947AB226B2A2C87D161692D40\"]\n"
	path := filepath.Join(t.TempDir(), "pbs.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "recipes", "openssl.toml"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"OSSLBUILD_MIRROR=" + testfixture.Dir(), "OSSLBUILD_CACHE=" + t.TempDir(), "OSSLBUILD_OFFLINE=1"}
	out, code := mage(t, env, "recipe:bump", "3.5.7", "-recipe="+path)
	if code != 0 {
		t.Fatalf("recipe:bump 3.5.7 -recipe=%s: exit %d\n%s", path, code, out)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "# python-build-standalone's OpenSSL") || !strings.Contains(string(got), "# pbs's --prefix") {
		t.Errorf("the bump lost the file's comments:\n%s", got)
	}
	r, err := recipe.Parse(path, got)
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := r.Release("3.5.7"); err != nil || rel.SHA256 != testfixture.Pinned["3.5.7"].SHA256 || r.Default != "3.5.7" {
		t.Errorf("bumped recipe: 3.5.7 %+v (%v), default %s", rel, err, r.Default)
	}
	if now, _ := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "recipes", "openssl.toml")); string(now) != string(ours) {
		t.Error("recipe:bump -recipe=FILE changed recipes/openssl.toml")
	}
}
