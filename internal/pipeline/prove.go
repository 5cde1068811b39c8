package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// Prove holds a published artifact directory to what this osslbuild would
// establish of it now: every file against its manifest, then the proof
// stages of variant v (validation with the machine code, the link) for a
// slice, or for a universal artifact each slice validated inside the fat
// libraries and linked. It is what the tests run over a fixture built by an
// earlier run before they use it.
func Prove(ctx context.Context, s Settings, rt Runtime, dir string, v *Variant) error {
	r, err := newRun(s, rt)
	if err != nil {
		return err
	}
	m, err := artifact.Verify(ctx, dir)
	if err != nil {
		return err
	}
	if len(m.Slices) > 0 {
		var errs []error
		for _, lib := range artifact.Libraries {
			var exps []validate.Expect
			for _, sm := range m.Slices {
				exps = append(exps, universal.Expect(sm, lib))
			}
			if _, err := validate.UniversalContext(ctx, filepath.Join(dir, "lib", lib), exps); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		_, err := r.linkTree(ctx, dir, m.Parts())
		return err
	}
	rel, _, err := r.recipe.Resolve(m.OpenSSL.Version, m.OpenSSL.SHA256)
	if err != nil {
		return err
	}
	p, err := r.recipe.PlanFor(rel, m.Target.Name, m.Target.Options)
	if err != nil {
		return err
	}
	j := &job{run: r, plan: p, name: m.Name, dir: dir}
	for _, st := range v.proofs() {
		if err := st.run(ctx, j); err != nil {
			return fmt.Errorf("%s: %s: %w", m.Name, st.name, err)
		}
	}
	return nil
}
