package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// Universal2 builds the recipe's two macOS slices side by side under one
// make job budget, publishes them, and merges the published slices exactly
// as Merge would, so a merge of the same slices elsewhere gives the same
// bytes.
func Universal2(ctx context.Context, s Settings, rt Runtime) (*Result, error) {
	r, err := newRun(s, rt)
	if err != nil {
		return nil, err
	}
	targets, err := r.recipe.Universal2()
	if err != nil {
		return nil, err
	}
	var plans []*recipe.Plan
	for _, t := range targets {
		p, err := r.plan(ctx, t)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	jobs, err := build.NewJobs(r.Jobs)
	if err != nil {
		return nil, err
	}
	defer jobs.Close()
	b := budgeted{inner: r.builder(Osslbuild), jobs: jobs}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make([]*built, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done[i], errs[i] = b.build(ctx, p)
			if errs[i] != nil {
				cancel() // stop the other slice: the pair cannot be merged
			}
		}()
	}
	wg.Wait()
	for _, d := range done {
		if d != nil {
			defer d.release()
		}
	}
	if err := firstReal(errs); err != nil {
		return nil, err
	}
	var dirs []string
	for _, d := range done {
		pub, err := r.publish(ctx, d)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, pub.Dir)
	}
	tc, _, err := r.toolchain(ctx, plans[0].Target)
	if err != nil {
		return nil, err
	}
	return r.merge(ctx, tc, dirs[0], dirs[1])
}

// firstReal prefers a slice's own failure over the cancellation it caused
// in the other slice.
func firstReal(errs []error) error {
	var canceled error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if errors.Is(err, context.Canceled) {
			canceled = err
			continue
		}
		return err
	}
	return canceled
}

// Merge is build:merge: two slice artifacts built elsewhere (each a
// directory or a .tar.gz) into dist/openssl-macos-universal2.
func Merge(ctx context.Context, s Settings, rt Runtime, a, b string) (*Result, error) {
	r, err := newRun(s, rt)
	if err != nil {
		return nil, err
	}
	tc, err := toolchain.New(r.Toolchain)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.Work, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(r.Work, "merge-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	da, err := artifact.Dir(ctx, a, filepath.Join(work, "a"))
	if err != nil {
		return nil, err
	}
	db, err := artifact.Dir(ctx, b, filepath.Join(work, "b"))
	if err != nil {
		return nil, err
	}
	return r.merge(ctx, tc, da, db)
}

func (r *run) merge(ctx context.Context, tc toolchain.Toolchain, a, b string) (*Result, error) {
	var in []universal.Slice
	for _, dir := range []string{a, b} {
		s, err := universal.Load(ctx, dir)
		if err == nil {
			err = r.holdToRecipe(s.Manifest)
		}
		if err != nil {
			r.Observer.Failed(universal.Name, err)
			return nil, err
		}
		in = append(in, s)
	}
	sa, sb := in[0], in[1]
	if err := os.MkdirAll(r.Work, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(r.Work, universal.Name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	dst := filepath.Join(work, universal.Name)
	m, err := universal.Merge(ctx, tc, sa, sb, dst, r.recipe.Universal2Dispatch)
	if err != nil {
		r.Observer.Failed(universal.Name, err)
		return nil, err
	}
	// The merged libraries are what ships: link them for each slice's
	// architecture and deployment target too, and record it.
	var targets []recipe.Target
	for _, s := range m.Slices {
		targets = append(targets, recipe.Target{OS: s.Target.OS, Arch: s.Target.Arch, MinOS: s.Target.MinOS})
	}
	if m.LinkChecks, err = r.linkTree(ctx, dst, targets); err != nil {
		err = fmt.Errorf("%s: link: refusing to publish: %w", universal.Name, err)
		r.Observer.Failed(universal.Name, err)
		return nil, err
	}
	for _, c := range m.LinkChecks {
		r.logf("%s: linked %s with %d members of %s for %s against %s", universal.Name, c.Program, c.Members, c.Arch, c.Platform, c.System)
	}
	if err := artifact.WriteManifest(ctx, dst, m); err != nil {
		return nil, err
	}
	if len(m.HeaderDispatch) > 0 {
		r.logf("%s: headers that differ between the slices, merged with a per-architecture dispatch: %s", universal.Name, strings.Join(m.HeaderDispatch, ", "))
	}
	for _, l := range m.CompilerLines {
		r.logf("%s: validated %s %s: %s", universal.Name, l.Library, l.Arch, l.Line)
	}
	pub, err := r.publish(ctx, &built{dir: dst, manifest: m})
	if err != nil {
		return nil, err
	}
	return &Result{Published: pub, Manifest: m}, nil
}

// holdToRecipe refuses a slice whose manifest is not what this recipe
// builds for its target: a slice edited together with its manifest digests
// still has to match what the recipe owns (the Configure target, arch,
// deployment target, flags and artifact name; the pinned sha256 and size
// of a listed release; for a release the recipe does not list, a sha256 it
// does not pin to another version) and its options must pass the recipe's
// option rules for that release. Callers may choose options (the action's
// openssl-options), so the options are held to those rules and to the
// other slice (universal.Compatible), not to the recipe's defaults.
func (r *run) holdToRecipe(m *artifact.Manifest) error {
	refuse := func(err error) error {
		return fmt.Errorf("%s (OpenSSL %s, target %s): %w: %w", m.Name, m.OpenSSL.Version, m.Target.Name, universal.ErrRefused, err)
	}
	rel, listed, err := r.recipe.Resolve(m.OpenSSL.Version, m.OpenSSL.SHA256)
	if err != nil {
		return refuse(err)
	}
	p, err := r.recipe.PlanFor(rel, m.Target.Name, m.Target.Options)
	if err != nil {
		return refuse(err)
	}
	var why []string
	field := func(name string, got, want any) {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			why = append(why, fmt.Sprintf("%s is %v, the recipe says %v", name, got, want))
		}
	}
	field("the artifact name", m.Name, p.Target.Artifact)
	if listed {
		field("the source size", m.OpenSSL.Size, p.Release.Size)
	}
	field("the Configure target", m.Target.Configure, p.Target.Configure)
	field("the architecture", m.Target.Arch, p.Target.Arch)
	field("the deployment target", m.Target.MinOS, p.Target.MinOS)
	field("the flags", m.Target.Flags, p.Target.Flags)
	field("the options", m.Target.Options, p.Options)
	if len(why) > 0 {
		return refuse(fmt.Errorf("its manifest does not match recipe %s: %s", r.recipe.Path, strings.Join(why, "; ")))
	}
	return nil
}
