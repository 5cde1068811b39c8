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
		_, err := r.proveUniversal(ctx, dir, m)
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

// proveUniversal validates every slice of a universal artifact inside its
// fat libraries, as the slice's manifest expects, and links each, returning
// the link records.
func (r *run) proveUniversal(ctx context.Context, dir string, m *artifact.Manifest) ([]artifact.LinkCheck, error) {
	var errs []error
	for _, lib := range artifact.Libraries {
		var exps []validate.Expect
		for _, sm := range m.Slices {
			if sm == nil {
				return nil, fmt.Errorf("%s: manifest has an empty slice entry", m.Name)
			}
			exps = append(exps, universal.Expect(sm, lib))
		}
		if _, err := validate.UniversalContext(ctx, filepath.Join(dir, "lib", lib), exps); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return r.linkTree(ctx, dir, m.Parts())
}
