package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/check"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestMiniConsumerRecipe: a consumer's own recipe, a file in a temporary
// directory, chooses the deployment target, openssldir and artifact name of
// a build over the mini tree; the build follows it (the compiler line, the
// objects' minos, the published name) and the manifest records where the
// recipe came from (a path outside the working directory: its name only)
// and its digest.
func TestMiniConsumerRecipe(t *testing.T) {
	requireMini(t)
	s := miniSettings(t, nil)
	consumer := testfixture.CopyFile(t, s.Recipe, filepath.Join(t.TempDir(), "consumer.toml"))
	s.Recipe = consumer
	editRecipe(t, s, strings.NewReplacer(
		`min_os = "11.0"`, `min_os = "12.3"`,
		`flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=12.3"]`,
		`openssldir = "/opt/homebrew/etc/openssl@3"`, `openssldir = "/opt/consumer/ssl"`,
		`artifact = "openssl-macos-arm64"`, `artifact = "consumer-macos-arm64"`,
	).Replace)
	var log strings.Builder
	res, err := pipeline.Slice(context.Background(), s, miniRuntime(t, &log), "arm64", nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if got := filepath.Base(res.Published.Dir); got != "consumer-macos-arm64" {
		t.Errorf("published %s, want the recipe's artifact name", got)
	}
	lines := compilerLines(t, filepath.Join(res.Published.Dir, "lib", "libcrypto.a"))
	if want := "compiler: cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=12.3"; len(lines) != 1 || lines[0] != want {
		t.Errorf("compiler lines %q, want [%q]", lines, want)
	}
	m, err := artifact.ReadManifest(res.Published.Dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := recipe.LoadWith(consumer, recipe.LoadOptions{Unsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Recipe.Origin != recipe.OriginFile || m.Recipe.Path != "consumer.toml" || m.Recipe.SHA256 != r.SHA256 {
		t.Errorf("manifest recipe %+v, want file consumer.toml %s", m.Recipe, r.SHA256)
	}
	if m.Target.MinOS != "12.3" || m.Target.OpenSSLDir != "/opt/consumer/ssl" {
		t.Errorf("manifest target %+v", m.Target)
	}
	if strings.Contains(string(mustRead(t, filepath.Join(res.Published.Dir, artifact.ManifestName))), filepath.Dir(consumer)) {
		t.Error("the manifest names the recipe's absolute directory")
	}
}

// TestConsumerRecipeRefusedBeforeBuild: a hostile consumer recipe stops the
// build before anything is fetched or built, naming the file and line, and
// leaves no output directory.
func TestConsumerRecipeRefusedBeforeBuild(t *testing.T) {
	s := miniSettings(t, nil)
	b, err := os.ReadFile(s.Recipe)
	if err != nil {
		t.Fatal(err)
	}
	hostile := filepath.Join(t.TempDir(), "hostile.toml")
	text := strings.Replace(string(b), `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-O0"]`, 1)
	if err := os.WriteFile(hostile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Recipe = hostile
	_, err = pipeline.Slice(context.Background(), s, miniRuntime(t, &strings.Builder{}), "arm64", nil)
	if err == nil || !strings.Contains(err.Error(), hostile+":10: targets.arm64.flags[1]") {
		t.Fatalf("want a refusal at %s:10, got %v", hostile, err)
	}
	if _, err := os.Stat(s.Out); !os.IsNotExist(err) {
		t.Errorf("the refused build created %s", s.Out)
	}
}

// TestConsumerRecipeRealBuild: python-build-standalone's recipe (an example
// consumer recipe, as a file) builds the real OpenSSL 3.5.7 for arm64 with
// pbs's choices, and the artifact holds them: its name, options,
// deployment target, pbs's prefix and openssldir in libcrypto's own
// strings, -O3 in its compiler line, and check passes it at -minopt=3.
func TestConsumerRecipeRealBuild(t *testing.T) {
	dir := filepath.Join(e2e.Consumer(t), "dist", "pbs-openssl-aarch64-apple-darwin")
	m, err := artifact.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.OpenSSL.Version != "3.5.7" || m.Target.MinOS != "11.0" || m.Target.OpenSSLDir != "/private/etc/ssl" ||
		strings.Join(m.Target.Options, " ") != "--libdir=lib no-legacy no-shared no-tests" {
		t.Errorf("manifest: version %s target %+v", m.OpenSSL.Version, m.Target)
	}
	if m.Recipe.Origin != recipe.OriginFile || m.Recipe.Path != "python-build-standalone.toml" {
		t.Errorf("manifest recipe %+v", m.Recipe)
	}
	lib := mustRead(t, filepath.Join(dir, "lib", "libcrypto.a"))
	for _, want := range []string{`OPENSSLDIR: "/private/etc/ssl"`, `MODULESDIR: "/tools/deps/lib/ossl-modules"`, "-O3", "-mmacosx-version-min=11.0"} {
		if !bytes.Contains(lib, []byte(want)) {
			t.Errorf("libcrypto.a lacks %q", want)
		}
	}
	res, err := check.Check(context.Background(), check.Options{Path: dir, MinOpt: "3", Archs: []string{"arm64"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 || res.Slices == 0 {
		t.Errorf("check: %d slices, failures %q", res.Slices, res.Failures)
	}
}
