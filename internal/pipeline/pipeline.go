// Package pipeline is the one place that knows the order of a build. The
// slice build is a table of stages (stages.go), each in a file of its own;
// caching and a shared make job budget wrap the builder that runs the table
// (builder.go, cache.go), and universal2 runs two slice builds and merges
// them (universal.go). Every stage delegates to the package that owns its
// idea (source, toolchain, configure, build, artifact, validate); the
// magefile calls one function here per target.
package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/buildinfo"
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/patches"
)

// Settings are what a user chooses for a build: target flags and the
// OSSLBUILD_* environment variables (FromEnv).
type Settings struct {
	Recipe string // recipe name or path (-recipe, OSSLBUILD_RECIPE); "" = the embedded default
	// Loaded is Recipe already read and validated (targets.Flags.Settings
	// does so to refuse a bad -recipe early); the run builds from it and
	// does not read the file again, so a recipe swapped in between is not
	// what builds. nil: the run reads Recipe when it starts.
	Loaded *recipe.Recipe
	// unsigned lets the recipe waive a release's signature
	// (recipe.LoadOptions): for Go tests of synthetic trees only
	// (export_test.go); no flag or environment variable sets it.
	unsigned bool
	Version  string // release, X.Y.Z or openssl-X.Y.Z; "" = the recipe's default
	// SHA256 pins the release's tarball: for a release the recipe lists it
	// must be the recipe's pin; a release the recipe does not list is
	// built only with it (fetched from upstream, proven like a bump).
	SHA256 string
	// Options replace the recipe's Configure options (nil: the recipe's),
	// held to the same rules and the recipe's per-version limits.
	Options   []string
	Out       string // output directory; "" = dist
	Work      string // root for private build directories; "" = build
	Jobs      int    // make -j; 0 = CPU count
	Toolchain string // "macos", "cross" or "" for the host default
	Keep      bool   // keep the build directory after success
	Rebuild   bool   // build even when the artifact cache has a valid entry
	// MakeCache, when set (OSSLBUILD_MAKE_CACHE), keeps what Configure and
	// make made by the plan alone, so that a build whose plan is unchanged
	// runs only the stages after make (makecache.go): for developing
	// osslbuild and for its test fixtures. Rebuild bypasses it (and
	// FromEnv does not take OSSLBUILD_MAKE_CACHE for a Rebuild), so
	// -rebuild, verify:rebuild and verify:reproducible always run make.
	MakeCache string
	// MakeCacheOnRebuild uses MakeCache with Rebuild too: only for
	// verify:rebuild's own end-to-end test (rebuild.Options.TestMakeCache),
	// which runs everything after make again over the fixtures' make
	// output. No flag or environment variable sets it.
	MakeCacheOnRebuild bool

	Fetch fetch.Options // cache, mirror, offline
}

// FromEnv fills the settings users give through the environment (getenv;
// nil means os.Getenv): OSSLBUILD_RECIPE, OSSLBUILD_CACHE, OSSLBUILD_MIRROR,
// OSSLBUILD_OFFLINE, OSSLBUILD_TOOLCHAIN, OSSLBUILD_WORK, OSSLBUILD_MAKE_CACHE,
// OSSLBUILD_FETCH_DEADLINE (per file) and OSSLBUILD_FETCH_MIN_RATE. A value that
// cannot mean anything (OSSLBUILD_OFFLINE=maybe) is an error, never a
// silent default.
func (s *Settings) FromEnv(getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	s.Recipe = cmp.Or(s.Recipe, getenv("OSSLBUILD_RECIPE"))
	s.Fetch.CacheDir = cmp.Or(s.Fetch.CacheDir, getenv("OSSLBUILD_CACHE"))
	s.Fetch.Mirror = cmp.Or(s.Fetch.Mirror, getenv("OSSLBUILD_MIRROR"))
	off, err := EnvBool("OSSLBUILD_OFFLINE", getenv("OSSLBUILD_OFFLINE"))
	if err != nil {
		return err
	}
	s.Fetch.Offline = s.Fetch.Offline || off
	s.Toolchain = cmp.Or(s.Toolchain, getenv("OSSLBUILD_TOOLCHAIN"))
	s.Work = cmp.Or(s.Work, getenv("OSSLBUILD_WORK"))
	if s.MakeCache == "" && !s.Rebuild {
		s.MakeCache = getenv("OSSLBUILD_MAKE_CACHE")
	}
	if v := getenv("OSSLBUILD_FETCH_DEADLINE"); v != "" && s.Fetch.Deadline == 0 {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("OSSLBUILD_FETCH_DEADLINE=%q: want a positive duration such as 30m", v)
		}
		s.Fetch.Deadline = d
	}
	if v := getenv("OSSLBUILD_FETCH_MIN_RATE"); v != "" && s.Fetch.MinRate == 0 {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("OSSLBUILD_FETCH_MIN_RATE=%q: want bytes per second (0 for the default)", v)
		}
		s.Fetch.MinRate = n
	}
	return nil
}

// EnvBool parses the boolean environment variable name: 1, true, yes, on
// and 0, false, no, off in any case; empty (unset) is false; anything else
// is an error naming the variable.
func EnvBool(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: want 1/true/yes/on or 0/false/no/off", name, v)
}

