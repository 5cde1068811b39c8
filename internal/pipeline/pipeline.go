// Package pipeline is the one place that knows the order of a build's
// stages: source (fetch, verify, unpack, patch), toolchain, configure (with
// its gate), make, layout, validate, manifest, publish. Each stage lives in
// its own package; the magefile calls one function here per target.
package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/fetch"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/report"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/patches"
)

// Options are what a user can set on a build target.
type Options struct {
	Recipe    string // recipe name or path; "" = the embedded default
	Version   string // release; "" = the recipe's default
	Out       string // output directory; "" = dist
	Work      string // root for private build directories; "" = build
	Jobs      int    // make -j; 0 = CPU count
	Toolchain string // "macos", "cross" or "" for the host default
	Keep      bool   // keep the build directory after success
	Rebuild   bool   // build even when the artifact cache has a valid entry

	Fetch fetch.Options // cache, mirror, offline

	// Log receives progress and the short account of each stage.
	Log io.Writer
	// Env reads GITHUB_ACTIONS and GITHUB_STEP_SUMMARY; nil means the
	// process environment.
	Env report.Env
	// ProgressInterval spaces plain progress lines off a terminal.
	ProgressInterval time.Duration

	shared *build.Jobs // a job budget shared by concurrent slices
}

// FromEnv fills the options users set through the environment:
// OSSLBUILD_CACHE, OSSLBUILD_MIRROR, OSSLBUILD_OFFLINE, OSSLBUILD_TOOLCHAIN,
// OSSLBUILD_WORK (private build directories; default build/).
func (o *Options) FromEnv() {
	if o.Fetch.CacheDir == "" {
		o.Fetch.CacheDir = os.Getenv("OSSLBUILD_CACHE")
	}
	if o.Fetch.Mirror == "" {
		o.Fetch.Mirror = os.Getenv("OSSLBUILD_MIRROR")
	}
	if v := os.Getenv("OSSLBUILD_OFFLINE"); v == "1" || v == "true" {
		o.Fetch.Offline = true
	}
	if o.Toolchain == "" {
		o.Toolchain = os.Getenv("OSSLBUILD_TOOLCHAIN")
	}
	if o.Work == "" {
		o.Work = os.Getenv("OSSLBUILD_WORK")
	}
}

func (o *Options) defaults() {
	if o.Out == "" {
		o.Out = "dist"
	}
	if o.Work == "" {
		o.Work = "build"
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	if o.Log == nil {
		o.Log = os.Stdout
	}
	if o.ProgressInterval == 0 {
		o.ProgressInterval = 30 * time.Second
	}
}

func (o *Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, format+"\n", args...)
}

func loadRecipe(o Options) (*recipe.Recipe, error) { return recipe.Load(o.Recipe) }

// Fetch is the source:fetch target: download and verify a release.
func Fetch(ctx context.Context, o Options) (*source.Verified, error) {
	o.defaults()
	r, err := loadRecipe(o)
	if err != nil {
		return nil, err
	}
	rel, err := r.Release(o.Version)
	if err != nil {
		return nil, err
	}
	return fetchRelease(ctx, &o, rel)
}

func fetchRelease(ctx context.Context, o *Options, rel recipe.Release) (*source.Verified, error) {
	f, err := fetch.New(o.Fetch)
	if err != nil {
		return nil, err
	}
	v, err := source.Fetch(ctx, f, rel)
	if err != nil {
		return nil, err
	}
	o.logf("source: %s", v.Describe())
	return v, nil
}

// Unpack is the source:unpack target: a verified, patched tree at dest.
func Unpack(ctx context.Context, o Options, dest string) (*source.Tree, error) {
	v, err := Fetch(ctx, o)
	if err != nil {
		return nil, err
	}
	if dest == "" {
		dest = filepath.Join("build", "src", "openssl-"+v.Release.Version)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, err
	}
	t, err := source.Unpack(ctx, v, dest, patches.FS)
	if err != nil {
		return nil, err
	}
	o.Log = orStdout(o.Log)
	fmt.Fprintf(o.Log, "source: unpacked into %s (%d patches applied)\n", dest, len(t.Patches))
	return t, nil
}

func orStdout(w io.Writer) io.Writer {
	if w == nil {
		return os.Stdout
	}
	return w
}

// Version is osslbuild's own version for manifests: the module version when
// built as a dependency, else the VCS revision (with +dirty) when known.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return vcsFromGit()
	}
	return rev + dirty
}

// vcsFromGit reads HEAD from .git when the binary carries no VCS stamp
// (mage compiles with -buildvcs only in some setups).
func vcsFromGit() string {
	head, err := os.ReadFile(".git/HEAD")
	if err != nil {
		return "unknown"
	}
	ref := strings.TrimSpace(string(head))
	if r, ok := strings.CutPrefix(ref, "ref: "); ok {
		b, err := os.ReadFile(filepath.Join(".git", r))
		if err != nil {
			return "unknown"
		}
		ref = strings.TrimSpace(string(b))
	}
	return ref
}
