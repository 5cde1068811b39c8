package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
)

// The tests below run the whole pipeline, for real (Configure, make, the
// cross compiler, validation, publishing), over testdata/mini-openssl: a
// source tree laid out like OpenSSL's that builds in seconds. Each makes
// the build go wrong in one way and requires the pipeline to refuse it with
// nothing in the output directory.

// miniBuild builds target from the mini tree with edits, and returns the
// result, the error and the output directory.
func miniBuild(t *testing.T, target string, edits map[string][2]string) (*pipeline.Result, error, string, string) {
	t.Helper()
	minitest.Require(t)
	s := miniSettings(t, edits)
	var log strings.Builder
	res, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), target, nil)
	t.Logf("log:\n%s", log.String())
	return res, err, s.Out, log.String()
}

// editRecipe rewrites the recipe file of s with edit.
func editRecipe(t *testing.T, s pipeline.Settings, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(s.Recipe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Recipe, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// miniSettings are settings that build the mini tree (with edits) from a
// mirror of its own, into fresh directories.
func miniSettings(t *testing.T, edits map[string][2]string) pipeline.Settings {
	t.Helper()
	minitest.Require(t)
	mirror, sum, size := minitest.Tarball(t, minitest.Version, edits)
	root := t.TempDir()
	s := pipeline.Unsigned(pipeline.Settings{Recipe: minitest.Recipe(t, minitest.Version, nil, sum, size), Out: filepath.Join(root, "dist"), Work: filepath.Join(root, "work"), Jobs: 2, Rebuild: true})
	s.Fetch.Mirror, s.Fetch.Offline, s.Fetch.CacheDir = mirror, true, filepath.Join(root, "cache")
	return s
}

// emptyOrMissing fails the test when dir holds anything.
func emptyOrMissing(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s holds %s after a refused build", dir, e.Name())
	}
}

// TestMiniBuildsAndPublishes: the unchanged mini tree goes through every
// stage and is published, its compiler line read back at -O3.
func TestMiniBuildsAndPublishes(t *testing.T) {
	t.Parallel()
	res, err, out, _ := miniBuild(t, "arm64", nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := compilerLines(t, filepath.Join(res.Published.Dir, "lib", "libcrypto.a"))
	want := "compiler: cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0"
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("compiler lines %q, want [%q]", lines, want)
	}
	if _, err := os.Stat(filepath.Join(out, "openssl-macos-arm64.tar.gz")); err != nil {
		t.Error(err)
	}
}

// TestMiniDefineBuilds: a recipe's define goes where OpenSSL's Configure
// puts it (CPPFLAGS, not CFLAGS), reaches the compile (mem.c does not
// compile without it), passes the gate and is on the compiler line
// libcrypto embeds, which validation holds to the recipe's flags.
func TestMiniDefineBuilds(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	s := miniSettings(t, map[string][2]string{
		"crypto/mem.c": {"#include <stddef.h>\n", "#include <stddef.h>\nint mini_foo = FOO;\n"},
	})
	editRecipe(t, s, func(r string) string {
		return strings.Replace(r, `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-DFOO=1"]`, 1)
	})
	var log strings.Builder
	res, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), "arm64", nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "gate passed") {
		t.Errorf("no gate in the log:\n%s", log.String())
	}
	lines := compilerLines(t, filepath.Join(res.Published.Dir, "lib", "libcrypto.a"))
	want := "compiler: cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0 -DFOO=1"
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("compiler lines %q, want [%q]", lines, want)
	}
}

// TestMiniDefineTheSourcesTest: a define the release's sources test to
// choose their code is refused once they are unpacked, before Configure
// runs, at the recipe's line and the release's; nothing is published.
// Before the sources were read, it built.
func TestMiniDefineTheSourcesTest(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	s := miniSettings(t, map[string][2]string{
		"crypto/mem.c": {"#include <stddef.h>\n", "#include <stddef.h>\n#ifndef MINI_PEDANTIC\nint mini_fast;\n#endif\n"},
	})
	editRecipe(t, s, func(r string) string {
		return strings.Replace(r, `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-DMINI_PEDANTIC"]`, 1)
	})
	var log strings.Builder
	_, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), "arm64", nil)
	want := fmt.Sprintf(`unpack: recipe %s:10: targets.arm64.flags[1]: flag "-DMINI_PEDANTIC": OpenSSL %s chooses its code by MINI_PEDANTIC (crypto/mem.c:2: #ifndef MINI_PEDANTIC)`, s.Recipe, minitest.Version)
	if !errors.Is(err, recipe.ErrFlag) || !strings.Contains(err.Error(), want) {
		t.Fatalf("want the define refused saying\n%s\ngot %v", want, err)
	}
	if strings.Contains(log.String(), "Configure") {
		t.Errorf("Configure ran:\n%s", log.String())
	}
	emptyOrMissing(t, s.Out)
}