func (s *Settings) defaults() {
	s.Out = cmp.Or(s.Out, "dist")
	s.Work = cmp.Or(s.Work, "build")
	if s.Jobs <= 0 {
		s.Jobs = runtime.NumCPU()
	}
}

// Runtime is what runs a build, as opposed to what it builds: where its
// account goes and who else hears of it. The zero value prints to stdout.
type Runtime struct {
	// Log receives progress and the short account of each stage.
	Log io.Writer
	// Observer hears of build logs, failures and published artifacts (the
	// GitHub Actions front end: log groups, annotations, step summary).
	Observer Observer
	// ProgressInterval spaces plain progress lines off a terminal.
	ProgressInterval time.Duration
	// Environ is the invoker's environment, read only to say which of its
	// variables are ignored; nil means os.Environ(). It never reaches a build.
	Environ []string
	// Now is the clock end-of-life warnings read; nil means time.Now.
	Now func() time.Time
	// Advise says what is known against a release (its high or critical
	// advisories, advisory.Warning); nil says nothing. A hook, not an
	// import: the advisory table is data that changes weekly, and the
	// build path (which keys the test fixtures) must not change with it.
	Advise func(version string) (string, bool)
	// Revision is osslbuild's own version for manifests and cache keys;
	// "" means Version(ctx).
	Revision string
	// linkProgram is the consumer the link stage links with every member
	// of the libraries; zero means smoke/smoke.c. Tests that build an
	// OpenSSL-shaped tree which is not OpenSSL give one that uses its API
	// (WithLinkProgram): nothing else sets it.
	linkProgram link.Program
}

// Observer is told what a CI front end reports; every method must be safe
// for concurrent use (two slices build at once).
type Observer interface {
	BuildLog(name, path string)                              // a slice's full build log, when its build ends
	Failed(name string, err error)                           // a slice or merge failed
	Published(m *artifact.Manifest, pub *artifact.Published) // an artifact reached the output directory
}

func (rt *Runtime) defaults(ctx context.Context) {
	if rt.Log == nil {
		rt.Log = os.Stdout
	}
	rt.ProgressInterval = cmp.Or(rt.ProgressInterval, 30*time.Second)
	if rt.Environ == nil {
		rt.Environ = os.Environ()
	}
	if rt.Revision == "" {
		rt.Revision = Version(ctx)
	}
	if rt.Observer == nil {
		rt.Observer = nopObserver{}
	}
	if rt.Now == nil {
		rt.Now = time.Now
	}
}

func (rt *Runtime) logf(format string, args ...any) {
	fmt.Fprintf(rt.Log, format+"\n", args...)
}

type nopObserver struct{}

func (nopObserver) BuildLog(string, string)                           {}
func (nopObserver) Failed(string, error)                              {}
func (nopObserver) Published(*artifact.Manifest, *artifact.Published) {}

// Result is a published artifact.
type Result struct {
	Plan      *recipe.Plan // nil for a merge
	Published *artifact.Published
	Manifest  *artifact.Manifest
}

// Fetch is the source:fetch target: download and verify a release.
func Fetch(ctx context.Context, s Settings, rt Runtime) (*source.Verified, error) {
	r, err := newRun(ctx, s, rt)
	if err != nil {
		return nil, err
	}
	rel, err := r.release(ctx)
	if err != nil {
		return nil, err
	}
	return r.fetched(ctx, rel, source.Fetch, "")
}

// Unpack is the source:unpack target: a verified, patched tree at dest
// (default build/src/openssl-X.Y.Z).
func Unpack(ctx context.Context, s Settings, rt Runtime, dest string) (*source.Tree, error) {
	v, err := Fetch(ctx, s, rt)
	if err != nil {
		return nil, err
	}
	dest = cmp.Or(dest, filepath.Join("build", "src", "openssl-"+v.Release.Version))
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, err
	}
	t, err := source.Unpack(ctx, v, dest, patches.FS)
	if err != nil {
		return nil, err
	}
	rt.defaults(ctx)
	rt.logf("source: unpacked into %s (%d patches applied)", dest, len(t.Patches))
	return t, nil
}

// revision is osslbuild's version stamped at link time
// (-ldflags "-X github.com/osslbuild/osslbuild/internal/pipeline.revision=...")
// and taken as given: the composite action stamps the ref its caller
// pinned when it runs from no checkout of its own (and its tests stamp
// the fixtures' key).
var revision string

// checkout is the osslbuild checkout a binary was compiled from, stamped
// at link time (-X ...pipeline.checkout=DIR) by the composite action,
// which runs the binary in another repository; "" means the working
// directory, where `go tool mage` runs.
var checkout string

// Version is osslbuild's own version for manifests and cache keys: the
// revision stamped at link time; else what Go stamped (a clean checkout's
// commit, or a module version); else the revision of the checkout by
// buildinfo.Checkout, `<commit>` or `<commit>+dirty.<digest>` (mage
// compiles the magefile from a file list, which Go never stamps); else
// "unknown".
func Version(ctx context.Context) string {
	if revision != "" {
		return revision
	}
	if v := buildinfo.Version(); v != "" {
		return v
	}
	if v, err := buildinfo.Checkout(ctx, cmp.Or(checkout, ".")); err == nil {
		return v
	}
	return "unknown"
}
