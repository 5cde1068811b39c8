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

// TestLibraryDiffTampered: the body a proposal writes carries no library
// diff (the library job adds library-diff.md); given the previous pin's
// and the new release's artifacts (real mini builds), one that does not
// match its manifest is refused, naming the file, and nothing is written.
func TestLibraryDiffTampered(t *testing.T) {
	old := minitest.Build(t, "arm64", minitest.Options{})
	cur := minitest.Build(t, "arm64", minitest.Options{Version: "9.9.10", Options: []string{"no-shared", "no-idea"}})
	p := Proposal{Series: "9.9", Pinned: "9.9.9", Result: &Result{
		Recipe: "recipes/openssl.toml", Release: recipe.Release{Version: "9.9.10"},
		OldDefault: "9.9.9", NewDefault: "9.9.9", After: []byte("recipe\n"), Diff: "+version = \"9.9.10\"\n"}}
	if !strings.Contains(p.Body(), "+version") || strings.Contains(p.Body(), "What changes in the libraries") {
		t.Fatalf("body without a library diff:\n%s", p.Body())
	}
	props := t.TempDir()
	if err := WriteProposals(props, []Proposal{p}); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.CopyFS(bad, os.DirFS(cur.Dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(bad, "lib", "libssl.a")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(props, "9.9")
	if err := WriteLibraryDiff(context.Background(), dir, old.Dir, bad); !errors.Is(err, artifact.ErrMismatch) || !strings.Contains(err.Error(), "lib/libssl.a") {
		t.Errorf("WriteLibraryDiff of a tampered artifact: %v, want a mismatch naming lib/libssl.a", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ProposalLibraryDiff)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused comparison left %s: %v", ProposalLibraryDiff, err)
	}
}

// TestWriteLibraryDiff: the workflow's library job's step. WriteProposals
// records the versions a proposal compares (proposal.json); given the two
// artifacts built for them, WriteLibraryDiff writes library-diff.md, the
// body's section; artifacts of other versions (swapped), a new series and
// a proposal.json that does not hold one series are refused, naming the
// file, and write nothing.
func TestWriteLibraryDiff(t *testing.T) {
	old := minitest.Build(t, "arm64", minitest.Options{})
	cur := minitest.Build(t, "arm64", minitest.Options{Version: "9.9.10", Options: []string{"no-shared", "no-idea"}})
	res := &Result{Recipe: "recipes/openssl.toml", Release: recipe.Release{Version: "9.9.10"},
		OldDefault: "9.9.9", NewDefault: "9.9.9", After: []byte("recipe\n"), Diff: "+version = \"9.9.10\"\n"}
	props := t.TempDir()
	if err := WriteProposals(props, []Proposal{{Series: "9.9", Pinned: "9.9.9", Result: res}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(props, "9.9")
	f, err := ReadFacts(dir)
	if err != nil || f != (Facts{Series: "9.9", Pinned: "9.9.9", Version: "9.9.10"}) {
		t.Fatalf("ReadFacts = %+v, %v", f, err)
	}
	ctx := context.Background()
	if err := WriteLibraryDiff(ctx, dir, cur.Dir, old.Tarball); err == nil || !strings.Contains(err.Error(), "is of OpenSSL 9.9.10, the proposal compares 9.9.9") {
		t.Errorf("swapped artifacts: %v, want the versions named", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ProposalLibraryDiff)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused comparison left %s: %v", ProposalLibraryDiff, err)
	}
	if err := WriteLibraryDiff(ctx, dir, old.Dir, cur.Tarball); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, ProposalLibraryDiff))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### What changes in the libraries", "of the 9.9.9 artifact and the 9.9.10 one", "+ no-idea"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("%s lacks %q:\n%s", ProposalLibraryDiff, want, got)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left %s behind", e.Name())
		}
	}

	for _, c := range []struct{ name, facts, want string }{
		{"new series", `{"series":"9.9","pinned":"","version":"9.9.0"}`, "starts a new series"},
		{"two series", `{"series":"9.9","pinned":"9.8.1","version":"9.9.10"}`, "want releases of one series"},
		{"other directory", `{"series":"9.8","pinned":"9.8.1","version":"9.8.2"}`, `series "9.8" in directory 9.9`},
		{"not JSON", `{"series":`, "proposal.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "9.9")
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, ProposalFacts), []byte(c.facts), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := WriteLibraryDiff(ctx, d, old.Dir, cur.Dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("WriteLibraryDiff: %v, want %q", err, c.want)
			}
		})
	}
}