// TestMiniGateRefusesBeforeMake: a Configure whose default flags are not
// -O3 is refused by the gate, before make compiles anything.
func TestMiniGateRefusesBeforeMake(t *testing.T) {
	t.Parallel()
	_, err, out, log := miniBuild(t, "arm64", map[string][2]string{
		"Configure": {`my $MINI_DEFAULT_CFLAGS = "-O3 -Wall";`, `my $MINI_DEFAULT_CFLAGS = "-O1 -Wall";`},
	})
	if !errors.Is(err, configure.ErrGate) || !strings.Contains(err.Error(), "effective optimisation is -O1") {
		t.Fatalf("want the gate's refusal (effective -O1), got %v", err)
	}
	if strings.Contains(log, "compiling") || strings.Contains(log, "validated") {
		t.Errorf("the build went on past the gate:\n%s", log)
	}
	emptyOrMissing(t, out)
}

// TestMiniValidationRefusesWhatTheLineHides: the Makefile's compile rules
// add a flag the build information does not record, so the compiler line
// and the gate say all is well; only validation, which reads the objects,
// can catch the recipe's deployment target not honoured: x86_64 objects of
// the right CPU type whose LC_VERSION_MIN_MACOSX says 10.13 where the
// recipe says 10.12. (In cross mode the wrapper's -target decides the
// deployment target, so the stray flag is a -target; on a Mac it would be a
// second -mmacosx-version-min.)
func TestMiniValidationRefusesWhatTheLineHides(t *testing.T) {
	t.Parallel()
	_, err, out, _ := miniBuild(t, "x86_64", map[string][2]string{
		"Makefile.in": {"MINI_EXTRA=\n", "MINI_EXTRA=-target x86_64-apple-macos10.13\n"},
	})
	var ve *validate.Error
	if !errors.As(err, &ve) {
		t.Fatalf("want a validation refusal, got %v", err)
	}
	found := false
	for _, v := range ve.Violations {
		if v.Rule == validate.RuleDeployment && v.Arch == "x86_64" && strings.Contains(v.Found, "10.13") {
			found = true
		}
		if v.Rule == validate.RuleCPU {
			t.Errorf("CPU rule fired on right-arch objects: %s", v)
		}
	}
	if !found {
		t.Errorf("no deployment-target violation naming 10.13 for x86_64: %v", err)
	}
	emptyOrMissing(t, out)
}

// TestMiniBuildEnvironmentIsConstructed: variables in the caller's
// environment reach neither Configure (CFLAGS would replace -O3) nor make
// (which imports every environment variable as a make variable).
func TestMiniBuildEnvironmentIsConstructed(t *testing.T) {
	t.Setenv("CFLAGS", "-O0 -g")
	t.Setenv("MINI_ENV_PROBE", "-DLEAKED_FROM_CALLER")
	res, err, _, _ := miniBuild(t, "arm64", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range compilerLines(t, filepath.Join(res.Published.Dir, "lib", "libcrypto.a")) {
		if strings.Contains(l, "LEAKED") || strings.Contains(l, "-O0") {
			t.Errorf("the caller's environment reached the build: %s", l)
		}
	}
}

// TestMiniValidationRefusesCodeTheLineBelies: the compile rules add -O0
// after the recorded flags, so the compiler line says -O3 (and the gate
// passes) while the code is built at -O0; validation reads the machine
// code and refuses the library, naming both.
func TestMiniValidationRefusesCodeTheLineBelies(t *testing.T) {
	t.Parallel()
	var funcs strings.Builder
	for i := range 60 {
		fmt.Fprintf(&funcs, "int mini_f%d(int a, int b, const int *p) { int s = 0; for (int i = 0; i < a; i++) s += p[i] * b + %d; return s ^ a; }\n", i, i)
	}
	for _, target := range []string{"arm64", "x86_64"} {
		t.Run(target, func(t *testing.T) {
			_, err, out, _ := miniBuild(t, target, map[string][2]string{
				"Makefile.in":  {"MINI_EXTRA=\n", "MINI_EXTRA=-O0\n"},
				"crypto/mem.c": {"#include <stddef.h>\n", "#include <stddef.h>\n" + funcs.String()},
			})
			var ve *validate.Error
			if !errors.As(err, &ve) {
				t.Fatalf("want a validation refusal, got %v", err)
			}
			found := false
			for _, v := range ve.Violations {
				if v.Rule == validate.RuleOptimisation && v.Arch == target && v.Found == "code -O0-like" &&
					strings.Contains(v.Detail, "compiler line says -O3 but the machine code looks -O0 (score ") {
					found = true
				}
			}
			if !found {
				t.Errorf("no violation naming the -O3 line and the -O0 code: %v", err)
			}
			emptyOrMissing(t, out)
		})
	}
}
