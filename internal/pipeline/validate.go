package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/dispatch"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// Expect is what the Plan promises for one of a slice's libraries: its
// compiled x86-64 code within the slice's -march except the functions the
// release is known to compile for a higher target on purpose (a build
// holds it to the list scanned from its own source tree instead), and
// every version string the library embeds naming the release: a cache
// hit's libraries are held to the release the plan pins, whatever their
// manifest says.
func Expect(p *recipe.Plan, lib string) validate.Expect {
	return artifact.Expectation(p.Slice, lib, p.Release.Version, dispatch.Known(p.Release.Version))
}

// validateSlice holds every library of the tree against the Plan: the
// architecture and deployment target of every object, the compiler line
// (-O3, the recipe's flags) and the platform.
func validateSlice(ctx context.Context, j *job) error {
	return j.validate(ctx, false)
}

// validateFlagless stands in for validateSlice in the PycaWay variant: the
// same rules, except that the compiler line must carry no -O flag at all,
// as pyca's did (a pyca-way build that came out optimised reproduces
// nothing); validate then counts identical copies of that line as one (at
// -O0, crypto/info.o keeps its unused copy of buildinf.h's line beside
// cversion.o's).
func validateFlagless(ctx context.Context, j *job) error {
	return j.validate(ctx, true)
}

func (j *job) validate(ctx context.Context, noOptFlag bool) error {
	list, err := j.dispatchList()
	if err != nil {
		return err
	}
	var exports map[string]bool
	if j.plan.Slice.Shared != nil && j.staging != "" {
		if exports, err = j.releaseExports(); err != nil {
			return err
		}
	}
	lines, code, files, err := validateTree(ctx, j.dir, j.plan, exports, func(e validate.Expect) validate.Expect {
		e.NoOptFlag = noOptFlag
		if e.ISA != nil {
			e.ISA.Dispatch = list
		}
		return e
	})
	if err == nil {
		err = j.run.holdToRelease(ctx, j.dir, j.plan.Release, []platform.Slice{j.plan.Slice}, files)
	}
	if err != nil {
		return fmt.Errorf("refusing to publish: %w", err)
	}
	j.lines, j.code = lines, code
	for _, l := range lines {
		j.run.logf("%s: validated %s %s: %s", j.name, l.Library, l.Arch, l.Line)
	}
	for _, c := range code {
		j.run.logf("%s: machine code of %s %s: %s (score %.3f over %d functions)", j.name, c.Library, c.Arch, c.Class, c.Score, c.Functions)
		if c.ISA != nil {
			j.run.logf("%s: instruction set of %s %s: %s (held to %s; %d functions above it dispatched at run time, per %s)",
				j.name, c.Library, c.Arch, c.ISA.Level, c.ISA.Limit, len(c.ISA.Dispatched), c.ISA.List)
		}
	}
	return nil
}

// dispatchList is the list of functions the release's sources compile for
// a higher instruction set on purpose: scanned from the unpacked tree in a
// build; in a proof, the one the manifest recorded (set by the prover).
func (j *job) dispatchList() (dispatch.List, error) {
	if j.dispatch != nil {
		return *j.dispatch, nil
	}
	if j.tree == nil {
		return dispatch.Known(j.plan.Release.Version), nil
	}
	fns, err := dispatch.Scan(os.DirFS(j.tree.Dir))
	if err != nil {
		return dispatch.List{}, err
	}
	l := dispatch.List{Name: "the source tree of OpenSSL " + j.plan.Release.Version, Funcs: fns}
	j.dispatch = &l
	return l, nil
}

