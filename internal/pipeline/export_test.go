package pipeline

import (
	"context"
	"io"
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
