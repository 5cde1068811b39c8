package pipeline

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/recipe"
)

// Internals exported to the external tests (which need e2e, which imports
// this package).
var CacheKey = cacheKey

// CacheLookup reports whether the artifact cache entry key serves p (as
// osslbuild's own variant), and the served tree's directory.
func CacheLookup(s Settings, key string, p *recipe.Plan) (string, bool, error) {
	r, err := newRun(s, Runtime{Log: io.Discard, Environ: []string{}})
	if err != nil {
		return "", false, err
	}
	root, err := cacheDir(s.Fetch.CacheDir)
	if err != nil {
		return "", false, err
	}
	c := &cachingBuilder{run: r, variant: Osslbuild}
	b, ok, err := c.lookup(context.Background(), filepath.Join(root, "artifacts", key), p)
	if !ok || err != nil {
		return "", ok, err
	}
	return b.dir, true, nil
}

// CacheStore stores the artifact tree dir (with its manifest) under key.
func CacheStore(s Settings, key, dir string) error {
	root, err := cacheDir(s.Fetch.CacheDir)
	if err != nil {
		return err
	}
	return store(context.Background(), filepath.Join(root, "artifacts", key), &built{dir: dir})
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
	}, false}}
	stages = append(stages, v.proofs()...)
	stages = append(stages, stage{"record", func(context.Context, *job) error { return ErrReachedRecord }, false})
	return &Variant{Name: v.Name, stages: stages}
}
