package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/lifecycle"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// run is one invocation of a target: the settings and runtime with their
// defaults, the recipe, and what every slice of the invocation shares
// (verified sources, toolchains and their identities, probed once).
type run struct {
	Settings
	Runtime
	recipe *recipe.Recipe
	// madeWork is set when Work did not exist before the run.
	madeWork bool

	mu      sync.Mutex
	logs    []string // the slices' build logs
	rel     once[recipe.Release]
	sources map[string]*once[*source.Verified]
	lists   map[string]*once[*configure.Release]
	tools   map[string]*once[tool]
}

type tool struct {
	tc toolchain.Toolchain
	id toolchain.Identity
}

// once memoises one value per key across goroutines.
type once[T any] struct {
	once sync.Once
	v    T
	err  error
}

func newRun(ctx context.Context, s Settings, rt Runtime) (*run, error) {
	s.defaults()
	rt.defaults(ctx)
	r := s.Loaded
	if r == nil {
		var err error
		if r, err = recipe.LoadWith(s.Recipe, recipe.LoadOptions{Unsigned: s.unsigned}); err != nil {
			return nil, err
		}
	}
	if ign := configure.IgnoredSet(rt.Environ); len(ign) > 0 {
		rt.logf("note: %s set in your environment: ignored. The build environment is constructed, not inherited (CFLAGS in the environment of Configure replaces OpenSSL's -O3).", strings.Join(ign, ", "))
	}
	_, err := os.Stat(s.Work)
	return &run{Settings: s, Runtime: rt, recipe: r, madeWork: errors.Is(err, fs.ErrNotExist),
		sources: map[string]*once[*source.Verified]{}, lists: map[string]*once[*configure.Release]{}, tools: map[string]*once[tool]{}}, nil
}

// finish ends the run of ctx: an interrupted run removes the build logs of
// its slices (a failed one keeps them for the post-mortem, and so does
// -keep), and a run that made the work directory and left nothing in it
// removes it, so an interrupt leaves the machine as it was.
func (r *run) finish(ctx context.Context) {
	if ctx.Err() != nil && !r.Keep {
		r.mu.Lock()
		for _, l := range r.logs {
			os.Remove(l)
		}
		r.mu.Unlock()
	}
	if r.madeWork {
		os.Remove(r.Work) // fails, harmlessly, on a directory that holds anything
	}
}

func memo[T any](r *run, m map[string]*once[T], key string, f func() (T, error)) (T, error) {
	r.mu.Lock()
	o := m[key]
	if o == nil {
		o = &once[T]{}
		m[key] = o
	}
	r.mu.Unlock()
	o.once.Do(func() { o.v, o.err = f() })
	return o.v, o.err
}

// fetched runs get (source.Fetch, or source.FetchUnlisted) for rel once
// per invocation, and logs what it verified after why.
func (r *run) fetched(ctx context.Context, rel recipe.Release, get func(context.Context, *fetch.Fetcher, recipe.Release) (*source.Verified, error), why string) (*source.Verified, error) {
	return memo(r, r.sources, rel.Version, func() (*source.Verified, error) {
		f, err := fetch.New(r.Fetch)
		if err != nil {
			return nil, err
		}
		v, err := get(ctx, f, rel)
		if err != nil {
			return nil, err
		}
		r.logf("source: %s%s", why, v.Describe())
		return v, nil
	})
}

// release is the release the settings ask for, resolved once per
// invocation: the recipe's, or one it does not list, pinned by the given
// sha256 and fetched and proven here, before any plan is made (its size is
// only known once it is downloaded).
func (r *run) release(ctx context.Context) (recipe.Release, error) {
	r.rel.once.Do(func() {
		rel, listed, err := r.recipe.Resolve(r.Version, r.SHA256)
		if err != nil || listed {
			r.rel.v, r.rel.err = rel, err
			return
		}
		v, err := r.fetched(ctx, rel, source.FetchUnlisted,
			fmt.Sprintf("OpenSSL %s is not in %s; pinned by the sha256 given: ", rel.Version, r.recipe.Path))
		if err != nil {
			r.rel.err = err
			return
		}
		r.rel.v = v.Release
	})
	return r.rel.v, r.rel.err
}

