package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/artifact/unpacked"
	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// The universal2 build, in order, in the style of the slice table: one
// stage that brings the two slice artifacts (built here side by side, or
// given by build:merge), then the merge both targets share, so a merge of
// the same slices elsewhere gives the same bytes. The first error stops it;
// nothing is published before the last stage, which publishes the slices
// built here and the merge together or not at all.
var universal2Stages = []mergeStage{
	{"slices", buildSlices},  // build:universal2: both slices under one job budget, published with the merge
	{"load", loadSlices},     // every file against its manifest; each manifest held to the recipe
	{"merge", mergeSlices},   // universal.Merge: validated slices lipo'd, headers identical or dispatched, re-validated
	{"link", linkMerged},     // the merged libraries linked for each slice's architecture and deployment target
	{"record", recordMerged}, // manifest.json with the link records
	{"publish", publishMerged},
}

// mergeStage is one step of a universal2 build.
type mergeStage struct {
	name string
	run  func(ctx context.Context, j *mergeJob) error
}

// mergeJob is one universal2 build in progress.
type mergeJob struct {
	run  *run
	work string // private directory (removed at the end)

	dirs   []string          // slices: the two slice artifact trees
	parts  []*built          // slices: the slices built here, published with the merge
	shown  map[string]string // slices: a private directory -> the input it was unpacked from, for messages
	slices []universal.Slice // load
	tc     toolchain.Toolchain
	entry  entry              // merge: the artifact cache's entry for this pair
	dst    string             // merge: the universal2 tree
	m      *artifact.Manifest // merge, completed by link and record
	built  *built             // merge (a cache hit) or record
	result *Result            // publish
}

// runMerge runs stages as a run of s and rt.
func runMerge(ctx context.Context, s Settings, rt Runtime, stages []mergeStage) (_ *Result, err error) {
	r, err := newRun(ctx, s, rt)
	if err != nil {
		return nil, err
	}
	defer func() { r.finish(ctx) }()
	work, err := Scratch(r.Work, universal.Name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	j := &mergeJob{run: r, work: work, shown: map[string]string{}}
	defer func() {
		for _, b := range j.parts {
			b.release()
		}
		if j.built != nil && j.built.release != nil {
			j.built.release() // the private copy of a merge the cache served
		}
	}()
	for _, s := range stages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.run(ctx, j); err != nil {
			err = j.named(err)
			if s.name != "slices" {
				// A slice's own failure is reported by its build.
				r.Observer.Failed(universal.Name, err)
			}
			return nil, err
		}
	}
	return j.result, nil
}

// Universal2 builds the recipe's two universal2 slices side by side under
// one make job budget, publishes them, and merges the published slices.
func Universal2(ctx context.Context, s Settings, rt Runtime) (*Result, error) {
	return runMerge(ctx, s, rt, universal2Stages)
}

// Merge is build:merge: two slice artifacts built elsewhere (each a
// directory or a .tar.gz) into dist/openssl-macos-universal2.
func Merge(ctx context.Context, s Settings, rt Runtime, a, b string) (*Result, error) {
	// universal2Stages with the slices given instead of built.
	return runMerge(ctx, s, rt, append([]mergeStage{{"slices", func(ctx context.Context, j *mergeJob) error {
		for i, in := range []string{a, b} {
			d, err := unpacked.Dir(ctx, in, filepath.Join(j.work, string(rune('a'+i))))
			if err != nil {
				return err
			}
			if strings.HasPrefix(d, j.work) {
				j.shown[d] = in + " (unpacked)"
			}
			j.dirs = append(j.dirs, d)
		}
		return nil
	}}}, universal2Stages[1:]...))
}

// named rewrites err's text so it names the inputs the user gave, not the
// private directories they were unpacked into (gone when the message is
// read); errors.Is and As still see err.
func (j *mergeJob) named(err error) error {
	msg := err.Error()
	for dir, shown := range j.shown {
		msg = strings.ReplaceAll(msg, dir, shown)
	}
	if msg == err.Error() {
		return err
	}
	return &reworded{msg: msg, err: err}
}

type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }

