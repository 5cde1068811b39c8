// Package rebuild is verify:rebuild: anyone holding an osslbuild artifact
// rebuilds it from its manifest, on the toolchain that made it, and
// compares every file, the question gorebuild answers for Go's releases.
// It refuses before building, saying what the user must do, when this
// checkout or this machine cannot make the same bytes (docs/trust.md,
// "Rebuilding an artifact", states the revision rule).
package rebuild

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/artifact/unpacked"
	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/toolid"
)

// ErrRefused marks an artifact this checkout or machine cannot rebuild:
// nothing was built.
var ErrRefused = errors.New("cannot be rebuilt here")

// ErrDiffers marks a rebuild whose files are not the artifact's.
var ErrDiffers = errors.New("the rebuild differs from the artifact")

// Options say what to rebuild and with what.
type Options struct {
	Artifact string // a directory or its .tar.gz
	// Settings are the base of the rebuild: toolchain kind, fetch
	// (mirror, cache, offline), jobs and the work root. Recipe, release,
	// output and work directories are the rebuild's own.
	Settings pipeline.Settings
	// Runtime logs the build; its Revision is this checkout's osslbuild
	// ("" = pipeline.Version: its commit, "+dirty." and a digest when it
	// holds changes).
	Runtime pipeline.Runtime
	// Report receives the gorebuild-style report (nil: Runtime.Log).
	Report io.Writer
	// Recipe loads the recorded recipe: tests of synthetic trees waive the
	// signature (Unsigned); the target sets nothing.
	Recipe recipe.LoadOptions
	// TestRevisions accepts "test-<key>" revisions: for Go tests of the
	// end-to-end fixtures, whose test binaries record their fixture key;
	// the target never sets it.
	TestRevisions bool
	// TestMakeCache, for osslbuild's own tests, is a make cache
	// (pipeline.Settings.MakeCache) to take Configure and make's output
	// from: the end-to-end fixtures', whose objects the reproducibility
	// tests prove equal to those of second, independent builds.
	// Everything after make runs again. The target never sets it: a
	// user's rebuild builds from nothing.
	TestMakeCache string
}

// Result is what a rebuild found.
type Result struct {
	Name string
	diff.Log
	Skipped []string // universal2: slices that could not be rebuilt, and why
	Verdict string
}

var commit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Revision is the revision rule (docs/trust.md, "Rebuilding an
// artifact"): an artifact is rebuildable only when its manifest names a
// full commit of a clean checkout; the same osslbuild is that commit. It
// returns why not.
func Revision(rev string, tests bool) error {
	switch {
	case rev == "":
		return errors.New("the manifest records no osslbuild revision")
	case rev == "unknown":
		return errors.New(`osslbuild revision "unknown": it was built from a tree without git metadata, and no revision says which osslbuild that was`)
	case strings.Contains(rev, "+dirty"):
		return fmt.Errorf("osslbuild revision %s: built from a checkout with uncommitted changes, which no revision records", rev)
	case strings.HasPrefix(rev, "test-"):
		if tests {
			return nil
		}
		return fmt.Errorf("osslbuild revision %s: a test build, made by a test binary rather than a commit", rev)
	case !commit.MatchString(rev):
		return fmt.Errorf("osslbuild revision %q is not a full commit id", rev)
	}
	return nil
}

// Run verifies the artifact against its manifest, refuses (ErrRefused)
// what this checkout and machine cannot rebuild, rebuilds it in a fresh
// directory past the artifact cache and compares every file (ErrDiffers).
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Runtime.Log == nil {
		o.Runtime.Log = os.Stdout
	}
	o.Report = cmp.Or(o.Report, o.Runtime.Log)
	if o.Runtime.Revision == "" {
		o.Runtime.Revision = pipeline.Version(ctx)
	}
	root, err := pipeline.Scratch(cmp.Or(o.Settings.Work, "build"), "rebuild-")
	if err != nil {
		return nil, fmt.Errorf("verify:rebuild: %w", err)
	}
	root, _ = filepath.Abs(root)
	if !o.Settings.Keep {
		defer os.RemoveAll(root)
	}
	dir, err := unpacked.Dir(ctx, o.Artifact, filepath.Join(root, "artifact"))
	if err != nil {
		return nil, fmt.Errorf("verify:rebuild: %w (it takes an osslbuild artifact: a directory or its .tar.gz)", err)
	}
	m, err := artifact.Verify(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("verify:rebuild: artifact %s does not match its manifest: %w", o.Artifact, err)
	}
	res := &Result{Name: m.Name, Log: diff.Log{W: o.Report, Sides: sides}}
	fmt.Fprintf(o.Report, "verify:rebuild: %s: every file matches its manifest (osslbuild %s, OpenSSL %s)\n", m.Name, m.Osslbuild, m.OpenSSL.Version)
	r := &rebuilder{o: o, root: root, res: res}

	if len(m.Slices) == 0 {
		b, why := r.prepare(ctx, m, m.Target.Name)
		if len(why) > 0 {
			return r.refuse(m.Name, why)
		}
		out, err := r.build(ctx, b, "")
		if err != nil {
			return res, err
		}
		r.reportFiles(ctx, dir, out)
		return r.verdict(m.Name)
	}
	return r.universal(ctx, m, dir)
}

