package pipeline

import (
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// Internals exported to the external tests (which need e2e, which imports
// this package).
var CacheKey = cacheKey

// CacheLookup reports whether the artifact cache serves p under key, and the
// served tree's directory.
func CacheLookup(o Options, key string, p *recipe.Plan) (string, bool, error) {
	o.defaults()
	s, ok, err := cachedSlice(&o, key, p)
	if !ok || err != nil {
		return "", ok, err
	}
	return s.dir, true, nil
}

// CacheStore stores the artifact tree dir (with its manifest) under key.
func CacheStore(o Options, key, dir string) error {
	o.defaults()
	return storeSlice(&o, key, &builtSlice{dir: dir})
}
