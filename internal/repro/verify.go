// Package repro proves builds reproducible (verify:reproducible: two builds
// in different directories, the second in a hostile environment, whose
// tarballs must be byte-identical and whose outputs must name no build
// directory). Where two outputs differ, package diff's explainer says
// where: tarball entry, header field, file, archive member and section.
package repro

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// Hostile is the environment the second build of verify:reproducible runs
// in: everything that could leak into OpenSSL's build if the environment
// were inherited, plus a different time zone and locale.
var Hostile = map[string]string{
	"CFLAGS":                   "-O0 -g",
	"CPPFLAGS":                 "-DHOSTILE",
	"CXXFLAGS":                 "-O0",
	"LDFLAGS":                  "-Wl,-hostile",
	"LDLIBS":                   "-lhostile",
	"CC":                       "gcc",
	"AR":                       "false",
	"RANLIB":                   "false",
	"MACOSX_DEPLOYMENT_TARGET": "10.9",
	"SDKROOT":                  "/nonexistent",
	"MAKEFLAGS":                "-k",
	"SOURCE_DATE_EPOCH":        "1",
	"ZERO_AR_DATE":             "0",
	"TZ":                       "Pacific/Chatham",
	"LANG":                     "de_DE.UTF-8",
	"LC_ALL":                   "de_DE.UTF-8",
}

// Verify builds target (a recipe target, or "universal2") twice in two
// different directories, the second with a hostile environment, a
// different TZ, locale and umask, and requires byte-identical tarballs and
// no build directory in any output. On a difference it names the tarball
// entry, header field, file, archive member and section.
func Verify(ctx context.Context, s pipeline.Settings, rt pipeline.Runtime, target string) error {
	s.Rebuild = true // two real builds, never the artifact cache
	if rt.Log == nil {
		rt.Log = os.Stdout
	}
	work, err := filepath.Abs(cmp.Or(s.Work, "build"))
	if err != nil {
		return err
	}
	root, err := pipeline.Scratch(work, "reproducible-")
	if err != nil {
		return err
	}
	if !s.Keep {
		defer os.RemoveAll(root)
	}
	names, err := ArtifactNames(s.Recipe, target)
	if err != nil {
		return err
	}
	a := filepath.Join(root, "a")
	b := filepath.Join(root, "b", "a", "much", "deeper", "build", "path")
	logf := func(format string, args ...any) { fmt.Fprintf(rt.Log, format+"\n", args...) }
	logf("verify:reproducible: first build of %s in %s", target, a)
	if err := buildInto(ctx, s, rt, target, a); err != nil {
		return fmt.Errorf("first build: %w", err)
	}
	logf("verify:reproducible: second build of %s in %s, with a hostile environment, TZ=%s, umask 077", target, b, Hostile["TZ"])
	restore := HostileEnv()
	rt.Environ = nil // say once, again, what is ignored
	err = buildInto(ctx, s, rt, target, b)
	restore()
	if err != nil {
		return fmt.Errorf("second build: %w", err)
	}
	log := &diff.Log{W: rt.Log}
	if err := CompareDists(ctx, names, filepath.Join(a, "dist"), filepath.Join(b, "dist"), []string{a, b, root}, log); err != nil {
		return err
	}
	passed, failed := log.Count()
	if failed > 0 {
		logf("verify:reproducible: %s: FAIL: %d of %d lines FAIL", target, failed, failed+passed)
		return fmt.Errorf("verify:reproducible %s: not reproducible: %d FAIL lines", target, failed)
	}
	logf("verify:reproducible: %s: PASS: all %d entries and tarballs identical: %s is reproducible", target, passed, target)
	return nil
}

// ArtifactNames are the artifacts a build of target publishes, as the
// recipe names them: the target's, or for universal2 both slices' and the
// merged one.
func ArtifactNames(recipeName, target string) ([]string, error) {
	r, err := recipe.Load(recipeName)
	if err != nil {
		return nil, err
	}
	targets := []string{target}
	if target == "universal2" {
		if targets, err = r.Universal2(); err != nil {
			return nil, err
		}
	}
	var names []string
	for _, t := range targets {
		tt, err := r.Target(t)
		if err != nil {
			return nil, err
		}
		names = append(names, tt.Artifact)
	}
	if target == "universal2" {
		names = append(names, universal.Name)
	}
	return names, nil
}

func buildInto(ctx context.Context, s pipeline.Settings, rt pipeline.Runtime, target, dir string) error {
	s.Out = filepath.Join(dir, "dist")
	s.Work = filepath.Join(dir, "work")
	var err error
	if target == "universal2" {
		_, err = pipeline.Universal2(ctx, s, rt)
	} else {
		_, err = pipeline.Slice(ctx, s, rt, target, nil)
	}
	return err
}

// HostileEnv sets Hostile and umask 077 for this process and returns a
// function restoring both.
func HostileEnv() func() {
	old := map[string]*string{}
	for k, v := range Hostile {
		old[k] = nil
		if cur, ok := os.LookupEnv(k); ok {
			old[k] = &cur
		}
		os.Setenv(k, v)
	}
	mask := syscall.Umask(0o077)
	return func() {
		syscall.Umask(mask)
		for k, v := range old {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
	}
}

// CompareDists compares the named artifacts in two output directories,
// adding to log one line per tarball entry and per tarball: the tarballs
// must be identical and no output may contain any of leaks (build
// directories). Each difference is explained down to the tarball entry,
// header field and archive member.
func CompareDists(ctx context.Context, names []string, distA, distB string, leaks []string, log *diff.Log) error {
	for _, name := range names {
		ta, tb := filepath.Join(distA, name+".tar.gz"), filepath.Join(distB, name+".tar.gz")
		da, err := ctxio.SHA256(ctx, ta, true)
		if err != nil {
			return err
		}
		db, err := ctxio.SHA256(ctx, tb, true)
		if err != nil {
			return err
		}
		files, diffs, err := diff.CompareTarballs(ctx, ta, tb)
		if err != nil {
			return err
		}
		log.Files(files, diffs)
		tarball := diff.Line{Status: "FAIL", File: name + ".tar.gz", Detail: da + " vs " + db}
		switch {
		case da == db:
			tarball = diff.Line{Status: "PASS", File: name + ".tar.gz"}
		case len(diffs) == 0:
			tarball.Detail += ": every entry and header identical: only the gzip encoding differs"
		}
		log.Add(tarball)
	}
	for i, d := range []string{distA, distB} {
		hits, err := diff.FindStrings(ctx, d, leaks)
		if err != nil {
			return err
		}
		for _, h := range hits {
			h.Detail = "build directory leaked into the " + [...]string{"first", "second"}[i] + " build: " + h.Detail
			log.Add(h)
		}
	}
	return nil
}