type rebuilder struct {
	o    Options
	root string
	res  *Result
}

// plan is one build the rebuild runs: settings and revision.
type plan struct {
	s        pipeline.Settings
	revision string
	target   string
}

// recorded is what a part of the manifest says built it: its own records,
// or a merged slice's claims.
func recorded(m *artifact.Manifest) (rev string, id toolid.Identity, ref artifact.RecipeRef, src artifact.Source) {
	if m.Claims != nil {
		return m.Claims.Osslbuild, m.Claims.Toolchain, m.Claims.Recipe, m.Claims.Source
	}
	return m.Osslbuild, m.Toolchain, m.Recipe, m.OpenSSL
}

// prepare checks that part can be built here exactly as it was, and
// returns the build, or every reason it cannot with what to do.
func (r *rebuilder) prepare(ctx context.Context, part *artifact.Manifest, target string) (plan, []string) {
	var why []string
	rev, id, ref, src := recorded(part)
	if err := Revision(rev, r.o.TestRevisions); err != nil {
		why = append(why, err.Error()+": it cannot be rebuilt")
	} else if ours := r.o.Runtime.Revision; ours != rev {
		if err := Revision(ours, r.o.TestRevisions); err != nil {
			why = append(why, fmt.Sprintf("this checkout is not a rebuildable osslbuild (%v): check out revision %s, clean", err, rev))
		} else {
			why = append(why, fmt.Sprintf("it was built by osslbuild %s, this checkout is %s: check out revision %s", rev, ours, rev))
		}
	}
	if part.Variant != "" {
		why = append(why, fmt.Sprintf("it is the %q variant: verify:rebuild rebuilds osslbuild's own builds", part.Variant))
	}
	rec, err := r.recipe(ref, rev)
	if err != nil {
		why = append(why, err.Error())
	}
	if msg := r.toolchain(ctx, part.Target, id); msg != "" {
		why = append(why, msg)
	}
	if want, err := pipeline.Patches(src.Version); err == nil {
		if !sameJSON(part.Patches, want) && part.Claims == nil {
			why = append(why, fmt.Sprintf("it records the patches %s, this checkout applies %s to OpenSSL %s: check out revision %s", js(part.Patches), js(want), src.Version, rev))
		}
	}
	if msg := r.linkProgram(part, rev); msg != "" {
		why = append(why, msg)
	}
	s := r.o.Settings
	s.Loaded, s.Recipe = rec, ""
	if rec != nil {
		s.Recipe = rec.Path
	}
	s.Version, s.SHA256, s.Options = src.Version, src.SHA256, nil
	s.Rebuild, s.MakeCache, s.Keep = true, r.o.TestMakeCache, false // a real build: neither the artifact cache nor (but in tests) make's
	s.MakeCacheOnRebuild = r.o.TestMakeCache != ""
	if rec != nil && len(why) == 0 {
		// The release: fetched and verified (sha256, size, signature) here,
		// by the signer the manifest names.
		v, err := pipeline.Fetch(ctx, s, r.quiet(rev))
		switch {
		case err != nil:
			why = append(why, fmt.Sprintf("the release %s cannot be fetched and verified here: %v (a mirror holding it: OSSLBUILD_MIRROR)", src.File, err))
		case src.Signer != "" && (v.Signer == nil || v.Signer.Signer != src.Signer):
			got := "none"
			if v.Signer != nil {
				got = v.Signer.Signer
			}
			why = append(why, fmt.Sprintf("the release was signed by %s, here it verifies as signed by %s", src.Signer, got))
		case src.SignatureSHA256 != "" && (v.Signature == nil || v.Signature.SHA256 != src.SignatureSHA256):
			why = append(why, fmt.Sprintf("the release's signature here is not the one recorded (sha256 %s)", src.SignatureSHA256))
		}
		// The Configure options: the recipe's, else the ones recorded
		// (a build given -options).
		if len(why) == 0 {
			if opts, msg := r.options(ctx, s, rec, target, part.Target); msg != "" {
				why = append(why, msg)
			} else {
				s.Options = opts
			}
		}
	}
	return plan{s: s, revision: rev, target: target}, why
}

