package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestMiniMakeCache: with a make cache, a build whose plan is unchanged
// runs Configure and make once; later builds (another artifact cache,
// another recipe file with the same plan) restore the staging directory
// and run every stage after make with the current code, giving the same
// bytes. A changed Configure argument re-keys that slice only; -rebuild
// bypasses the cache, which a rebuild given it explicitly (verify:rebuild's
// test) uses; an unreadable entry is built again.
func TestMiniMakeCache(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	s := miniSettings(t, nil)
	s.Rebuild = false
	s.MakeCache = filepath.Join(t.TempDir(), "make")
	var log strings.Builder
	build := func(s pipeline.Settings) string {
		t.Helper()
		log.Reset()
		s.Fetch.CacheDir = t.TempDir() // an empty artifact cache: only the make cache can help
		s.Out = filepath.Join(t.TempDir(), "dist")
		if _, err := pipeline.Universal2(context.Background(), s, minitest.Runtime(t, &log)); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		got := miniTarballs(t, s.Out)
		return got["openssl-macos-arm64"] + " " + got["openssl-macos-x86-64"] + " " + got["openssl-macos-universal2"]
	}
	restored := func(name string) bool {
		return strings.Contains(log.String(), name+": configure, gate and make: this plan's staging directory restored from the make cache")
	}
	compiled := func(name string) bool { return strings.Contains(log.String(), name+": compiling") }

	first := build(s)
	if restored("openssl-macos-arm64") || !compiled("openssl-macos-arm64") || !compiled("openssl-macos-x86-64") {
		t.Fatalf("first build did not compile both slices:\n%s", log.String())
	}
	t.Run("same plan, another recipe file", func(t *testing.T) {
		o := s
		o.Recipe = testfixture.CopyFile(t, s.Recipe, filepath.Join(t.TempDir(), "another.toml"))
		build(o)
		for _, n := range []string{"openssl-macos-arm64", "openssl-macos-x86-64"} {
			if !restored(n) || compiled(n) {
				t.Errorf("%s not restored from the make cache:\n%s", n, log.String())
			}
		}
		if !strings.Contains(log.String(), "openssl-macos-arm64: validated libcrypto.a arm64") || !strings.Contains(log.String(), "openssl-macos-arm64: linked ") {
			t.Errorf("the stages after make did not run:\n%s", log.String())
		}
	})
	t.Run("same plan, same bytes", func(t *testing.T) {
		if again := build(s); again != first || !restored("openssl-macos-x86-64") {
			t.Errorf("restored build gives %s, the build %s:\n%s", again, first, log.String())
		}
	})
	t.Run("a changed Configure argument re-keys", func(t *testing.T) {
		o := s
		o.Recipe = testfixture.CopyFile(t, s.Recipe, filepath.Join(t.TempDir(), "other.toml"))
		editRecipe(t, o, func(r string) string {
			return strings.Replace(r, `openssldir = "/usr/local/etc/openssl@3"`, `openssldir = "/usr/local/etc/other"`, 1)
		})
		build(o)
		if !restored("openssl-macos-arm64") || restored("openssl-macos-x86-64") || !compiled("openssl-macos-x86-64") {
			t.Errorf("want arm64 restored and x86_64 (new --openssldir) compiled:\n%s", log.String())
		}
	})
	t.Run("-rebuild bypasses it", func(t *testing.T) {
		o := s
		o.Rebuild = true
		build(o)
		if restored("openssl-macos-arm64") || !compiled("openssl-macos-arm64") {
			t.Errorf("-rebuild used the make cache:\n%s", log.String())
		}
		// Nor does FromEnv take OSSLBUILD_MAKE_CACHE for a rebuild.
		o.MakeCache = ""
		if err := o.FromEnv(func(k string) string {
			if k == "OSSLBUILD_MAKE_CACHE" {
				return s.MakeCache
			}
			return ""
		}); err != nil || o.MakeCache != "" {
			t.Errorf("FromEnv for a rebuild: MakeCache %q, %v", o.MakeCache, err)
		}
	})
	t.Run("a rebuild given a make cache uses it", func(t *testing.T) {
		// verify:rebuild's own test rebuilds from the make output of
		// another build of the same plan (rebuild.Options.TestMakeCache).
		o := s
		o.Rebuild, o.MakeCacheOnRebuild = true, true
		if again := build(o); again != first || !restored("openssl-macos-arm64") {
			t.Errorf("a rebuild with MakeCache set gives %s (the build %s), restored nothing:\n%s", again, first, log.String())
		}
	})
	t.Run("an unreadable entry is built again", func(t *testing.T) {
		recs, _ := filepath.Glob(filepath.Join(s.MakeCache, "*", "made.json"))
		if len(recs) != 3 {
			t.Fatalf("make cache records %v, want 3 (arm64, x86_64, x86_64 with the other openssldir)", recs)
		}
		for _, r := range recs {
			os.WriteFile(r, []byte("{not json"), 0o644)
		}
		if again := build(s); again != first || restored("openssl-macos-arm64") || !strings.Contains(log.String(), "is unreadable; building") {
			t.Errorf("corrupt entries: %s (want %s), log:\n%s", again, first, log.String())
		}
	})
}

// TestToolVersionsKey: another make or perl on the build's PATH is another
// make-cache key; the real ones are read, and a missing one is an error
// naming it.
func TestToolVersionsKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	real, err := pipeline.ToolVersions(ctx, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(real, "make GNU Make") || !strings.Contains(real, "perl v5.") {
		t.Fatalf("tool versions %q: want make's and perl's own words", real)
	}
	old := t.TempDir()
	for name, body := range map[string]string{
		"make": "#!/bin/sh\necho 'GNU Make 3.81'\n",
		"perl": "#!/bin/sh\nprintf v5.34.1\n",
	} {
		if err := os.WriteFile(filepath.Join(old, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	other, err := pipeline.ToolVersions(ctx, []string{"PATH=" + old})
	if err != nil {
		t.Fatal(err)
	}
	if other == real || other != "make GNU Make 3.81; perl v5.34.1" {
		t.Fatalf("tool versions with another make and perl: %q (the machine's: %q)", other, real)
	}
	_, err = pipeline.ToolVersions(ctx, []string{"PATH=" + t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "make --version") {
		t.Fatalf("no make on PATH: err %v, want one naming make --version", err)
	}
}
