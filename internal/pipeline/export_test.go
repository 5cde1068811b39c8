package pipeline

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// Internals exported to the external tests (which need e2e, which imports
// this package).
var CacheKey = cacheKey

// Unsigned is s with the recipe allowed to waive a release's signature,
// for the synthetic trees nobody signs.
func Unsigned(s Settings) Settings {
	s.unsigned = true
	return s
}

// LinkProgram is the consumer rt links in the link stage (zero: smoke/smoke.c).
func (rt Runtime) LinkProgram() link.Program { return rt.linkProgram }

// CacheRevision is the osslbuild revision CacheLookup and CacheStore run
// as: a hit serves only an entry its own osslbuild made (the end-to-end
// fixtures': "test-" and their key).
var CacheRevision string

// CacheLookup reports whether the artifact cache entry key serves p (as
// osslbuild's own variant), the served tree's directory and the tarball it
// would publish ("" when it must write one).
func CacheLookup(s Settings, key string, p *recipe.Plan) (string, bool, error) {
	dir, _, ok, err := CacheLookupTarball(s, Runtime{Log: io.Discard, Environ: []string{}, Revision: CacheRevision}, key, p)
	return dir, ok, err
}

// CacheLookupFilesOnly is CacheLookup with the proof stages replaced by
// the entry's own records: for the benchmark of what validation costs a
// hit.
func CacheLookupFilesOnly(s Settings, key string, p *recipe.Plan) (string, bool, error) {
	dir, _, ok, err := cacheLookup(s, Runtime{Log: io.Discard, Environ: []string{}, Revision: CacheRevision}, key, p, true)
	return dir, ok, err
}

// CacheLookupTarball is CacheLookup with the runtime given, also returning
// the tarball served.
func CacheLookupTarball(s Settings, rt Runtime, key string, p *recipe.Plan) (dir, tarball string, ok bool, _ error) {
	return cacheLookup(s, rt, key, p, false)
}

func cacheLookup(s Settings, rt Runtime, key string, p *recipe.Plan, filesOnly bool) (dir, tarball string, ok bool, _ error) {
	r, err := newRun(context.Background(), s, rt)
	if err != nil {
		return "", "", false, err
	}
	c := &cachingBuilder{run: r, variant: Osslbuild}
	_, id, err := r.toolchain(context.Background(), p.Slice)
	if err != nil {
		return "", "", false, err
	}
	e, err := r.entry(key, artifactName(p, c.variant), id)
	if err != nil {
		return "", "", false, err
	}
	prove := r.proveSlice(p, c.variant, e.name)
	if filesOnly {
		// What a hit cost before it validated: the entry's own records
		// taken as they are.
		prove = func(_ context.Context, _ string, m *artifact.Manifest, _ bool) (proofRecords, error) {
			return proofRecords{m.CompilerLines, m.CodeEvidence, m.LinkChecks}, nil
		}
	}
	b, ok, err := r.cached(context.Background(), e, r.fitsPlan(p, c.variant, e.name, id), prove, r.ownSlice(p))
	if !ok || err != nil {
		return "", "", ok, err
	}
	return b.dir, b.tarball, true, nil
}

// CacheStore stores the artifact tree dir (with its manifest) under key, as
// a build of p would.
func CacheStore(s Settings, key, dir string, p *recipe.Plan) error {
	r, err := newRun(context.Background(), s, Runtime{Log: io.Discard, Environ: []string{}, Revision: CacheRevision})
	if err != nil {
		return err
	}
	_, id, err := r.toolchain(context.Background(), p.Slice)
	if err != nil {
		return err
	}
	e, err := r.entry(key, filepath.Base(dir), id)
	if err != nil {
		return err
	}
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		return err
	}
	return r.storeEntry(context.Background(), e, &built{dir: dir, manifest: m})
}

// Stages are the stage names of a variant, in order.
func (v *Variant) Stages() []string {
	var out []string
	for _, s := range v.stages {
		out = append(out, s.name)
	}
	return out
}

// StageFuncs are the stage functions' identities of a variant, for tests
// comparing two variants.
func (v *Variant) StageFunc(i int) any { return v.stages[i].run }

// ErrReachedRecord stops a FromTree build where record would run.
var ErrReachedRecord = errors.New("reached the record stage")

// FromTree is v for tests of the proof stages: instead of building, it
// lays out a copy of tree (a built artifact directory), then runs v's
// proof stages; where record would run it stops with ErrReachedRecord, so
// nothing is published either way.
func (v *Variant) FromTree(tree string) *Variant {
	stages := []stage{{"layout", func(ctx context.Context, j *job) error {
		j.dir = filepath.Join(j.work, "artifact", j.name)
		return os.CopyFS(j.dir, os.DirFS(tree))
	}, makes}}
	stages = append(stages, v.proofs(true)...)
	stages = append(stages, stage{"record", func(context.Context, *job) error { return ErrReachedRecord }, makes})
	return &Variant{Name: v.Name, stages: stages}
}

var ToolVersions = toolVersions
var MachineFault = machineFault