// toolchain returns the toolchain the platform table chooses for slice s
// and its identity, probed once per toolchain.
func (r *run) toolchain(ctx context.Context, s platform.Slice) (toolchain.Toolchain, toolchain.Identity, error) {
	b, err := toolchain.Choose(r.Toolchain, s)
	if err != nil {
		return nil, toolchain.Identity{}, err
	}
	got, err := memo(r, r.tools, b.Toolchain+" "+b.Target, func() (tool, error) {
		tc, err := toolchain.Of(b)
		if err != nil {
			return tool{}, err
		}
		id, err := tc.Identity(ctx)
		return tool{tc, id}, err
	})
	return got.tc, got.id, err
}

// plan resolves the release and the options for target.
func (r *run) plan(ctx context.Context, target string) (*recipe.Plan, error) {
	rel, err := r.release(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.recipe.PlanFor(rel, target, r.Options)
	if err != nil {
		return nil, err
	}
	for _, msg := range releaseWarnings(rel.Version, r.Now(), r.Advise) {
		r.logf("%s: warning: %s", p.Slice.Artifact, msg)
	}
	if sh := p.Slice.Shared; sh != nil && sh.InstallName == "prefix" && p.Slice.Format() != platform.MachO {
		// A recipe of installer-style dylibs may hold a Linux target too;
		// its ELF libraries have no install name to give.
		r.logf("%s: install_name = \"prefix\" names the dylibs of macOS targets; %s's %s libraries carry their SONAMEs (%s), found along a program's run paths", p.Slice.Artifact, p.Slice.Name, p.Slice.Format(), strings.Join(p.Slice.SharedLibraries(), ", "))
	}
	if p.CallerOptions && len(p.Slice.Skipped) > 0 {
		r.logf("%s: options left out for OpenSSL %s by %s's per-version rules: %s", p.Slice.Artifact, rel.Version, r.recipe.Path, strings.Join(p.Slice.Skipped, " "))
	}
	return p, nil
}

// releaseWarnings are what a build says of the release it builds: that
// its series has ended, and its known high or critical advisories with
// the release that fixes them (or that none did publicly).
func releaseWarnings(version string, now time.Time, advise func(string) (string, bool)) []string {
	var out []string
	if msg, ended := lifecycle.Warning(version, now); ended {
		out = append(out, msg)
	}
	if advise != nil {
		if msg, ok := advise(version); ok {
			out = append(out, msg)
		}
	}
	return out
}

// built is a validated artifact tree in a private directory, ready to
// publish; release removes the directory.
type built struct {
	dir      string
	manifest *artifact.Manifest
	release  func()
	// tarball, when set, is the tree's .tar.gz already made (the artifact
	// cache's, checked against dir), with its digests: publishing copies it.
	tarball string
	digests artifact.Digests
}

// A builder turns a plan into a built slice. The stage table is one;
// caching wraps it (cache.go).
type builder interface {
	build(ctx context.Context, p *recipe.Plan) (*built, error)
}

// stageBuilder runs a variant's stage table in a fresh private directory;
// its make runs share jobs when a budget made it (nil: make -j alone).
type stageBuilder struct {
	run     *run
	variant *Variant
	jobs    *build.Jobs
}

func (b *stageBuilder) build(ctx context.Context, p *recipe.Plan) (_ *built, err error) {
	r := b.run
	name := artifactName(p, b.variant)
	work, err := Scratch(r.Work, name+"-")
	if err != nil {
		return nil, fmt.Errorf("%s: build directory: %w", name, err)
	}
	work, _ = filepath.Abs(work)
	j := &job{run: r, plan: p, name: name, work: work, logPath: work + ".log", jobs: b.jobs, variant: b.variant.Name}
	release := func() {
		if !r.Keep {
			os.RemoveAll(work)
		}
	}
	if err := os.WriteFile(j.logPath, nil, 0o644); err != nil {
		release()
		return nil, err
	}
	r.mu.Lock()
	r.logs = append(r.logs, j.logPath)
	r.mu.Unlock()
	defer func() {
		if err != nil && ctx.Err() != nil {
			// Interrupted: the user asked to stop, and the work directory
			// is left as it was, the log included.
			release()
			os.Remove(j.logPath)
			return
		}
		r.Observer.BuildLog(name, j.logPath)
		if err != nil {
			r.Observer.Failed(name, err)
			// Keep the log for the post-mortem; the half-built tree goes
			// unless asked to keep it.
			release()
			err = fmt.Errorf("%w\n(full log: %s)", err, j.logPath)
		}
	}()
	stages := b.variant.stages
	if !r.Rebuild || r.MakeCacheOnRebuild {
		stages = makeCached(stages, r.MakeCache)
	}
	if err := runStages(ctx, stages, j); err != nil {
		return nil, err
	}
	return &built{dir: j.dir, manifest: j.manifest, release: release}, nil
}

// Scratch makes a fresh directory pattern* under work, making work if it
// is missing: where a run builds, serves a hit or compares.
func Scratch(work, pattern string) (string, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(work, pattern)
}

// artifactName is the target's artifact name, with the variant's suffix.
func artifactName(p *recipe.Plan, v *Variant) string {
	if v.Name == "" {
		return p.Slice.Artifact
	}
	return p.Slice.Artifact + "-" + v.Name
}

// builder is the slice builder for variant: the stage table behind the
// artifact cache, unless the user asked to rebuild; its make runs share
// jobs when a budget is given (nil: make -j alone).
func (r *run) builder(v *Variant, jobs *build.Jobs) builder {
	var b builder = &stageBuilder{run: r, variant: v, jobs: jobs}
	if !r.Rebuild {
		b = &cachingBuilder{run: r, variant: v, inner: b}
	}
	return b
}

// publish moves built artifacts to the output directory, all of them or
// none (artifact.PublishAll), and tells the observer of each.
func (r *run) publish(ctx context.Context, bs ...*built) ([]*artifact.Published, error) {
	items := make([]artifact.Item, len(bs))
	for i, b := range bs {
		name := b.manifest.Name
		items[i] = artifact.Item{
			Dir: b.dir, Name: name, Mtime: time.Unix(b.manifest.SourceDateEpoch, 0),
			Tarball: b.tarball, Digests: b.digests,
			Rewritten: func(err error) {
				r.logf("%s: the cached tarball could not be copied, writing it again: %v", name, err)
			},
		}
	}
	pubs, err := artifact.PublishAll(ctx, r.Out, items)
	if err != nil {
		return nil, err
	}
	for i, pub := range pubs {
		r.logf("%s: published %s and %s (sha256 %s)", bs[i].manifest.Name, pub.Dir, pub.Tarball, pub.Digests.SHA256)
		r.Observer.Published(bs[i].manifest, pub)
	}
	return pubs, nil
}

// Slice builds one recipe target (build:arm64, build:x86_64,
// build:linux-x86_64) as variant (nil: Osslbuild) and publishes it.
func Slice(ctx context.Context, s Settings, rt Runtime, target string, variant *Variant) (*Result, error) {
	if variant == nil {
		variant = Osslbuild
	}
	r, err := newRun(ctx, s, rt)
	if err != nil {
		return nil, err
	}
	defer r.finish(ctx)
	p, err := r.plan(ctx, target)
	if err != nil {
		return nil, err
	}
	b, err := r.builder(variant, nil).build(ctx, p)
	if err != nil {
		return nil, err
	}
	defer b.release()
	pubs, err := r.publish(ctx, b)
	if err != nil {
		return nil, err
	}
	return &Result{Plan: p, Published: pubs[0], Manifest: b.manifest}, nil
}
