package pipeline_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/check"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/sigtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// TestMiniConsumerRecipe: a consumer's own recipe, a file in a temporary
// directory, chooses the deployment target, openssldir and artifact name of
// a build over the mini tree; the build follows it (the compiler line, the
// objects' minos, the published name) and the manifest records where the
// recipe came from (a path outside the working directory: its name only)
// and its digest.
func TestMiniConsumerRecipe(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
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
	res, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), "arm64", nil)
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
	m, err := artifact.LoadManifest(context.Background(), res.Published.Dir)
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
	t.Parallel()
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
	_, err = pipeline.Slice(context.Background(), s, minitest.Runtime(t, &strings.Builder{}), "arm64", nil)
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
	t.Parallel()
	dir := filepath.Join(e2e.Consumer(t), "dist", "pbs-openssl-aarch64-apple-darwin")
	m, err := artifact.LoadManifest(context.Background(), dir)
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

// keyedMini is a build of the mini release signed by signer, whose recipe
// (ci/osslbuild.toml in a fresh directory) pins the key named by fpr as
// its release key at keyPath, a file holding key: the settings (no
// unsigned releases: the signature is required) and the recipe's path.
func keyedMini(t *testing.T, signer, key *sigtest.Key, fpr, keyPath string) (pipeline.Settings, string) {
	t.Helper()
	minitest.Require(t)
	mirror, sum, size := minitest.Tarball(t, minitest.Version, nil)
	tarball := filepath.Join(mirror, "openssl-"+minitest.Version+".tar.gz")
	if err := os.WriteFile(tarball+".asc", signer.Sign(t, tarball), 0o644); err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(mustRead(t, minitest.Recipe(t, minitest.Version, nil, sum, size))), `signature = "optional"`, fmt.Sprintf("signers = [%q]", fpr), 1)
	text = fmt.Sprintf("release_keys = [{ path = %q, fingerprint = %q }]\n", keyPath, fpr) + text
	dir := t.TempDir()
	testfixture.WriteTree(t, dir, map[string]string{"ci/osslbuild.toml": text, "ci/" + keyPath: string(key.Armored(t))})
	root := t.TempDir()
	s := pipeline.Settings{Recipe: filepath.Join(dir, "ci", "osslbuild.toml"), Out: filepath.Join(root, "dist"), Work: filepath.Join(root, "work"), Jobs: 2}
	s.Fetch.Mirror, s.Fetch.Offline, s.Fetch.CacheDir = mirror, true, filepath.Join(root, "cache")
	return s, s.Recipe
}

// TestMiniConsumerReleaseKey: a release signed by the subkey of a key only
// the consumer's recipe pins (release_keys, beside the recipe) builds and
// is published; its manifest records the signer, the signing subkey and
// the key file that verified it (the recipe's, by its path relative to the
// recipe, and its sha256). The same release is served from the artifact
// cache to the same recipe, and built again when the key file is another
// (moved: the key's origin is part of the cache key), whose path the new
// manifest records.
func TestMiniConsumerReleaseKey(t *testing.T) {
	t.Parallel()
	k := sigtest.NewKey(t, "OpenSSL next")
	s, recipePath := keyedMini(t, k, k, k.Fingerprint(), "keys/openssl-next.asc")
	build := func(s pipeline.Settings) (*artifact.Manifest, string) {
		t.Helper()
		var log strings.Builder
		s.Out = filepath.Join(t.TempDir(), "dist")
		res, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), "arm64", nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		m, err := artifact.LoadManifest(context.Background(), res.Published.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return m, log.String()
	}
	m, log := build(s)
	want := artifact.KeyRef{Fingerprint: k.Fingerprint(), Origin: "recipe", Path: "keys/openssl-next.asc", SHA256: sha256Hex(k.Armored(t))}
	if m.OpenSSL.Signer != k.Fingerprint() || m.OpenSSL.SigningKey != k.SigningFingerprint() || m.OpenSSL.SignerKey == nil || *m.OpenSSL.SignerKey != want {
		t.Errorf("manifest source %+v (key %+v), want signed by %s's subkey %s, verified with %+v", m.OpenSSL, m.OpenSSL.SignerKey, k.Fingerprint(), k.SigningFingerprint(), want)
	}
	if !strings.Contains(log, "verified with recipe keys/openssl-next.asc") {
		t.Errorf("the log does not say which key verified the release:\n%s", log)
	}
	if _, log := build(s); !strings.Contains(log, "openssl-macos-arm64: cache hit") {
		t.Errorf("the same recipe and key: not served from the cache:\n%s", log)
	}
	// An entry under this key whose manifest names another key file (its
	// records resealed to match) is not served.
	trees, _ := filepath.Glob(filepath.Join(s.Fetch.CacheDir, "artifacts", "*", "openssl-macos-arm64"))
	if len(trees) != 1 {
		t.Fatalf("cache entries: %v", trees)
	}
	forged, err := artifact.LoadManifest(context.Background(), trees[0])
	if err != nil {
		t.Fatal(err)
	}
	forged.OpenSSL.SignerKey.SHA256 = strings.Repeat("0", 64)
	if err := artifact.WriteManifest(context.Background(), trees[0], forged); err != nil {
		t.Fatal(err)
	}
	rewriteTarball(t, trees[0])
	if m, log := build(s); !strings.Contains(log, "discarding it and building") || !strings.Contains(log, "signer key") || *m.OpenSSL.SignerKey != want {
		t.Errorf("an entry naming another key file: published key %+v, and the log:\n%s", m.OpenSSL.SignerKey, log)
	}
	// The same key, the same bytes, at another path: another entry (a
	// miss, not an entry found wanting).
	dir := filepath.Dir(recipePath)
	if err := os.Rename(filepath.Join(dir, "keys", "openssl-next.asc"), filepath.Join(dir, "keys", "moved.asc")); err != nil {
		t.Fatal(err)
	}
	editRecipe(t, s, func(r string) string { return strings.Replace(r, "keys/openssl-next.asc", "keys/moved.asc", 1) })
	m, log = build(s)
	if strings.Contains(log, "cache hit") || strings.Contains(log, "cached artifact") || m.OpenSSL.SignerKey == nil || m.OpenSSL.SignerKey.Path != "keys/moved.asc" {
		t.Errorf("the key file moved: manifest key %+v, and the log:\n%s", m.OpenSSL.SignerKey, log)
	}
}

