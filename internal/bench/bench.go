// Package bench measures the libraries osslbuild builds: a small C program
// (bench/osslbench.c) linked statically against an artifact's libcrypto.a
// times a few operations, and Library compares osslbuild's linux-x86_64
// build with the same sources built "the pyca way" (CFLAGS in Configure's
// environment, which replaces OpenSSL's -O3 and leaves the C code at -O0).
//
// The point is the shape of the result, not its absolute numbers: C code
// paths (ML-KEM, ML-DSA, Ed25519) several times slower in the pyca-way
// build, assembly paths (SHA3-256, P-256) about equal. No test asserts a
// timing; tests check the harness's correctness checks and the builds'
// compiler lines.
package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// Options for Library and the builds it runs.
type Options struct {
	// Pipeline are the build options shared by both builds: Version ("" =
	// Version), Out ("" = <Work>/bench/dist), Work, Jobs, Fetch (its
	// CacheDir also holds the pyca-way build), Log, Recipe, Toolchain.
	Pipeline pipeline.Options
	// Harness is the C source of the benchmark; "" = bench/osslbench.c
	// under the current directory (the repository root under mage).
	Harness string
	// CC compiles the harness; "" = cc.
	CC string
	// Calls is how many timed calls per operation per run (0 = 1000).
	Calls int
	// Rounds is how many A/B rounds to run (0 = 3).
	Rounds int
}

// DefaultHarness is where the harness source lives in the repository.
const DefaultHarness = "bench/osslbench.c"

func (o *Options) defaults() {
	if o.Pipeline.Version == "" {
		o.Pipeline.Version = Version
	}
	if o.Pipeline.Work == "" {
		o.Pipeline.Work = "build"
	}
	if o.Pipeline.Out == "" {
		// Not dist/: a benchmark run must not replace the user's artifacts.
		o.Pipeline.Out = filepath.Join(o.Pipeline.Work, "bench", "dist")
	}
	if o.Pipeline.Jobs <= 0 {
		o.Pipeline.Jobs = runtime.NumCPU()
	}
	if o.Pipeline.Log == nil {
		o.Pipeline.Log = os.Stdout
	}
	if o.Pipeline.ProgressInterval == 0 {
		o.Pipeline.ProgressInterval = 30 * time.Second
	}
	if o.Harness == "" {
		o.Harness = DefaultHarness
	}
	if o.CC == "" {
		o.CC = "cc"
	}
	if o.Calls <= 0 {
		o.Calls = 1000
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
}

// pipelineOptions are the options both builds run with.
func (o Options) pipelineOptions() (pipeline.Options, error) {
	o.defaults()
	return o.Pipeline, nil
}
