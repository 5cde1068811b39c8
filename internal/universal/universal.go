// Package universal merges an arm64 and an x86_64 osslbuild artifact into a
// universal2 artifact: lipo'd static libraries (each slice re-validated inside
// the fat file), headers that are identical or explicitly dispatched per
// architecture, and relocatable metadata that must agree. It refuses pairs
// that were not built from the same source, recipe and patches.
package universal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/sbom"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// Name is the universal2 artifact's name (pyca's).
const Name = "openssl-macos-universal2"

// ErrRefused marks a pair of slices that must not be merged.
var ErrRefused = errors.New("refusing to merge")

// Slice is one input artifact tree and its manifest.
type Slice struct {
	Dir      string
	Manifest *artifact.Manifest
}

// Load verifies an artifact directory against its manifest (every file's
// sha256; nothing missing, added, linked or special) and returns it. A
// slice from another runner is trusted no further than that: Merge
// validates its libraries again.
func Load(ctx context.Context, dir string) (Slice, error) {
	m, err := artifact.Verify(ctx, dir)
	if err != nil {
		return Slice{}, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return Slice{Dir: dir, Manifest: m}, nil
}

// Kind is the universal artifact this package makes, a name of the
// platform table's.
const Kind = "universal2"

// archOrder is the slice order of the universal file and the dispatch.
var archOrder = platform.UniversalArchs(Kind)

// ValidateLibrary validates the universal library lib of target at path,
// each architecture's slice held to what its slice manifest (parts, in
// the file's order) records: every version string the library embeds
// must name that manifest's release.
func ValidateLibrary(ctx context.Context, path, lib string, target platform.Slice, parts []*artifact.Manifest) (validate.Report, error) {
	var exps []validate.Expect
	for _, sm := range parts {
		exps = append(exps, artifact.ExpectOf(sm, sm.Target, lib))
	}
	if target.IsShared(lib) {
		return validate.Dylib(ctx, path, exps, artifact.DylibExpectOf(parts[0], lib))
	}
	return validate.UniversalContext(ctx, path, exps)
}

// Compatible refuses pairs that cannot be one universal artifact.
func Compatible(a, b Slice) error {
	ma, mb := a.Manifest, b.Manifest
	var why []string
	if ma.Slices != nil || mb.Slices != nil {
		why = append(why, "an input is already a universal artifact")
	}
	if ma.Target.Arch == mb.Target.Arch {
		why = append(why, fmt.Sprintf("both slices are %s", ma.Target.Arch))
	} else {
		for _, m := range []*artifact.Manifest{ma, mb} {
			if !slices.Contains(archOrder, m.Target.Arch) {
				why = append(why, fmt.Sprintf("%s is for %s; universal2 is x86_64 + arm64", m.Name, m.Target.Arch))
			}
		}
	}
	for _, m := range []*artifact.Manifest{ma, mb} {
		if p, err := platform.Lookup(m.Target); err != nil || p.Universal != Kind {
			why = append(why, fmt.Sprintf("%s is for %s %s, which the platform table does not merge into %s", m.Name, m.Target.OS, m.Target.Arch, Kind))
		}
	}
	cmp := func(what, x, y string) {
		if x != y {
			why = append(why, fmt.Sprintf("%s differ: %s has %q, %s has %q", what, ma.Name, x, mb.Name, y))
		}
	}
	cmp("OpenSSL versions", ma.OpenSSL.Version, mb.OpenSSL.Version)
	cmp("source digests", ma.OpenSSL.SHA256, mb.OpenSSL.SHA256)
	cmp("recipes", ma.Recipe.Name+"@"+ma.Recipe.SHA256, mb.Recipe.Name+"@"+mb.Recipe.SHA256)
	cmp("patches", patchList(ma), patchList(mb))
	cmp("SOURCE_DATE_EPOCH", fmt.Sprint(ma.SourceDateEpoch), fmt.Sprint(mb.SourceDateEpoch))
	// One universal artifact has one option set (its SBOM states one
	// build:flags); the recipe digest no longer pins it, since a caller may
	// give the options (-options).
	if !slices.Equal(ma.Target.Options, mb.Target.Options) {
		why = append(why, fmt.Sprintf("option sets differ: %v vs %v", ma.Target.Options, mb.Target.Options))
	}
	if !slices.Equal(ma.Target.Libraries(), mb.Target.Libraries()) || !reflect.DeepEqual(ma.Target.Shared, mb.Target.Shared) {
		why = append(why, fmt.Sprintf("libraries differ: %v vs %v", ma.Target.Libraries(), mb.Target.Libraries()))
	}
	if len(why) > 0 {
		return fmt.Errorf("%s + %s: %s: %w", ma.Name, mb.Name, strings.Join(why, "; "), ErrRefused)
	}
	return nil
}

func patchList(m *artifact.Manifest) string {
	var s []string
	for _, p := range m.Patches {
		s = append(s, p.Name+"@"+p.SHA256)
	}
	return strings.Join(s, ",")
}

// Provenance is what the merging osslbuild states as its own facts in the
// universal manifest: itself, its toolchain (lipo), its recipe, the source
// release as that recipe pins it (no signature record: the merge verified
// no signature), and the patches it applies to that release.
type Provenance struct {
	Osslbuild string
	Toolchain toolchain.Identity
	Recipe    artifact.RecipeRef
	OpenSSL   artifact.Source
	Patches   []artifact.Patch
}

// Merge writes the universal2 tree for the two slices into dst (which must
// not exist) and returns its manifest (already written into dst). dispatch
// are the public headers the recipe allows to differ between the slices;
// any other difference is refused.
//
// Every field of the manifest is verified or recomputed here: the top
// level is p's and the merge's own (compiler lines and code evidence of the
// fat libraries), each slice's record keeps what was verified (its files,
// its target and Configure record, held to the recipe by the caller, its
// source release and patches, equal to p's) with its compiler lines and
// code evidence recomputed from the merged libraries, and what nothing
// here can verify (the osslbuild, toolchain and recipe that built it, where
// its source came from and who signed it) is moved into the slice's claims.
func Merge(ctx context.Context, tc toolchain.Toolchain, a, b Slice, dst string, dispatch []string, p Provenance) (*artifact.Manifest, error) {
	if err := Compatible(a, b); err != nil {
		return nil, err
	}
	applied := patchList(&artifact.Manifest{Patches: p.Patches})
	for _, s := range []Slice{a, b} {
		m := s.Manifest
		var why []string
		if patchList(m) != applied {
			why = append(why, fmt.Sprintf("it records patches %q, this osslbuild applies %q to OpenSSL %s", patchList(m), applied, p.OpenSSL.Version))
		}
		if m.OpenSSL.Version != p.OpenSSL.Version || m.OpenSSL.SHA256 != p.OpenSSL.SHA256 || m.OpenSSL.File != p.OpenSSL.File {
			why = append(why, fmt.Sprintf("it records the source %s %s, the recipe pins %s %s", m.OpenSSL.File, m.OpenSSL.SHA256, p.OpenSSL.File, p.OpenSSL.SHA256))
		}
		if len(why) > 0 {
			return nil, fmt.Errorf("%s: %s: %w", m.Name, strings.Join(why, "; "), ErrRefused)
		}
	}
	byArch := map[string]Slice{a.Manifest.Target.Arch: a, b.Manifest.Target.Arch: b}
	ordered := []Slice{byArch[archOrder[0]], byArch[archOrder[1]]}

	// Every slice must pass the single-slice validation before merging, so a
	// bad input is named as the input, not discovered inside the fat file.
	var errs []error
	libs := a.Manifest.Target.Libraries()
	for _, s := range ordered {
		for _, lib := range libs {
			p := filepath.Join(s.Dir, "lib", lib)
			if _, err := os.Stat(p); err != nil {
				errs = append(errs, fmt.Errorf("%s: missing lib/%s: %w", s.Manifest.Name, lib, ErrRefused))
				continue
			}
			var err error
			if s.Manifest.Target.IsShared(lib) {
				_, err = validate.Dylib(ctx, p, []validate.Expect{artifact.ExpectOf(s.Manifest, s.Manifest.Target, lib)}, artifact.DylibExpectOf(s.Manifest, lib))
			} else {
				_, err = validate.StaticLibraryContext(ctx, p, artifact.ExpectOf(s.Manifest, s.Manifest.Target, lib))
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w: %w", s.Manifest.Name, ErrRefused, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	dispatched, err := mergeTrees(ctx, ordered, dst, dispatch, libs)
	if err != nil {
		return nil, err
	}
	m := &artifact.Manifest{
		Name: Name, Osslbuild: p.Osslbuild,
		Recipe: p.Recipe, OpenSSL: p.OpenSSL, Patches: p.Patches,
		Target: platform.Slice{Name: Kind, OS: a.Manifest.Target.OS, Arch: strings.Join(archOrder, "+"),
			Flags: []string{}, Options: a.Manifest.Target.Options, Shared: a.Manifest.Target.Shared},
		Toolchain:       p.Toolchain,
		SourceDateEpoch: a.Manifest.SourceDateEpoch,
		HeaderDispatch:  dispatched,
		Configure:       artifact.Configure{Argv: []string{}, Env: []string{}},
	}
	for _, s := range ordered {
		m.Slices = append(m.Slices, claimed(s.Manifest, p))
	}
	for _, lib := range libs {
		out := filepath.Join(dst, "lib", lib)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return nil, fmt.Errorf("merge %s: %w", lib, err)
		}
		if err := tc.Lipo(ctx, out, filepath.Join(ordered[0].Dir, "lib", lib), filepath.Join(ordered[1].Dir, "lib", lib)); err != nil {
			return nil, fmt.Errorf("merge %s: %w", lib, err)
		}
		rep, err := ValidateLibrary(ctx, out, lib, a.Manifest.Target, []*artifact.Manifest{ordered[0].Manifest, ordered[1].Manifest})
		if err != nil {
			return nil, fmt.Errorf("merged %s: %w", lib, err)
		}
		m.CompilerLines = append(m.CompilerLines, artifact.CompilerLinesOf(rep.File, lib)...)
		m.CodeEvidence = append(m.CodeEvidence, artifact.CodeEvidenceOf(rep, lib)...)
	}
	// Each slice's lines and code are what the merged libraries hold for
	// its architecture, measured here.
	artifact.Distribute(m)
	if m.Dylibs, err = artifact.DylibsOf(dst, a.Manifest.Target); err != nil {
		return nil, err
	}
	if err := sbom.Write(dst, m); err != nil {
		return nil, err
	}
	return m, artifact.WriteManifest(ctx, dst, m)
}

// mergeTrees copies everything but the libraries and the manifest: files
// identical in both slices are copied, public headers listed in allowed
// that differ get a per-architecture dispatch, anything else must be
// identical: a header changed in one slice is a different build, or
// tampering, not an architecture.
func mergeTrees(ctx context.Context, ordered []Slice, dst string, allowed, libs []string) ([]string, error) {
	files := map[string]bool{}
	lists := make([]map[string]bool, len(ordered))
	for i, s := range ordered {
		lists[i] = map[string]bool{}
		err := filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(s.Dir, p)
			rel = filepath.ToSlash(rel)
			// Per-slice records and the libraries are made anew for the
			// universal artifact.
			if rel == artifact.ManifestName || rel == artifact.SBOMName || slices.Contains(libs, strings.TrimPrefix(rel, "lib/")) {
				return nil
			}
			lists[i][rel] = true
			files[rel] = true
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
	}
	var dispatch, problems []string
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		for i, s := range ordered {
			if !lists[i][rel] {
				problems = append(problems, fmt.Sprintf("%s is missing from %s", rel, s.Manifest.Name))
			}
		}
		if !lists[0][rel] || !lists[1][rel] {
			continue
		}
		x, err := ctxio.ReadFile(ctx, filepath.Join(ordered[0].Dir, rel), false, artifact.MaxTarStream)
		if err != nil {
			return nil, err
		}
		y, err := ctxio.ReadFile(ctx, filepath.Join(ordered[1].Dir, rel), false, artifact.MaxTarStream)
		if err != nil {
			return nil, err
		}
		out := x
		if !bytes.Equal(x, y) {
			if !slices.Contains(allowed, rel) {
				problems = append(problems, fmt.Sprintf("%s differs between the slices (sha256 %s in %s, %s in %s); the recipe does not declare that it may (universal2_dispatch)",
					rel, artifact.SHA256(x), ordered[0].Manifest.Name, artifact.SHA256(y), ordered[1].Manifest.Name))
				continue
			}
			out = Dispatch(rel, x, y)
			dispatch = append(dispatch, rel)
		}
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			return nil, err
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("merge %s + %s: %s: %w", ordered[0].Manifest.Name, ordered[1].Manifest.Name, strings.Join(problems, "; "), ErrRefused)
	}
	return dispatch, nil
}

// Dispatch joins the x86_64 and arm64 versions of a header so each
// architecture of a universal compile sees its own, and anything else stops.
func Dispatch(rel string, x86, arm []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "/* %s: merged by osslbuild for universal2; the slices' versions differ. */\n", rel)
	branch := func(cond string, header []byte) {
		b.WriteString(cond + "\n")
		b.Write(header)
		if !bytes.HasSuffix(header, []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	branch("#if defined(__x86_64__)", x86)
	branch("#elif defined(__arm64__) || defined(__aarch64__)", arm)
	fmt.Fprintf(&b, "#else\n#error \"%s: this universal2 OpenSSL has headers for x86_64 and arm64 only\"\n#endif\n", rel)
	return b.Bytes()
}

// claimed is a slice's record as the universal manifest keeps it: a copy
// with what the merge cannot verify (the osslbuild, toolchain and recipe
// that built it, its source's origin and signature) moved into Claims, and
// its verified source record reduced to p's. Its link checks are dropped:
// the merged libraries are linked anew for each slice (pipeline's link
// stage records them).
func claimed(m *artifact.Manifest, p Provenance) *artifact.Manifest {
	c := *m
	c.Claims = &artifact.Claims{Osslbuild: m.Osslbuild, Toolchain: m.Toolchain, Recipe: m.Recipe, Source: m.OpenSSL}
	c.Osslbuild, c.Toolchain, c.Recipe = "", toolchain.Identity{}, artifact.RecipeRef{}
	c.OpenSSL = p.OpenSSL
	c.Patches = p.Patches
	c.LinkChecks = nil
	return &c
}
