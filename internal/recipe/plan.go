package recipe

import (
	"fmt"

	"github.com/hashicorp/go-version"
)

// Plan is one release built for one target: everything the build stages
// need, and the expectations the validator holds the result against.
type Plan struct {
	Recipe  *Recipe
	Release Release
	Target  Target
	// Options are the Configure options valid for this release, in recipe
	// order (common options, then the target's).
	Options []string
	// Skipped are recipe options left out because this release does not
	// accept them (recorded so a manifest shows why they are absent).
	Skipped []string
}

// Plan resolves the release (""=default) and target into a Plan.
func (r *Recipe) Plan(ver, target string) (*Plan, error) {
	rel, err := r.Release(ver)
	if err != nil {
		return nil, err
	}
	t, err := r.Target(target)
	if err != nil {
		return nil, err
	}
	v, err := version.NewVersion(rel.Version)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: release %s: %w", r.Path, rel.Version, err)
	}
	p := &Plan{Recipe: r, Release: rel, Target: t}
	seen := map[string]bool{}
	for _, o := range append(append([]Option{}, r.Options...), t.Options...) {
		if !o.when.Check(v) {
			p.Skipped = append(p.Skipped, o.Name)
			continue
		}
		if !seen[o.Name] {
			seen[o.Name] = true
			p.Options = append(p.Options, o.Name)
		}
	}
	return p, nil
}
