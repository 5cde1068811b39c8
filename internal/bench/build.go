package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/inspect"
	"github.com/osslbuild/osslbuild/internal/patch"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/patches"
)

// Target is the recipe target both builds are made for: the native Linux
// one, because the code has to run here to be measured.
const Target = "linux-x86_64"

// Version is the release measured when Options.Pipeline.Version is empty:
// the one whose C/assembly paths (Paths) were checked against the sources.
const Version = "4.0.2"

// PycaCFLAGS is what the pyca-way build puts in Configure's environment.
//
// pyca's macOS step moved the target's own flags (-mmacosx-version-min=...)
// into CFLAGS in the environment, and Configure took that as a replacement
// for the target's "-Wall -O3". The linux-x86_64 recipe target has no flags
// to move, so something harmless has to stand in to trigger the same
// replacement. -Wa,--noexecstack is already in linux-x86_64's CNF_CFLAGS
// (4.0.2's Makefile: "CNF_CFLAGS=-pthread -m64 -Wa,--noexecstack"), so
// repeating it changes no object: the only difference from osslbuild's
// build is that "-Wall -O3" is gone, i.e. the library is compiled at -O0.
const PycaCFLAGS = "-Wa,--noexecstack"

// Osslbuild builds (or takes from the artifact cache) the linux-x86_64
// artifact with pipeline.Slice, gate and validation included, and returns
// the published artifact directory.
func Osslbuild(ctx context.Context, o Options) (string, error) {
	po, err := o.pipelineOptions()
	if err != nil {
		return "", err
	}
	res, err := pipeline.Slice(ctx, po, Target)
	if err != nil {
		return "", fmt.Errorf("bench: osslbuild build of %s %s: %w", Target, po.Version, err)
	}
	return res.Published.Dir, nil
}

// PycaWay builds the same sources (verified, patched), with the same
// toolchain, Configure argv and options as Osslbuild, but with
// CFLAGS=PycaCFLAGS in Configure's environment as pyca's step had it, and
// without osslbuild's gate, so the -O0 library really gets built. The
// result (include/ and lib/ of a staged install_dev) is kept in the cache
// directory, keyed by its inputs, so a second run does not rebuild. It
// returns the artifact directory, after checking that libcrypto's compiler
// line has no -O flag: a pyca-way build that came out optimised would make
// the comparison meaningless.
func PycaWay(ctx context.Context, o Options) (string, error) {
	po, err := o.pipelineOptions()
	if err != nil {
		return "", err
	}
	r, err := recipe.Load(po.Recipe)
	if err != nil {
		return "", fmt.Errorf("bench: pyca-way build: %w", err)
	}
	p, err := r.Plan(po.Version, Target)
	if err != nil {
		return "", fmt.Errorf("bench: pyca-way build: %w", err)
	}
	tc, err := toolchain.For(po.Toolchain, p.Target)
	if err != nil {
		return "", fmt.Errorf("bench: pyca-way build: %w", err)
	}
	id, err := tc.Identity(ctx)
	if err != nil {
		return "", fmt.Errorf("bench: pyca-way build: toolchain identity: %w", err)
	}
	v, err := pipeline.Fetch(ctx, po)
	if err != nil {
		return "", fmt.Errorf("bench: pyca-way build: %w", err)
	}
	key, err := pycaKey(p, v, id)
	if err != nil {
		return "", err
	}
	root, err := cacheRoot(po)
	if err != nil {
		return "", err
	}
	entry := filepath.Join(root, "bench", "pyca-way", key)
	dir := filepath.Join(entry, p.Target.Artifact+"-pyca-way")
	if _, err := os.Stat(filepath.Join(entry, ".done")); err == nil {
		if err := checkPycaLine(dir); err != nil {
			return "", err
		}
		po.Log.Write([]byte(fmt.Sprintf("bench: pyca-way build of %s %s from cache: %s\n", Target, p.Release.Version, dir)))
		return dir, nil
	}
	if err := buildPyca(ctx, po, p, v, tc, entry); err != nil {
		return "", err
	}
	return dir, nil
}