// options finds the -options that plan target as the manifest recorded it.
func (r *rebuilder) options(ctx context.Context, s pipeline.Settings, rec *recipe.Recipe, target string, want platform.Slice) ([]string, string) {
	if target == "" {
		return nil, ""
	}
	rel, _, err := rec.Resolve(s.Version, s.SHA256)
	if err != nil {
		return nil, err.Error()
	}
	p, err := rec.PlanFor(rel, target, nil)
	if err == nil && sameJSON(p.Slice, want) {
		return nil, ""
	}
	if q, err2 := rec.PlanFor(rel, target, want.Options); err2 == nil && sameJSON(q.Slice, want) {
		return want.Options, ""
	}
	got := fmt.Sprint(err)
	if err == nil {
		got = js(p.Slice)
	}
	return nil, fmt.Sprintf("the recipe plans target %s as %s, the manifest records %s", target, got, js(want))
}

// recipe is the recipe the manifest names: a file recipe from the bytes
// it holds (written where the rebuild runs, recorded under its old path),
// an embedded one from this checkout, which must hold the same.
func (r *rebuilder) recipe(ref artifact.RecipeRef, rev string) (*recipe.Recipe, error) {
	switch ref.Origin {
	case recipe.OriginFile:
		if ref.Content == "" {
			return nil, fmt.Errorf("its recipe %s was a file, and the manifest does not hold its bytes (written before osslbuild recorded them): it cannot be rebuilt", ref.Path)
		}
		if artifact.SHA256([]byte(ref.Content)) != ref.SHA256 {
			return nil, fmt.Errorf("the recipe bytes the manifest holds do not have its recorded sha256 %s", ref.SHA256)
		}
		dir := filepath.Join(r.root, "recipe", fmt.Sprint(len(r.res.Lines)+len(r.res.Skipped)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		p := filepath.Join(dir, filepath.Base(ref.Path))
		if err := os.WriteFile(p, []byte(ref.Content), 0o644); err != nil {
			return nil, err
		}
		rec, err := recipe.LoadWith(p, r.o.Recipe)
		if err != nil {
			return nil, fmt.Errorf("the recorded recipe: %w", err)
		}
		if filepath.IsLocal(ref.Path) {
			rec.Path = ref.Path // RecordedPath: what the build recorded
		}
		return rec, nil
	case recipe.OriginEmbedded, "":
		rec, err := recipe.LoadWith(ref.Name+".toml", r.o.Recipe)
		if err != nil {
			return nil, fmt.Errorf("its embedded recipe %s: %w: check out revision %s", ref.Path, err, rev)
		}
		if rec.Origin != recipe.OriginEmbedded || rec.SHA256 != ref.SHA256 {
			return nil, fmt.Errorf("its embedded recipe %s has sha256 %s, this checkout's %s: check out revision %s", ref.Path, ref.SHA256, rec.SHA256, rev)
		}
		return rec, nil
	}
	return nil, fmt.Errorf("its recipe has origin %q, neither embedded nor file", ref.Origin)
}

// toolchain says what this machine lacks to build s with the identity
// recorded ("" when it has it).
func (r *rebuilder) toolchain(ctx context.Context, s platform.Slice, want toolid.Identity) string {
	need := need(want)
	tc, err := toolchain.For(r.o.Settings.Toolchain, s)
	if err != nil {
		return fmt.Sprintf("no toolchain for %s here (%v): %s", s.Arch, err, need)
	}
	got, err := tc.Identity(ctx)
	if err != nil {
		return fmt.Sprintf("the %s toolchain's identity: %v: %s", tc.Kind(), err, need)
	}
	if sameJSON(got, want) {
		return ""
	}
	var fields []string
	field := func(name, w, g string) {
		if w != g {
			fields = append(fields, fmt.Sprintf("%s %q here, %q recorded", name, g, w))
		}
	}
	field("kind", want.Kind, got.Kind)
	field("compiler", want.Compiler, got.Compiler)
	field("SDK", want.SDK, got.SDK)
	field("SDK path", want.SDKPath, got.SDKPath)
	if want.SDKDigest == "" && got.SDKDigest != "" {
		fields = append(fields, "the manifest records no digest of the headers it compiled against (written before osslbuild recorded it): it cannot be rebuilt")
	} else {
		field("SDK digest", want.SDKDigest, got.SDKDigest)
	}
	for _, k := range diff.Keys(want.Tools, got.Tools) {
		field("tool "+k, want.Tools[k], got.Tools[k])
	}
	for _, k := range diff.Keys(want.Targets, got.Targets) {
		field("target "+k, want.Targets[k], got.Targets[k])
	}
	return fmt.Sprintf("the toolchain differs (%s): %s", strings.Join(fields, "; "), need)
}

// need is what a user must provide for identity id.
func need(id toolid.Identity) string {
	switch id.Kind {
	case "macos":
		return fmt.Sprintf("run on a Mac whose Xcode has %s and the SDK %s at %s", id.Compiler, id.SDK, id.SDKPath)
	case "cross":
		return fmt.Sprintf("use the cross toolchain with %s and the %s, headers digest %s", id.Compiler, id.SDK, id.SDKDigest)
	}
	return fmt.Sprintf("use the %s toolchain with %s", id.Kind, id.Compiler)
}

func (r *rebuilder) quiet(rev string) pipeline.Runtime {
	rt := r.o.Runtime
	rt.Revision = rev
	return rt
}

// build runs p into a fresh directory and returns the published tree.
func (r *rebuilder) build(ctx context.Context, p plan, universal string) (string, error) {
	dir, err := os.MkdirTemp(r.root, "build-")
	if err != nil {
		return "", err
	}
	p.s.Out, p.s.Work = filepath.Join(dir, "dist"), filepath.Join(dir, "work")
	rt := r.quiet(p.revision)
	var res *pipeline.Result
	if universal != "" {
		res, err = pipeline.Universal2(ctx, p.s, rt)
	} else {
		res, err = pipeline.Slice(ctx, p.s, rt, p.target, nil)
	}
	if err != nil {
		return "", fmt.Errorf("verify:rebuild: the rebuild failed: %w", err)
	}
	return res.Published.Dir, nil
}

func (r *rebuilder) refuse(name string, why []string) (*Result, error) {
	for _, w := range why {
		fmt.Fprintf(r.o.Report, "REFUSED %s: %s\n", name, w)
	}
	r.res.Verdict = fmt.Sprintf("verify:rebuild: %s: REFUSED before building", name)
	fmt.Fprintln(r.o.Report, r.res.Verdict)
	return r.res, fmt.Errorf("verify:rebuild: %s %w: %s", name, ErrRefused, strings.Join(why, "; "))
}

// reportFiles reports every file of the artifact a and the rebuild b,
// each difference explained by package diff's explainer.
func (r *rebuilder) reportFiles(ctx context.Context, a, b string) {
	files, diffs, err := diff.CompareTrees(ctx, a, b)
	if err != nil {
		r.res.Add(diff.Line{Status: "FAIL", File: ".", Detail: err.Error()})
		return
	}
	r.res.Files(files, diffs)
}

// sides names the comparer's builds in FAIL lines: the artifact is its
// first build, the rebuild its second.
var sides = strings.NewReplacer("the first build", "the artifact", "the second build", "the rebuild")

func (r *rebuilder) verdict(name string) (*Result, error) {
	passed, failed := r.res.Count()
	switch {
	case failed > 0:
		r.res.Verdict = fmt.Sprintf("verify:rebuild: %s: FAIL: %d of %d files differ from the rebuild", name, failed, failed+passed)
	case len(r.res.Skipped) > 0:
		r.res.Verdict = fmt.Sprintf("verify:rebuild: %s: PARTIAL: %d files rebuilt identically; not rebuilt: %s", name, passed, strings.Join(r.res.Skipped, "; "))
	default:
		r.res.Verdict = fmt.Sprintf("verify:rebuild: %s: PASS: all %d files rebuilt identically", name, passed)
	}
	fmt.Fprintln(r.o.Report, r.res.Verdict)
	if failed > 0 {
		return r.res, fmt.Errorf("verify:rebuild: %s: %w: %d files", name, ErrDiffers, failed)
	}
	return r.res, nil
}

func sameJSON(a, b any) bool { return js(a) == js(b) }

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// linkProgram holds the program part's link checks record (name and
// digest) to the one this checkout links: another program gives other
// link records, so the manifest could not come out the same.
func (r *rebuilder) linkProgram(part *artifact.Manifest, rev string) string {
	prog := pipeline.LinkProgram(r.o.Runtime)
	ours := artifact.SHA256(prog.Source)
	for _, c := range part.LinkChecks {
		if c.Program != prog.Name || c.ProgramSHA256 != ours {
			return fmt.Sprintf("it was linked with %s (sha256 %s), this checkout links %s (sha256 %s): check out revision %s", c.Program, c.ProgramSHA256, prog.Name, ours, rev)
		}
	}
	return ""
}
