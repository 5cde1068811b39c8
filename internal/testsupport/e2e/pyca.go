package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// PycaArm64 returns the path to an arm64 libcrypto.a of the real 4.0.2
// sources built the way pyca's macOS step built it (pipeline.PycaWay:
// CFLAGS=-mmacosx-version-min=11.0 in the environment of Configure, which
// replaces OpenSSL's "-O3 -Wall", so the library is built at -O0 and its
// compiler line has no -O flag). It is built once per run (see Shared)
// with the cross toolchain, through osslbuild's own stage table with the
// gate and the validation swapped.
func PycaArm64(t testing.TB) string {
	t.Helper()
	return filepath.Join(pyca(t, "arm64", "openssl-macos-arm64-pyca-way"), "lib", "libcrypto.a")
}

// pyca builds target the pyca way once per run (fixture pyca-<target>) and
// returns the directory of its artifact.
func pyca(t testing.TB, target, artifact string) string {
	t.Helper()
	Require(t)
	dir := Shared(t, "pyca-"+target, func(dir string) error {
		_, err := pipeline.Slice(context.Background(), Settings(t, dir), Runtime(t), target, pipeline.PycaWay)
		return err
	}, proveDist(pipeline.PycaWay))
	return filepath.Join(dir, "dist", artifact)
}

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