// buildPyca runs Configure (CFLAGS in its environment), make build_libs and
// make install_dev, and moves include/ and lib/ into entry.
func buildPyca(ctx context.Context, po pipeline.Options, p *recipe.Plan, v *source.Verified, tc toolchain.Toolchain, entry string) (err error) {
	name := p.Target.Artifact + "-pyca-way"
	if err := os.MkdirAll(po.Work, 0o755); err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	work, err := os.MkdirTemp(po.Work, name+"-")
	if err != nil {
		return fmt.Errorf("bench: %s: build directory: %w", name, err)
	}
	work, _ = filepath.Abs(work)
	defer os.RemoveAll(work) // ~600 MB of objects; the log is kept beside it
	logPath := work + ".log"
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n(full log: %s)", err, logPath)
		}
	}()
	tree, err := source.Unpack(ctx, v, filepath.Join(work, "src"), patches.FS)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	tenv, err := tc.Prepare(ctx, filepath.Join(work, "toolchain"), p.Target)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	env, err := configure.Env(tenv, work, tree.SourceDateEpoch)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	// The bug, reproduced on purpose (see PycaCFLAGS).
	env = append(env, "CFLAGS="+PycaCFLAGS)
	lf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("bench: %s: log: %w", name, err)
	}
	fmt.Fprintf(po.Log, "%s: CFLAGS=%s %s\n", name, PycaCFLAGS, strings.Join(configure.Args(p), " "))
	fmt.Fprintf(lf, "+ CFLAGS=%s (in the environment)\n", PycaCFLAGS)
	err = configure.Run(ctx, tree.Dir, p, env, lf)
	lf.Close()
	if err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	// No configure.Gate: it would (rightly) refuse this Makefile. Only the
	// object list is read from it, for progress.
	mk, err := configure.ReadMakefile(tree.Dir)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	fmt.Fprintf(po.Log, "%s: Makefile CFLAGS=%s (OpenSSL's -Wall -O3 replaced)\n", name, mk.Vars["CFLAGS"])
	stage := filepath.Join(work, "stage")
	err = build.Run(ctx, build.Options{
		Src: tree.Dir, Env: env, Jobs: po.Jobs, Objects: mk.Objects, Log: logPath, Stage: stage,
		Progress: build.NewProgress(po.Log, name, po.ProgressInterval),
	})
	if err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	installed := filepath.Join(stage, p.Recipe.Prefix)
	libdir, err := findLibdir(installed)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	tmp := filepath.Join(work, "artifact", name)
	for from, to := range map[string]string{filepath.Join(installed, "include"): "include", libdir: "lib"} {
		if err := os.CopyFS(filepath.Join(tmp, to), os.DirFS(from)); err != nil {
			return fmt.Errorf("bench: %s: copy %s: %w", name, to, err)
		}
	}
	if err := checkPycaLine(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(entry, 0o755); err != nil {
		return fmt.Errorf("bench: %s: cache: %w", name, err)
	}
	final := filepath.Join(entry, name)
	os.RemoveAll(final) // a half-copied entry from an interrupted run
	if err := os.CopyFS(final, os.DirFS(tmp)); err != nil {
		return fmt.Errorf("bench: %s: cache: %w", name, err)
	}
	// .done last: an entry without it is rebuilt, never served.
	if err := os.WriteFile(filepath.Join(entry, ".done"), nil, 0o644); err != nil {
		return fmt.Errorf("bench: %s: cache: %w", name, err)
	}
	fmt.Fprintf(po.Log, "%s: built %s\n", name, final)
	return nil
}

// findLibdir returns the installed library directory: lib64 on
// linux-x86_64 (the target's multilib) unless --libdir says otherwise.
func findLibdir(installed string) (string, error) {
	for _, d := range []string{"lib", "lib64"} {
		p := filepath.Join(installed, d)
		if _, err := os.Stat(filepath.Join(p, "libcrypto.a")); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no lib/libcrypto.a or lib64/libcrypto.a under %s", installed)
}

// checkPycaLine insists that the pyca-way libcrypto was built without any
// -O flag, as pyca's was.
func checkPycaLine(dir string) error {
	cl, err := LibcryptoCompilerLine(dir)
	if err != nil {
		return err
	}
	if cl.OptFlag != "" {
		return fmt.Errorf("bench: pyca-way libcrypto in %s has %s in its compiler line (%q): the environment CFLAGS did not replace OpenSSL's default, so it does not reproduce pyca's build", dir, cl.OptFlag, cl.Raw)
	}
	return nil
}

// LibcryptoCompilerLine returns the parsed "compiler:" line embedded in
// <artifact>/lib/libcrypto.a.
func LibcryptoCompilerLine(artifact string) (inspect.CompilerLine, error) {
	lib := filepath.Join(artifact, "lib", "libcrypto.a")
	f, err := os.Open(lib)
	if err != nil {
		return inspect.CompilerLine{}, fmt.Errorf("bench: compiler line: %w", err)
	}
	defer f.Close()
	infos, err := inspect.ScanBuildInfo(f)
	if err != nil {
		return inspect.CompilerLine{}, fmt.Errorf("bench: compiler line of %s: %w", lib, err)
	}
	for _, bi := range infos {
		if bi.Kind == inspect.InfoCompiler {
			return inspect.ParseCompilerLine(bi.Text), nil
		}
	}
	return inspect.CompilerLine{}, fmt.Errorf("bench: %s has no \"compiler:\" build-info string", lib)
}

// pycaKey digests everything that decides the pyca-way build's bytes.
func pycaKey(p *recipe.Plan, v *source.Verified, id toolchain.Identity) (string, error) {
	ps, err := patch.Select(patches.FS, p.Release.Version)
	if err != nil {
		return "", fmt.Errorf("bench: pyca-way cache key: %w", err)
	}
	var pd []string
	for _, x := range ps {
		pd = append(pd, x.Name+"@"+x.SHA256)
	}
	in := struct {
		Format    int
		Argv      []string
		CFLAGS    string
		Source    string
		Patches   []string
		Toolchain toolchain.Identity
	}{1, configure.Args(p), PycaCFLAGS, v.Tarball.SHA256, pd, id}
	b, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("bench: pyca-way cache key: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// cacheRoot is the pipeline's cache directory (its artifact cache lives
// there too): Fetch.CacheDir, else the user cache directory.
func cacheRoot(po pipeline.Options) (string, error) {
	if po.Fetch.CacheDir != "" {
		return filepath.Abs(po.Fetch.CacheDir)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("bench: cache directory: %w", err)
	}
	return filepath.Join(d, "osslbuild"), nil
}
