package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// BuildOptions for BuildTime.
type BuildOptions struct {
	Repo    string        // repository root, where `go tool mage` runs
	Version string        // release; "" = recipe default
	Rounds  int           // interleaved rounds per comparison
	Jobs    int           // make -j for every side
	Work    string        // scratch directory
	Fetch   fetch.Options // where sources come from (mirror, offline, cache)
	Only    string        // "", "arm64", "universal2" or "cache": run one comparison
	Log     io.Writer     // build output of every run (not the table); required
}

// BuildTime performs the bench:build comparisons and returns the Markdown
// report.
func BuildTime(ctx context.Context, o BuildOptions) (string, error) {
	o.Rounds = cmp.Or(max(o.Rounds, 0), 3)
	o.Jobs = cmp.Or(max(o.Jobs, 0), runtime.NumCPU())
	work, err := filepath.Abs(o.Work)
	if err != nil {
		return "", err
	}
	r, err := recipe.Load("")
	if err != nil {
		return "", err
	}
	plans := map[string]*recipe.Plan{}
	for _, t := range []string{"arm64", "x86_64"} {
		if plans[t], err = r.Plan(o.Version, t); err != nil {
			return "", err
		}
	}
	f, err := fetch.New(o.Fetch)
	if err != nil {
		return "", err
	}
	v, err := source.Fetch(ctx, f, plans["arm64"].Release)
	if err != nil {
		return "", err
	}
	tc, err := toolchain.New("")
	if err != nil {
		return "", err
	}
	env := os.Environ()
	if o.Fetch.Mirror != "" {
		env = append(env, "OSSLBUILD_MIRROR="+o.Fetch.Mirror)
	}
	if o.Fetch.Offline {
		env = append(env, "OSSLBUILD_OFFLINE=1")
	}
	env = append(env, "OSSLBUILD_CACHE="+filepath.Join(work, "cache"), "OSSLBUILD_WORK="+filepath.Join(work, "osslbuild-work"))
	// Compile the magefile and fill osslbuild's source cache once, outside
	// any measurement.
	if _, err := Command(ctx, o.Repo, env, o.Log, "go", "tool", "mage", "source:fetch", "-version="+v.Release.Version); err != nil {
		return "", err
	}
	mage := func(target string, extra ...string) func(context.Context, string) (Sample, error) {
		return func(ctx context.Context, dir string) (Sample, error) {
			args := append([]string{"go", "tool", "mage", target, "-version=" + v.Release.Version, "-jobs=" + strconv.Itoa(o.Jobs), "-out=" + filepath.Join(dir, "dist")}, extra...)
			return Command(ctx, o.Repo, env, o.Log, args...)
		}
	}
	// ref is a case running Reference for target t with the tarball and
	// the toolchain tc, at o.Jobs.
	ref := func(t string) func(context.Context, string) (Sample, error) {
		return func(ctx context.Context, dir string) (Sample, error) {
			tenv, err := tc.Prepare(ctx, filepath.Join(dir, "toolchain"), plans[t].Slice)
			if err != nil {
				return Sample{}, err
			}
			script := filepath.Join(dir, "reference.sh")
			if err := os.WriteFile(script, []byte(Reference(plans[t])), 0o755); err != nil {
				return Sample{}, err
			}
			return Command(ctx, dir, slices.Concat(env, tenv.Vars), o.Log, "/bin/sh", script, v.Tarball.Path, tenv.Bin, strconv.Itoa(o.Jobs))
		}
	}
	sequential := func(ctx context.Context, dir string) (Sample, error) {
		var total Sample
		var libs [2][]string
		for i, t := range []string{"arm64", "x86_64"} {
			d := filepath.Join(dir, t)
			os.MkdirAll(d, 0o755)
			s, err := ref(t)(ctx, d)
			if err != nil {
				return total, err
			}
			total.Wall += s.Wall
			total.User += s.User
			total.Sys += s.Sys
			for _, lib := range artifact.Libraries {
				libs[i] = append(libs[i], filepath.Join(d, "artifact", plans[t].Recipe.Prefix, "lib", lib))
			}
		}
		start := time.Now()
		for j, lib := range artifact.Libraries {
			if err := tc.Lipo(ctx, filepath.Join(dir, lib), libs[0][j], libs[1][j]); err != nil {
				return total, err
			}
		}
		total.Wall += time.Since(start)
		return total, nil
	}

	var results []Comparison
	run := func(name string, a, b func(context.Context, string) (Sample, error), an, bn, comment string) error {
		if o.Only != "" && o.Only != name {
			return nil
		}
		fmt.Fprintf(o.Log, "bench:build: %s: %d rounds of %s vs %s\n", name, o.Rounds, an, bn)
		res, err := Interleave(ctx, name, o.Rounds, work, a, b, an, bn)
		res.Comment = comment
		if err != nil {
			return err
		}
		results = append(results, res)
		return nil
	}
	if err := run("arm64", mage("build:arm64", "-rebuild"), ref("arm64"), "osslbuild build:arm64", "reference shell step",
		"osslbuild: fetch from cache, verify, unpack, Configure, gate, make build_libs + install_dev, validate every object, manifest, SBOM, tarball. Reference: tar, Configure, make, make install_sw."); err != nil {
		return "", err
	}
	if err := run("universal2", mage("build:universal2", "-rebuild"), sequential, "osslbuild build:universal2", "reference: two sequential slices + lipo",
		"osslbuild runs the slices side by side under one make jobserver of -jobs slots; the reference runs them one after the other, each at -jobs."); err != nil {
		return "", err
	}
	// Cache hits against the full builds that filled the cache, run by the
	// compiled magefile (what the action runs), so the figures are
	// osslbuild's and not Mage's compile check: one slice and universal2.
	if o.Only == "" || o.Only == "cache" {
		bin := filepath.Join(work, "osslbuild-mage")
		if _, err := Command(ctx, o.Repo, env, o.Log, "go", "tool", "mage", "-compile", bin); err != nil {
			return "", err
		}
		compiled := func(target, dir string) (Sample, error) {
			// A cache of its own per target (the last OSSLBUILD_CACHE
			// wins): universal2's full build must not find arm64 there.
			tenv := append(slices.Clone(env), "OSSLBUILD_CACHE="+filepath.Join(work, "cache-"+strings.TrimPrefix(target, "build:")))
			return Command(ctx, o.Repo, tenv, o.Log, bin, target, "-version="+v.Release.Version, "-jobs="+strconv.Itoa(o.Jobs), "-out="+filepath.Join(dir, "dist"))
		}
		for _, target := range []string{"build:arm64", "build:universal2"} {
			fmt.Fprintf(o.Log, "bench:build: cache: %s: one full build, then %d cache hits\n", target, o.Rounds)
			res := Comparison{Name: "cache " + strings.TrimPrefix(target, "build:"), A: target + " (cache hit)", B: target + " (the full build that filled the cache)", Cores: runtime.NumCPU(),
				Comment: "A hit copies the cached tree, verifies every file against the manifest, proves it again only if the rules, toolchain or manifest changed since it was proved (not here), checks the cached tarball against the verified tree and publishes both; universal2 serves both slices and the merge so."}
			full, err := compiled(target, filepath.Join(work, "cache-full-"+strings.TrimPrefix(target, "build:")))
			if err != nil {
				return "", fmt.Errorf("cache: full %s: %w", target, err)
			}
			res.SB = []Sample{full}
			for i := 0; i < o.Rounds; i++ {
				dir := filepath.Join(work, fmt.Sprintf("cache-hit-%d", i))
				os.MkdirAll(dir, 0o755)
				s, err := compiled(target, dir)
				if err != nil {
					return "", fmt.Errorf("cache hit %s round %d: %w", target, i+1, err)
				}
				res.SA = append(res.SA, s)
				os.RemoveAll(dir)
			}
			results = append(results, res)
		}
	}
	return buildReport(results, o), nil
}