// validateTree validates every library under dir/lib, its machine code
// included, and returns the compiler lines found, the code verdicts and
// what it read of each library.
//
// exports, when the build's objects are at hand (not in a proof), are the
// symbols the release's objects define, which the shared libraries'
// exports are held to (releaseExports).
func validateTree(ctx context.Context, dir string, p *recipe.Plan, exports map[string]bool, adjust func(validate.Expect) validate.Expect) ([]artifact.CompilerLine, []artifact.CodeEvidence, map[string]*inspect.File, error) {
	var errs []error
	var lines []artifact.CompilerLine
	var code []artifact.CodeEvidence
	files := map[string]*inspect.File{}
	for _, lib := range p.Slice.Libraries() {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		path := filepath.Join(dir, "lib", lib)
		var rep validate.Report
		var err error
		if p.Slice.IsShared(lib) {
			d := dylibExpect(p, lib, dir)
			d.Exports = exports
			rep, err = validate.Dylib(ctx, path, []validate.Expect{adjust(Expect(p, lib))}, d)
		} else {
			rep, err = validate.StaticLibraryContext(ctx, path, adjust(Expect(p, lib)))
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files[lib] = rep.File
		lines = append(lines, artifact.CompilerLinesOf(rep.File, lib)...)
		code = append(code, artifact.CodeEvidenceOf(rep, lib)...)
	}
	return lines, code, files, errors.Join(errs...)
}

// dylibExpect is what a shared library of the slice must say of itself:
// the recipe's install name (an ELF library's SONAME), the platform's
// system libraries and (for libssl) libcrypto by its install name as its
// only dependencies, and no path of the build directory the artifact tree
// lies in.
func dylibExpect(p *recipe.Plan, lib, dir string) validate.DylibExpect {
	s, prefix := p.Slice, p.Recipe.Prefix
	d := artifact.DylibExpectation(s, lib, func(l string) string { return s.InstallNameOf(l, prefix) })
	d.Forbidden = []string{filepath.Dir(filepath.Dir(dir))} // the build's work directory
	return d
}

// exportsFile, at the staging directory's root (outside the install
// prefix, so never laid out), lists the external symbols the objects of a
// shared-only build define, one per line: it has no archives to read them
// from, and it is made with the staging directory, so the make cache
// keeps it.
const exportsFile = "osslbuild-exports.txt"

// releaseExports are the external symbols the release's objects define:
// OpenSSL links some of libcrypto's sources into libssl's shared library
// too (its packet and hash table code), so what they define, in either
// library, either shared library may export. They are read from the
// staged archives, or for a shared-only build from its exportsFile.
func (j *job) releaseExports() (map[string]bool, error) {
	if !j.sharedOnly() {
		staged := filepath.Join(j.staging, j.plan.Recipe.Prefix, "lib") // the staging install's lib/
		return definedBy(filepath.Join(staged, "libcrypto.a"), filepath.Join(staged, "libssl.a"))
	}
	b, err := os.ReadFile(filepath.Join(j.staging, exportsFile))
	if err != nil {
		return nil, fmt.Errorf("exports: %w", err)
	}
	out := map[string]bool{}
	for _, n := range strings.Fields(string(b)) {
		out[n] = true
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("exports: %s lists no symbol", exportsFile)
	}
	return out, nil
}

// writeExports writes exportsFile of a shared-only build: the symbols the
// objects of its shared libraries define (shared, relative to the source
// tree src) that are the release's library objects, those the static
// archives list (static) or their shared twins (libcrypto-shlib-x.o for
// libcrypto-lib-x.o), as the archives would have defined them. An object
// only the shared libraries' rules name (linked in from elsewhere) defines
// none of them, so what it exports is refused as it would be beside the
// archives.
func writeExports(src, staging string, shared, static []string) error {
	release := map[string]bool{}
	for _, o := range static {
		release[o] = true
	}
	out := map[string]bool{}
	for _, o := range shared {
		dir, base := path.Split(o)
		if !release[o] && !release[dir+strings.Replace(base, "-shlib-", "-lib-", 1)] {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, o))
		if err != nil {
			return fmt.Errorf("exports: %w", err)
		}
		syms, err := inspect.DefinedExternals(data)
		if err != nil {
			return fmt.Errorf("exports: %s: %w", o, err)
		}
		for _, n := range syms {
			out[n] = true
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("exports: the %d objects of the shared libraries define no symbol", len(shared))
	}
	names := slices.Sorted(maps.Keys(out))
	return os.WriteFile(filepath.Join(staging, exportsFile), []byte(strings.Join(names, "\n")+"\n"), 0o644)
}

// definedBy is every external symbol the objects of the static archives
// define: what the dylibs of the same objects may export.
func definedBy(archives ...string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, archive := range archives {
		l, err := artifact.ReadLibrary(context.Background(), archive)
		if err != nil {
			return nil, fmt.Errorf("exports: %s: %w", filepath.Base(archive), err)
		}
		for _, syms := range l.Symbols {
			for _, n := range syms {
				out[n] = true
			}
		}
	}
	return out, nil
}

// Prove holds a published artifact directory to what this osslbuild would
// establish of it now: every file against its manifest, then the proof
// stages of variant v (validation with the machine code, the link) for a
// slice, or for a universal artifact each slice validated inside the fat
// libraries and linked. It is what the tests run over a fixture built by an
// earlier run before they use it.
func Prove(ctx context.Context, s Settings, rt Runtime, dir string, v *Variant) error {
	r, err := newRun(ctx, s, rt)
	if err != nil {
		return err
	}
	m, err := artifact.Verify(ctx, dir)
	if err != nil {
		return err
	}
	var recs proofRecords
	if len(m.Slices) > 0 {
		recs, err = r.proveUniversal(ctx, dir, m, true)
	} else {
		rel, _, rerr := r.recipe.Resolve(m.OpenSSL.Version, m.OpenSSL.SHA256)
		if rerr != nil {
			return rerr
		}
		p, perr := r.recipe.PlanFor(rel, m.Target.Name, m.Target.Options)
		if perr != nil {
			return perr
		}
		recs, err = r.proveSlice(p, v, m.Name)(ctx, dir, m, true)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	// A manifest whose records are not what this code measures and links
	// (a classifier that scores otherwise) was not written by it.
	if recs.refresh(m) {
		return fmt.Errorf("%s: its manifest records compiler lines, code evidence or link checks other than this osslbuild's", m.Name)
	}
	return nil
}

// proveUniversal validates every slice of a universal artifact inside its
// fat libraries, as the slice's manifest expects, and (with link) links
// each, returning what it measured and linked.
func (r *run) proveUniversal(ctx context.Context, dir string, m *artifact.Manifest, link bool) (proofRecords, error) {
	var errs []error
	var recs proofRecords
	files := map[string]*inspect.File{}
	if slices.Contains(m.Slices, nil) {
		return recs, fmt.Errorf("%s: manifest has an empty slice entry", m.Name)
	}
	for _, lib := range m.Target.Libraries() {
		rep, err := universal.ValidateLibrary(ctx, filepath.Join(dir, "lib", lib), lib, m.Target, m.Slices)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files[lib] = rep.File
		lines := artifact.CompilerLinesOf(rep.File, lib)
		for _, l := range lines {
			r.logf("%s: validated %s %s: %s", m.Name, l.Library, l.Arch, l.Line)
		}
		recs.lines = append(recs.lines, lines...)
		recs.code = append(recs.code, artifact.CodeEvidenceOf(rep, lib)...)
	}
	if len(errs) == 0 {
		// The release the manifest records, as this run's recipe resolves
		// it (one it does not list, pinned by the sha256 recorded).
		rel, _, err := r.recipe.Resolve(m.OpenSSL.Version, m.OpenSSL.SHA256)
		if err == nil {
			err = r.holdToRelease(ctx, dir, rel, m.Parts(), files)
		}
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return recs, fmt.Errorf("%s: %w", m.Name, err)
	}
	if !link {
		recs.links = m.LinkChecks
		return recs, nil
	}
	links, err := r.linkTree(ctx, dir, m.Parts())
	recs.links = links
	return recs, err
}
