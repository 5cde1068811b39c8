// Package bumptest holds the recipe text that the tests of bump and of its
// proposals command start from.
package bumptest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/keys"
)

// RepoRecipe is the text of the repository's recipe.
func RepoRecipe(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "recipes", "openssl.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// StandIn replaces the [[release]] block of real in the recipe text with one
// for the older release older, offered at urls and signed by the first
// pinned key: the recipe before real came out. Its sha256 and size pin no
// real tarball; nothing downloads it (a series is judged by its newest
// pinned version, and only a newer release is fetched).
func StandIn(t *testing.T, text, real, older string, urls []string) string {
	t.Helper()
	return testfixture.StandInRelease(t, text, real, older, urls, keys.Fingerprints()[0])
}
