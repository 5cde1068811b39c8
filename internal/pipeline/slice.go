package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/validate"
	"github.com/osslbuild/osslbuild/patches"
)

// Libraries are the static libraries every artifact must hold.
var Libraries = artifact.Libraries

// Result is a published artifact.
type Result struct {
	Plan      *recipe.Plan
	Published *artifact.Published
	Manifest  *artifact.Manifest
}

// Slice builds one target (build:arm64, build:x86_64) and publishes it.
func Slice(ctx context.Context, o Options, target string) (*Result, error) {
	o.defaults()
	r, err := recipe.Load(o.Recipe)
	if err != nil {
		return nil, err
	}
	p, err := r.Plan(o.Version, target)
	if err != nil {
		return nil, err
	}
	if ign := configure.IgnoredSet(os.Environ()); len(ign) > 0 {
		o.logf("note: %s set in your environment: ignored. The build environment is constructed, not inherited (CFLAGS in the environment of Configure replaces OpenSSL's -O3).", strings.Join(ign, ", "))
	}
	tc, err := toolchain.For(o.Toolchain, p.Target)
	if err != nil {
		return nil, err
	}
	v, err := fetchRelease(ctx, &o, p.Release)
	if err != nil {
		return nil, err
	}
	id, err := tc.Identity(ctx)
	if err != nil {
		return nil, err
	}
	s, err := obtainSlice(ctx, &o, p, v, tc, id)
	if err != nil {
		return nil, err
	}
	defer s.cleanup()
	pub, err := artifact.Publish(s.dir, o.Out, p.Target.Artifact, time.Unix(s.manifest.SourceDateEpoch, 0))
	if err != nil {
		return nil, err
	}
	o.logf("%s: published %s and %s (sha256 %s)", p.Target.Artifact, pub.Dir, pub.Tarball, pub.Digests.SHA256)
	o.summarise(s.manifest, pub)
	return &Result{Plan: p, Published: pub, Manifest: s.manifest}, nil
}

// builtSlice is a validated artifact tree in a private build directory,
// ready to publish.
type builtSlice struct {
	dir      string // the artifact tree
	manifest *artifact.Manifest
	cleanup  func()
}

// obtainSlice serves the slice from the artifact cache when its inputs are
// unchanged (and it still validates), else builds and caches it.
func obtainSlice(ctx context.Context, o *Options, p *recipe.Plan, v *source.Verified, tc toolchain.Toolchain, id toolchain.Identity) (*builtSlice, error) {
	key, err := cacheKey(p, v, id)
	if err != nil {
		return nil, err
	}
	if !o.Rebuild {
		s, ok, err := cachedSlice(o, key, p)
		if err != nil {
			return nil, err
		}
		if ok {
			return s, nil
		}
	}
	s, err := buildSlice(ctx, o, p, v, tc, id)
	if err != nil {
		return nil, err
	}
	if err := storeSlice(o, key, s); err != nil {
		o.logf("%s: warning: not cached: %v", p.Target.Artifact, err)
	}
	return s, nil
}