// buildSlices builds the recipe's universal2 targets at once, behind one
// job budget; publishMerged publishes them with their merge.
func buildSlices(ctx context.Context, j *mergeJob) error {
	r := j.run
	targets, err := r.recipe.Universal2()
	if err != nil {
		return err
	}
	var plans []*recipe.Plan
	for _, t := range targets {
		p, err := r.plan(ctx, t)
		if err != nil {
			return err
		}
		plans = append(plans, p)
	}
	// One make job budget of Settings.Jobs for both builds: a jobserver,
	// so while one slice unpacks, configures or archives, or once it is
	// done, the other's make takes the free slots.
	jobs, err := build.NewJobs(r.Jobs)
	if err != nil {
		return err
	}
	defer jobs.Close()
	b := r.builder(Osslbuild, jobs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make([]*built, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Go(func() {
			done[i], errs[i] = b.build(ctx, p)
			if errs[i] != nil {
				cancel() // stop the other slice: the pair cannot be merged
			}
		})
	}
	wg.Wait()
	j.parts = slices.DeleteFunc(done, func(d *built) bool { return d == nil })
	if err := firstReal(errs); err != nil {
		return err
	}
	for _, d := range j.parts {
		j.shown[d.dir] = d.manifest.Name + " (built by this run)"
		j.dirs = append(j.dirs, d.dir)
	}
	return nil
}

// firstReal prefers a slice's own failure over the cancellation it caused
// in the other slice.
func firstReal(errs []error) (canceled error) {
	for _, err := range errs {
		if errors.Is(err, context.Canceled) {
			canceled = err
		} else if err != nil {
			return err
		}
	}
	return canceled
}

// loadSlices verifies each slice artifact against its manifest and holds
// the manifest to the recipe. A slice this run built, or served from the
// cache, was verified or written in its private directory a moment ago:
// its manifest is read from the file again (what a merge of the same
// slices elsewhere reads) without hashing every file a second time.
func loadSlices(ctx context.Context, j *mergeJob) error {
	for _, dir := range j.dirs {
		ours := slices.ContainsFunc(j.parts, func(b *built) bool { return b.dir == dir })
		var s universal.Slice
		var err error
		if ours {
			s.Dir = dir
			s.Manifest, err = artifact.LoadManifest(ctx, dir)
		} else {
			s, err = universal.Load(ctx, dir)
		}
		if err == nil {
			// A slice built or served here was held to its release already.
			err = j.run.holdToRecipe(ctx, s, !ours)
		}
		if err != nil {
			return err
		}
		j.slices = append(j.slices, s)
	}
	return nil
}

// mergeSlices lipos the slices' libraries into the universal2 tree, after
// validating each slice, and validates every slice inside the fat files;
// the artifact cache serves a pair it has merged before (the same slice
// manifests, recipe, toolchain and osslbuild), proved as a merge would.
func mergeSlices(ctx context.Context, j *mergeJob) (err error) {
	r := j.run
	var id toolchain.Identity
	if j.tc, id, err = r.toolchain(ctx, j.slices[0].Manifest.Target); err != nil {
		return err
	}
	if !r.Rebuild {
		key, err := mergeKey(r, id, j.dirs)
		if err != nil {
			return err
		}
		if j.entry, err = r.entry(key, universal.Name, id); err != nil {
			return err
		}
		own := func(m *artifact.Manifest) error { m.Recipe = recipeRef(r.recipe); return nil }
		b, ok, err := r.cached(ctx, j.entry, fitsPair(j.slices), r.proveUniversal, own)
		if err != nil {
			return err
		}
		if ok {
			j.built, j.dst, j.m = b, b.dir, b.manifest
			return nil
		}
	}
	j.dst = filepath.Join(j.work, universal.Name)
	prov, err := r.provenance(id, j.slices[0].Manifest)
	if err != nil {
		return err
	}
	j.m, err = universal.Merge(ctx, j.tc, j.slices[0], j.slices[1], j.dst, j.run.recipe.Universal2Dispatch, prov)
	if err != nil {
		return err
	}
	if len(j.m.HeaderDispatch) > 0 {
		j.run.logf("%s: headers that differ between the slices, merged with a per-architecture dispatch: %s", universal.Name, strings.Join(j.m.HeaderDispatch, ", "))
	}
	for _, l := range j.m.CompilerLines {
		j.run.logf("%s: validated %s %s: %s", universal.Name, l.Library, l.Arch, l.Line)
	}
	return nil
}

// linkMerged links the merged libraries, which are what ships, for each
// slice's architecture and deployment target.
func linkMerged(ctx context.Context, j *mergeJob) (err error) {
	if j.built != nil {
		return nil // served by the cache, linked when it was made
	}
	if j.m.LinkChecks, err = j.run.linkTree(ctx, j.dst, j.m.Parts()); err != nil {
		return fmt.Errorf("%s: link: refusing to publish: %w", universal.Name, err)
	}
	for _, c := range j.m.LinkChecks {
		j.run.logf("%s: linked %s with %s of %s for %s against %s", universal.Name, c.Program, linkedWhat(c), c.Arch, c.Platform, c.System)
	}
	artifact.Distribute(j.m)
	return nil
}

// provenance is what this run states as its own in a universal manifest:
// itself, its toolchain and recipe, the release as the recipe pins it and
// the patches this osslbuild applies to it.
func (r *run) provenance(id toolchain.Identity, m *artifact.Manifest) (universal.Provenance, error) {
	rel, listed, err := r.recipe.Resolve(m.OpenSSL.Version, m.OpenSSL.SHA256)
	if err != nil {
		return universal.Provenance{}, err
	}
	src := artifact.Source{Version: rel.Version, File: rel.FileName(), SHA256: rel.SHA256, Size: rel.Size}
	if !listed {
		src.SHA256, src.Size = m.OpenSSL.SHA256, m.OpenSSL.Size // pinned by the sha256 the slice was built with
	}
	if len(rel.URLs) > 0 {
		src.URL = rel.URLs[0]
	}
	applied, err := Patches(rel.Version)
	if err != nil {
		return universal.Provenance{}, err
	}
	return universal.Provenance{
		Osslbuild: r.Revision, Toolchain: id, OpenSSL: src, Patches: applied,
		Recipe: recipeRef(r.recipe),
	}, nil
}

// recordMerged writes the manifest again with the link records, and keeps
// the merge in the artifact cache.
func recordMerged(ctx context.Context, j *mergeJob) error {
	if j.built != nil {
		return nil
	}
	if err := artifact.WriteManifest(ctx, j.dst, j.m); err != nil {
		return err
	}
	j.built = &built{dir: j.dst, manifest: j.m}
	if j.entry.dir != "" {
		j.run.store(ctx, j.entry, j.built)
	}
	return nil
}

func publishMerged(ctx context.Context, j *mergeJob) error {
	pubs, err := j.run.publish(ctx, append(slices.Clone(j.parts), j.built)...)
	if err != nil {
		return err
	}
	j.result = &Result{Published: pubs[len(pubs)-1], Manifest: j.m}
	return nil
}

// holdToRecipe refuses a slice whose manifest is not what this recipe
// builds for its target: a slice edited together with its manifest digests
// still has to match what the recipe owns (the Configure target, arch,
// deployment target, flags, openssldir and artifact name; the pinned sha256
// and size of a listed release; for a release the recipe does not list, a
// sha256 it does not pin to another version) and its options must pass the
// recipe's option rules for that release. Callers may choose options (the
// action's openssl-options), so the options are held to those rules and to
// the other slice (universal.Compatible), not to the recipe's defaults.
// Manifests from before the slice record carried openssldir and artifact
// have neither; those two are held where recorded. A slice given to
// build:merge (given) is held to what its release's own files say it holds
// too (run.holdToRelease).
func (r *run) holdToRecipe(ctx context.Context, s universal.Slice, given bool) error {
	m := s.Manifest
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
	field("the artifact name", m.Name, p.Slice.Artifact)
	if listed {
		field("the source size", m.OpenSSL.Size, p.Release.Size)
	}
	field("the Configure target", m.Target.Configure, p.Slice.Configure)
	field("the architecture", m.Target.Arch, p.Slice.Arch)
	field("the deployment target", m.Target.MinOS, p.Slice.MinOS)
	field("the flags", m.Target.Flags, p.Slice.Flags)
	field("the options", m.Target.Options, p.Slice.Options)
	field("the options left out for this release", m.Target.Skipped, p.Slice.Skipped)
	if len(m.HeaderDispatch) > 0 {
		why = append(why, "it records a header dispatch: it is a merge, not a slice")
	}
	if m.Variant != "" {
		why = append(why, fmt.Sprintf("it is a %s build, not osslbuild's", m.Variant))
	} else if want := configure.Args(p); !slices.Equal(m.Configure.Argv, want) {
		why = append(why, fmt.Sprintf("Configure ran as %q, the recipe's plan is %q", m.Configure.Argv, want))
	}
	if s := m.OpenSSL.Signer; s != "" && !slices.Contains(p.Release.Signers, s) {
		why = append(why, fmt.Sprintf("its source is signed by %s, which the recipe does not pin for OpenSSL %s (%s)", s, rel.Version, strings.Join(p.Release.Signers, ", ")))
	} else if s == "" && p.Release.SignatureRequired() {
		why = append(why, fmt.Sprintf("its source records no signer, and the recipe requires a signature for OpenSSL %s", rel.Version))
	} else if k := m.OpenSSL.SignerKey; k != nil && (k.Fingerprint != s || !slices.Contains(keyRefs(p.Release), *k)) {
		// A slice from before the record has none: its signer is held above.
		why = append(why, fmt.Sprintf("its source was verified with the key file %s %s (sha256 %s), not one this recipe verifies OpenSSL %s with", k.Origin, k.Path, k.SHA256, rel.Version))
	}
	if m.Target.OpenSSLDir != "" {
		field("the openssldir", m.Target.OpenSSLDir, p.Slice.OpenSSLDir)
	}
	if m.Target.Artifact != "" {
		field("the recorded artifact name", m.Target.Artifact, p.Slice.Artifact)
	}
	if len(why) > 0 {
		return refuse(fmt.Errorf("its manifest does not match recipe %s: %s", r.recipe.Path, strings.Join(why, "; ")))
	}
	if given {
		if err := r.holdToRelease(ctx, s.Dir, rel, []platform.Slice{m.Target}, nil); err != nil {
			return refuse(err)
		}
	}
	return nil
}

// mergeKey digests what decides a merge's bytes: the two slices (their
// manifests pin every file), the recipe's header dispatch, the toolchain
// (lipo) and osslbuild.
func mergeKey(r *run, id toolchain.Identity, dirs []string) (string, error) {
	var slices []string
	for _, d := range dirs {
		s, err := ctxio.SHA256(context.Background(), filepath.Join(d, artifact.ManifestName), true)
		if err != nil {
			return "", err
		}
		slices = append(slices, s)
	}
	return digestJSON(struct {
		Format    int
		Kind      string
		Osslbuild string
		Recipe    string
		Dispatch  []string
		Slices    []string
		Toolchain toolchain.Identity
	}{1, universal.Kind, r.Revision, r.recipe.SHA256, r.recipe.Universal2Dispatch, slices, id})
}

// fitsPair refuses a cached universal manifest that is not the merge of
// these slices.
func fitsPair(in []universal.Slice) func(*artifact.Manifest) error {
	return func(m *artifact.Manifest) error {
		if m.Name != universal.Name || len(m.Slices) != len(in) {
			return fmt.Errorf("its manifest is not a merge of %d slices", len(in))
		}
		for _, s := range in {
			if !slices.ContainsFunc(m.Slices, func(sm *artifact.Manifest) bool {
				return sm != nil && sm.Name == s.Manifest.Name && sm.OpenSSL.SHA256 == s.Manifest.OpenSSL.SHA256 && maps.Equal(sm.Files, s.Manifest.Files)
			}) {
				return fmt.Errorf("its manifest does not record slice %s as given", s.Manifest.Name)
			}
		}
		return nil
	}
}
