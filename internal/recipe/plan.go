package recipe

// Plan is one release built for one target: everything the build stages
// need, and the expectations the validator holds the result against.
type Plan struct {
	Recipe  *Recipe
	Release Release
	Target  Target
	// Options are the Configure options valid for this release, in order
	// (the common options, the recipe's or the caller's, then the target's).
	Options []string
	// Skipped are options left out because the recipe limits them to
	// releases other than this one (recorded so a manifest shows why they
	// are absent).
	Skipped []string
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