// TestMiniConsumerReleaseKeyRefused: a key file that holds another key
// than the fingerprint the recipe writes is refused at that line before
// anything is fetched; a release signed by a key neither osslbuild nor the
// recipe pins is refused naming the signing subkey's id and where OpenSSL
// publishes its keys. Neither publishes anything.
func TestMiniConsumerReleaseKeyRefused(t *testing.T) {
	t.Parallel()
	k, other, stranger := sigtest.NewKey(t, "OpenSSL next"), sigtest.NewKey(t, "someone else"), sigtest.NewKey(t, "not OpenSSL")
	t.Run("fingerprint mismatch", func(t *testing.T) {
		s, recipePath := keyedMini(t, k, other, k.Fingerprint(), "keys/openssl-next.asc")
		_, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &strings.Builder{}), "arm64", nil)
		want := fmt.Sprintf("%s:1: release_keys[0].fingerprint: the file keys/openssl-next.asc holds the primary key %s, not %s", recipePath, other.Fingerprint(), k.Fingerprint())
		if !errors.Is(err, recipe.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant %q", err, want)
		}
		if _, err := os.Stat(s.Fetch.CacheDir); !os.IsNotExist(err) {
			t.Errorf("the refused recipe fetched into %s", s.Fetch.CacheDir)
		}
		emptyOrMissing(t, s.Out)
	})
	t.Run("unknown signer", func(t *testing.T) {
		s, _ := keyedMini(t, stranger, k, k.Fingerprint(), "keys/openssl-next.asc")
		_, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &strings.Builder{}), "arm64", nil)
		if !errors.Is(err, signature.ErrUnknownSigner) {
			t.Fatalf("want ErrUnknownSigner, got %v", err)
		}
		for _, want := range []string{"key id " + stranger.SigningKeyID(), signature.PublishedAt, k.Fingerprint()} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal lacks %q:\n%v", want, err)
			}
		}
		emptyOrMissing(t, s.Out)
	})
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestMiniMergeHoldsTheKeyFile: build:universal2 of a release signed by
// the recipe's own key merges its slices, whose claims keep the key file
// that verified them; build:merge of the same slices with a recipe whose
// key file at that path is other bytes (the same key, armored with a
// comment) refuses them, naming the key file they were verified with.
func TestMiniMergeHoldsTheKeyFile(t *testing.T) {
	t.Parallel()
	k := sigtest.NewKey(t, "OpenSSL next")
	s, recipePath := keyedMini(t, k, k, k.Fingerprint(), "keys/openssl-next.asc")
	rt := minitest.Runtime(t, &strings.Builder{})
	res, err := pipeline.Universal2(context.Background(), s, rt)
	if err != nil {
		t.Fatal(err)
	}
	for _, sl := range res.Manifest.Slices {
		if c := sl.Claims; c == nil || c.Source.SignerKey == nil || c.Source.SignerKey.Origin != "recipe" || c.Source.SignerKey.Path != "keys/openssl-next.asc" {
			t.Errorf("%s slice claims %+v", sl.Target.Arch, sl.Claims)
		}
	}
	arm, x86 := filepath.Join(s.Out, "openssl-macos-arm64"), filepath.Join(s.Out, "openssl-macos-x86-64")
	// The same key in other bytes: an armor header changes the file.
	keyFile := filepath.Join(filepath.Dir(recipePath), "keys", "openssl-next.asc")
	armored := strings.Replace(string(mustRead(t, keyFile)), "-----BEGIN PGP PUBLIC KEY BLOCK-----\n", "-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: the same key\n", 1)
	if err := os.WriteFile(keyFile, []byte(armored), 0o644); err != nil {
		t.Fatal(err)
	}
	m := s
	m.Out = filepath.Join(t.TempDir(), "dist")
	_, err = pipeline.Merge(context.Background(), m, rt, arm, x86)
	if !errors.Is(err, universal.ErrRefused) || !strings.Contains(err.Error(), "verified with the key file recipe keys/openssl-next.asc (sha256 "+sha256Hex(k.Armored(t))+"), not one this recipe verifies OpenSSL 9.9.9 with") {
		t.Errorf("slices verified with another key file: %v", err)
	}
	emptyOrMissing(t, m.Out)
}
