package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/repro"
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

// VerifyReproducible builds target ("arm64", "x86_64" or "universal2") twice
// in two different directories, the second with a hostile environment, a
// different TZ, locale and umask, and requires byte-identical tarballs and no
// build directory in any output. On a difference it names the file, archive
// member and section.
func VerifyReproducible(ctx context.Context, o Options, target string) error {
	o.defaults()
	o.Rebuild = true // two real builds, never the artifact cache
	work, err := filepath.Abs(o.Work)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	root, err := os.MkdirTemp(work, "reproducible-")
	if err != nil {
		return err
	}
	if !o.Keep {
		defer os.RemoveAll(root)
	}
	a := filepath.Join(root, "a")
	b := filepath.Join(root, "b", "a", "much", "deeper", "build", "path")
	names, err := artifactNames(o, target)
	if err != nil {
		return err
	}
	o.logf("verify:reproducible: first build of %s in %s", target, a)
	if err := buildInto(ctx, o, target, a); err != nil {
		return fmt.Errorf("first build: %w", err)
	}
	o.logf("verify:reproducible: second build of %s in %s, with a hostile environment, TZ=%s, umask 077", target, b, Hostile["TZ"])
	restore := hostileEnv()
	err = buildInto(ctx, o, target, b)
	restore()
	if err != nil {
		return fmt.Errorf("second build: %w", err)
	}
	problems, err := CompareDists(o, names, filepath.Join(a, "dist"), filepath.Join(b, "dist"), []string{a, b, root})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("verify:reproducible %s: not reproducible:\n%s", target, strings.Join(problems, "\n"))
	}
	o.logf("verify:reproducible: %s is reproducible", target)
	return nil
}

func artifactNames(o Options, target string) ([]string, error) {
	if target == "universal2" {
		return []string{"openssl-macos-arm64", "openssl-macos-x86-64", universal.Name}, nil
	}
	r, err := loadRecipe(o)
	if err != nil {
		return nil, err
	}
	t, err := r.Target(target)
	if err != nil {
		return nil, err
	}
	return []string{t.Artifact}, nil
}

func buildInto(ctx context.Context, o Options, target, dir string) error {
	o.Out = filepath.Join(dir, "dist")
	o.Work = filepath.Join(dir, "work")
	var err error
	if target == "universal2" {
		_, err = Universal2(ctx, o)
	} else {
		_, err = Slice(ctx, o, target)
	}
	return err
}

// hostileEnv sets Hostile and umask 077 for this process and returns a
// function restoring both.
func hostileEnv() func() {
	old := map[string]*string{}
	for k, v := range Hostile {
		if cur, ok := os.LookupEnv(k); ok {
			old[k] = &cur
		} else {
			old[k] = nil
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

// CompareDists compares the named artifacts in two output directories: the
// tarballs must be identical and no output may contain any of leaks (build
// directories). It returns the problems found, each explained down to the
// archive member.
func CompareDists(o Options, names []string, distA, distB string, leaks []string) ([]string, error) {
	o.defaults()
	var problems []string
	for _, name := range names {
		ta, tb := filepath.Join(distA, name+".tar.gz"), filepath.Join(distB, name+".tar.gz")
		da, err := artifact.FileSHA256(ta)
		if err != nil {
			return nil, err
		}
		db, err := artifact.FileSHA256(tb)
		if err != nil {
			return nil, err
		}
		if da == db {
			o.logf("verify:reproducible: %s.tar.gz identical: sha256 %s", name, da)
			continue
		}
		diffs, err := repro.CompareTrees(filepath.Join(distA, name), filepath.Join(distB, name))
		if err != nil {
			return nil, err
		}
		detail := repro.Summary(diffs, 20)
		if len(diffs) == 0 {
			detail = "\n  the trees are identical: the tarball encoding differs"
		}
		problems = append(problems, fmt.Sprintf("%s.tar.gz differs: %s vs %s:%s", name, da, db, detail))
	}
	for _, d := range []string{distA, distB} {
		hits, err := repro.FindStrings(d, leaks)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			problems = append(problems, "build directory leaked: "+h)
		}
	}
	return problems, nil
}

// HostileEnv applies Hostile and umask 077 to this process (for tests that
// build under it) and returns the function restoring them.
func HostileEnv() func() { return hostileEnv() }
