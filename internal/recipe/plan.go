package recipe

import "github.com/osslbuild/osslbuild/internal/platform"

// Plan is one release built for one target: everything the build stages
// need, and the expectations the validator holds the result against.
type Plan struct {
	Recipe  *Recipe
	Release Release
	// Slice is the target with its options resolved for the release: the
	// one value that defines the slice, written verbatim into the manifest.
	Slice platform.Slice
	// CallerOptions reports that the common options are the caller's
	// (PlanFor with options), not the recipe's.
	CallerOptions bool
}

// Plan resolves the release (""=default) and target into a Plan with the
// recipe's options.
func (r *Recipe) Plan(ver, target string) (*Plan, error) {
	rel, err := r.Release(ver)
	if err != nil {
		return nil, err
	}
	return r.PlanFor(rel, target, nil)
}