func buildReport(results []Comparison, o BuildOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", Header)
	for _, r := range results {
		fmt.Fprintln(&b, r.Row())
	}
	b.WriteString("\nSamples (wall / user+sys), in run order:\n\n")
	for _, r := range results {
		fmt.Fprintf(&b, "- %s: %s | %s\n", r.Name, samples(r.A, r.SA), samples(r.B, r.SB))
		if r.Comment != "" {
			fmt.Fprintf(&b, "  %s\n", r.Comment)
		}
	}
	return b.String()
}

func samples(name string, s []Sample) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, fmt.Sprintf("%s/%s", round(x.Wall), round(x.User+x.Sys)))
	}
	return name + " " + strings.Join(parts, ", ")
}

// BuildReport is bench:build: it runs BuildTime with the user's settings
// and writes the Markdown report to w, a line per write; build output goes to
// <work>/bench-build.log.
func BuildReport(ctx context.Context, s pipeline.Settings, rounds int, only string, w io.Writer) error {
	s.Work = cmp.Or(s.Work, "build")
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Work, 0o755); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(s.Work, "bench-build.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	work, err := os.MkdirTemp(s.Work, "bench-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	rep, err := BuildTime(ctx, BuildOptions{
		Repo: repo, Version: s.Version, Rounds: rounds, Jobs: s.Jobs, Work: work, Fetch: s.Fetch, Only: only, Log: logf,
	})
	if err != nil {
		return fmt.Errorf("bench:build (log: %s): %w", logf.Name(), err)
	}
	// A line per write: the targets' writer escapes each as one record.
	for _, l := range strings.SplitAfter(rep, "\n") {
		fmt.Fprint(w, l)
	}
	return nil
}
