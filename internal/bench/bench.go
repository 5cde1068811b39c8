// Package bench measures osslbuild against what it replaces, with the
// real thing on both sides, interleaved, as ratios:
//
//   - library speed (Library, bench:library): a small C program
//     (bench/osslbench.c) linked statically against an artifact's
//     libcrypto.a times a few operations in short slices alternated
//     between the two builds (paired.go), comparing osslbuild's
//     linux-x86_64 build with the same sources built the pyca way
//     (pipeline.PycaWay: CFLAGS in Configure's environment, which replaces
//     OpenSSL's -O3 and leaves the C code at -O0). C code paths (ML-KEM,
//     ML-DSA, Ed25519) come out several times slower the pyca way, assembly
//     paths (SHA3-256, P-256) about equal;
//   - build time (BuildTime, bench:build): osslbuild's targets as whole
//     processes against the shell step they replace (timing.go).
//
// No test asserts a timing; tests check the harness's correctness checks,
// the measurement plumbing and the builds' compiler lines.
package bench

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"

	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// Options for Library and the two builds it measures.
type Options struct {
	// Settings are shared by both builds: Version ("" = Version), Out (""
	// = <Work>/bench/dist), Work, Jobs, Fetch (its CacheDir holds both
	// builds' artifact cache entries), Recipe, Toolchain.
	Settings pipeline.Settings
	// Runtime runs both builds (Log also receives the benchmark's account).
	Runtime pipeline.Runtime
	// Harness is the C source of the benchmark; "" = bench/osslbench.c
	// under the current directory (the repository root under mage).
	Harness string
	// CC compiles the harness; "" = cc.
	CC string
	// SliceMS is how long one slice of an operation takes on the osslbuild
	// side, in ms (0 = 20): short, so both sides of a pair meet the same
	// load.
	SliceMS float64
	// MinPairs and MaxPairs bound the pairs per operation (0 = 15, 400).
	MinPairs, MaxPairs int
	// Tolerance is the interval's half-width, relative to the median
	// ratio, that ends sampling (0 = 0.03, ±3%).
	Tolerance float64
}

// DefaultHarness is where the harness source lives in the repository.
const DefaultHarness = "bench/osslbench.c"

func (o *Options) defaults() {
	o.Settings.Version = cmp.Or(o.Settings.Version, Version)
	o.Settings.Work = cmp.Or(o.Settings.Work, "build")
	// Not dist/: a benchmark run must not replace the user's artifacts.
	o.Settings.Out = cmp.Or(o.Settings.Out, filepath.Join(o.Settings.Work, "bench", "dist"))
	if o.Runtime.Log == nil {
		o.Runtime.Log = os.Stdout
	}
	o.Harness = cmp.Or(o.Harness, DefaultHarness)
	o.CC = cmp.Or(o.CC, "cc")
	// A value below zero takes the default too.
	o.SliceMS = cmp.Or(max(o.SliceMS, 0), 20)
	o.MinPairs = cmp.Or(max(o.MinPairs, 0), 15)
	if o.MaxPairs < o.MinPairs {
		o.MaxPairs = max(400, o.MinPairs)
	}
	o.Tolerance = cmp.Or(max(o.Tolerance, 0), 0.03)
}

// Median of v (the mean of the middle two for an even count); 0 for none.
// Every median in this package is this one.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
