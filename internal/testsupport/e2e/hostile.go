package e2e

import (
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// hostileSettings are the settings of a twin's build under dir (BuildTwin):
// a deeper build directory, an artifact cache of its own (empty: it
// builds), and the make cache of second builds, apart from every
// fixture's, so its objects come from a make of their own, run once per
// plan in that directory and environment.
func hostileSettings(t testing.TB, dir string) pipeline.Settings {
	o := Settings(t, filepath.Join(dir, "another", "build", "path"))
	o.Fetch.CacheDir = filepath.Join(dir, "another", "cache")
	o.MakeCache = hostileMakeCache()
	o.Jobs = 2
	return o
}

// hostileMakeCache is the make cache of the twins: each plan built under a
// hostile environment in another directory, apart from the fixtures'
// so that the record and the fixtures come from two real makes.
func hostileMakeCache() string { return filepath.Join(Dir(), "make-hostile") }
