package bump

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/osslver"
)

// Files of a proposal directory for the workflow's library job: what it
// builds (ProposalFacts, written with the proposal) and what it adds
// (ProposalLibraryDiff, appended to the body by
// scripts/bump-pull-requests.sh).
const (
	ProposalFacts       = "proposal.json"
	ProposalLibraryDiff = "library-diff.md"
)

// Facts are the versions a proposal compares: the series' previous pin
// ("" for a new series: nothing to compare) and the proposed release.
type Facts struct {
	Series  string `json:"series"`
	Pinned  string `json:"pinned"`
	Version string `json:"version"`
}

// ReadFacts reads dir's proposal.json, strictly: a file another job wrote
// decides what is built.
func ReadFacts(dir string) (Facts, error) {
	path := filepath.Join(dir, ProposalFacts)
	b, err := os.ReadFile(path)
	if err != nil {
		return Facts{}, fmt.Errorf("proposal %s: %w", path, err)
	}
	var f Facts
	if err := json.Unmarshal(b, &f); err != nil {
		return Facts{}, fmt.Errorf("proposal %s: %w", path, err)
	}
	if !seriesRe.MatchString(f.Series) || !osslver.IsRelease(f.Version) || seriesOf(f.Version) != f.Series ||
		(f.Pinned != "" && (!osslver.IsRelease(f.Pinned) || seriesOf(f.Pinned) != f.Series)) {
		return Facts{}, fmt.Errorf("proposal %s: series %q, pinned %q, version %q: want releases of one series X.Y", path, f.Series, f.Pinned, f.Version)
	}
	if filepath.Base(dir) != f.Series {
		return Facts{}, fmt.Errorf("proposal %s: series %q in directory %s", path, f.Series, filepath.Base(dir))
	}
	return f, nil
}

// WriteLibraryDiff compares the artifacts old and new, built for the
// proposal in dir (the previous pin's and the proposed release's: each is
// verified against its manifest and must be of the version the proposal
// names), and writes dir/library-diff.md, whole or not at all.
func WriteLibraryDiff(ctx context.Context, dir, old, new string) error {
	f, err := ReadFacts(dir)
	if err != nil {
		return err
	}
	if f.Pinned == "" {
		return fmt.Errorf("proposal %s: OpenSSL %s starts a new series: there is no previous pin to compare with", dir, f.Version)
	}
	work, err := os.MkdirTemp("", "librarydiff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	// Each side verified once, held to its version, then compared.
	var sides [2]*diff.Side
	for i, side := range []struct{ path, want string }{{old, f.Pinned}, {new, f.Version}} {
		s, err := diff.Open(ctx, side.path, filepath.Join(work, fmt.Sprint(i)))
		if err != nil {
			return fmt.Errorf("proposal %s: %w", dir, err)
		}
		if got := s.Manifest.OpenSSL.Version; got != side.want {
			return fmt.Errorf("proposal %s: artifact %s is of OpenSSL %s, the proposal compares %s", dir, side.path, got, side.want)
		}
		sides[i] = s
	}
	r, err := diff.CompareSides(ctx, sides[0], sides[1])
	if err != nil {
		return fmt.Errorf("proposal %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+ProposalLibraryDiff+"-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// The body's section: the Markdown diff of the pinned release's
	// artifact and the proposed one's.
	_, werr := fmt.Fprintf(tmp, "### What changes in the libraries\n\n`go tool mage diff` of the %s artifact and the %s one, built by the same osslbuild from the same recipe:\n\n%s\n", f.Pinned, f.Version, diff.Markdown(r))
	if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Close()); err != nil {
		return fmt.Errorf("proposal %s: %w", dir, err)
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, ProposalLibraryDiff))
}
