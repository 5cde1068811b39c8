package bump

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
)

// TestBodyCarriesLibraryDiff: a proposal given the previous pin's and the
// new release's artifacts (real mini builds, the newer with an option
// more) writes a body.md that shows what changes in the libraries; an
// artifact that does not match its manifest is refused, naming the file.
func TestBodyCarriesLibraryDiff(t *testing.T) {
	old := minitest.Build(t, "arm64", minitest.Options{})
	cur := minitest.Build(t, "arm64", minitest.Options{Version: "9.9.10", Options: []string{"no-shared", "no-idea"}})
	p := Proposal{Series: "9.9", Pinned: "9.9.9", Result: &Result{
		Recipe: "recipes/openssl.toml", Release: recipe.Release{Version: "9.9.10"},
		OldDefault: "9.9.9", NewDefault: "9.9.9", After: []byte("recipe\n"), Diff: "+version = \"9.9.10\"\n"}}
	if !strings.Contains(p.Body(), "+version") || strings.Contains(p.Body(), "What changes in the libraries") {
		t.Fatalf("body without a library diff:\n%s", p.Body())
	}
	if err := p.AttachDiff(context.Background(), old.Tarball, cur.Tarball); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteProposals(dir, []Proposal{p}); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(filepath.Join(dir, "9.9", ProposalBody))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### What changes in the libraries",
		"of the 9.9.9 artifact and the 9.9.10 one",
		"| OpenSSL | 9.9.9 | 9.9.10 |",
		"#### options",
		"+ no-idea",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body.md lacks %q:\n%s", want, body)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.CopyFS(bad, os.DirFS(cur.Dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(bad, "lib", "libssl.a")); err != nil {
		t.Fatal(err)
	}
	q := Proposal{Series: "9.9", Pinned: "9.9.9", Result: p.Result}
	if err := q.AttachDiff(context.Background(), old.Dir, bad); !errors.Is(err, artifact.ErrMismatch) || !strings.Contains(err.Error(), "lib/libssl.a") {
		t.Errorf("AttachDiff of a tampered artifact: %v, want a mismatch naming lib/libssl.a", err)
	}
	if q.LibraryDiff != "" {
		t.Errorf("a refused diff left %q in the body", q.LibraryDiff)
	}
}