// buildSlice runs every stage up to a validated artifact tree with its
// manifest. Nothing is written outside o.Work.
func buildSlice(ctx context.Context, o *Options, p *recipe.Plan, v *source.Verified, tc toolchain.Toolchain, id toolchain.Identity) (_ *builtSlice, err error) {
	name := p.Target.Artifact
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(o.Work, name+"-")
	if err != nil {
		return nil, fmt.Errorf("%s: build directory: %w", name, err)
	}
	work, _ = filepath.Abs(work)
	logPath := work + ".log"
	cleanup := func() {
		if !o.Keep {
			os.RemoveAll(work)
		}
	}
	defer func() {
		o.foldLog(name, logPath)
		if err != nil {
			o.annotate(name, err)
			// Keep the log (named after the directory) for the post-mortem;
			// the half-built tree goes unless asked to keep it.
			cleanup()
			if _, serr := os.Stat(logPath); serr == nil {
				err = fmt.Errorf("%w\n(full log: %s)", err, logPath)
			}
		}
	}()
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	logf.Close()
	appendLog := func() (*os.File, error) {
		return os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0o644)
	}

	tree, err := source.Unpack(ctx, v, filepath.Join(work, "src"), patches.FS)
	if err != nil {
		return nil, err
	}
	tenv, err := tc.Prepare(ctx, filepath.Join(work, "toolchain"), p.Target)
	if err != nil {
		return nil, err
	}
	env, err := configure.Env(tenv, work, tree.SourceDateEpoch)
	if err != nil {
		return nil, err
	}
	lf, err := appendLog()
	if err != nil {
		return nil, err
	}
	o.logf("%s: %s", name, strings.Join(configure.Args(p), " "))
	err = configure.Run(ctx, tree.Dir, p, env, lf)
	lf.Close()
	if err != nil {
		return nil, err
	}
	mk, gate, err := configure.Gate(tree.Dir, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	o.logf("%s: gate passed: CFLAGS=%s (effective %s); compile flags: %s", name, gate.CFLAGS, gate.EffectiveOpt, gate.CompileFlags)

	stage := filepath.Join(work, "stage")
	err = build.Run(ctx, build.Options{
		Src: tree.Dir, Env: env, Jobs: o.Jobs, Shared: o.shared, Objects: mk.Objects, Log: logPath, Stage: stage,
		Progress: o.progress(name),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}

	dir := filepath.Join(work, "artifact", name)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if _, err := artifact.Layout(stage, p.Recipe.Prefix, dir); err != nil {
		return nil, err
	}
	lines, err := validateSlice(dir, p)
	if err != nil {
		return nil, fmt.Errorf("%s: refusing to publish: %w", name, err)
	}
	for _, l := range lines {
		o.logf("%s: validated %s %s: %s", name, l.Library, l.Arch, l.Line)
	}
	m := &artifact.Manifest{
		Name:      name,
		Osslbuild: Version(),
		Recipe:    artifact.RecipeRef{Name: p.Recipe.Name, Path: p.Recipe.Path, SHA256: p.Recipe.SHA256},
		OpenSSL:   sourceRef(v),
		Target: artifact.Target{Name: p.Target.Name, Configure: p.Target.Configure, OS: p.Target.OS, Arch: p.Target.Arch,
			MinOS: p.Target.MinOS, Flags: p.Target.Flags, Options: p.Options, Skipped: p.Skipped},
		Toolchain: id,
		Configure: artifact.Configure{
			Argv:   configure.Args(p),
			Env:    scrubWork(env, work),
			CFLAGS: gate.CFLAGS,
		},
		SourceDateEpoch: tree.SourceDateEpoch,
		CompilerLines:   lines,
		Patches:         []artifact.Patch{},
	}
	for _, ap := range tree.Patches {
		m.Patches = append(m.Patches, artifact.Patch{Name: ap.Name, SHA256: ap.SHA256})
	}
	if err := artifact.WriteSBOM(dir, m); err != nil {
		return nil, err
	}
	if err := artifact.WriteManifest(dir, m); err != nil {
		return nil, err
	}
	return &builtSlice{dir: dir, manifest: m, cleanup: cleanup}, nil
}

// Expect is what the Plan promises for one slice's libraries.
func Expect(p *recipe.Plan, lib string) validate.Expect {
	return validate.ForLibrary(lib, p.Target.OS, p.Target.Arch, p.Target.MinOS, p.Target.Configure, p.Target.Flags)
}

// validateSlice holds every library in the artifact tree against the Plan
// and returns the compiler lines found.
func validateSlice(dir string, p *recipe.Plan) ([]artifact.CompilerLine, error) {
	var errs []error
	var lines []artifact.CompilerLine
	for _, lib := range Libraries {
		rep, err := validate.StaticLibrary(filepath.Join(dir, "lib", lib), Expect(p, lib))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		lines = append(lines, artifact.CompilerLinesOf(rep.File, lib)...)
	}
	return lines, errors.Join(errs...)
}

func sourceRef(v *source.Verified) artifact.Source {
	s := artifact.Source{
		Version: v.Release.Version, File: v.Release.FileName(),
		SHA256: v.Tarball.SHA256, Size: v.Tarball.Size, URL: recordedURL(v.Release, v.Tarball.URL),
	}
	if v.Signature != nil {
		s.SignatureURL = recordedURL(v.Release, strings.TrimSuffix(v.Signature.URL, ".asc")) + ".asc"
	}
	if v.Signer != nil {
		s.Signer, s.SigningKey = v.Signer.Signer, v.Signer.SigningKey
		s.SignedAt = v.Signer.Created.UTC().Format(time.RFC3339)
	}
	return s
}

// scrubWork writes the private build directory as $WORK, so the manifest is
// the same whichever directory built it.
func scrubWork(env []string, work string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = strings.ReplaceAll(kv, work, "$WORK")
	}
	return out
}

// recordedURL is the source URL as the manifest records it: one of the
// recipe's URLs, or "mirror:<file>" for a local mirror or cache, whose
// location is machine-specific (the pinned sha256 says what the bytes were).
func recordedURL(rel recipe.Release, u string) string {
	for _, ru := range rel.URLs {
		if u == ru {
			return u
		}
	}
	return "mirror:" + rel.FileName()
}

// progress is a bar on a terminal, plain lines elsewhere and whenever two
// slices build at once (two bars would overwrite each other).
func (o *Options) progress(name string) build.Progress {
	if o.shared != nil {
		return &build.LineProgress{W: o.Log, Label: name, Interval: o.ProgressInterval}
	}
	return build.NewProgress(o.Log, name, o.ProgressInterval)
}
