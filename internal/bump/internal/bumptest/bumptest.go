// Package bumptest holds the recipe text that the tests of bump and of its
// proposals command start from.
package bumptest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	head := "[[release]]\nversion = \"" + real + "\"\n"
	i := strings.Index(text, head)
	if i < 0 {
		t.Fatalf("recipe has no block for %s", real)
	}
	end := strings.Index(text[i:], "\n\n")
	if end < 0 {
		end = len(text) - i - 1
	}
	sum := sha256.Sum256([]byte("stand-in for OpenSSL " + older + ", never downloaded"))
	block := fmt.Sprintf("[[release]]\nversion = %q\nsha256 = %q\nsize = 1\nurls = [\n  %q,\n  %q,\n]\nsigners = [%q]",
		older, hex.EncodeToString(sum[:]), urls[0], urls[1], keys.Fingerprints()[0])
	return text[:i] + block + text[i+end:]
}
