package pipeline_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// recipeWithout writes the embedded recipe minus the [[release]] of
// version, so that release is one the recipe does not list.
func recipeWithout(t *testing.T, version string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "recipes", "openssl.toml"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "[[release]]")
	var kept []string
	for _, blk := range blocks {
		if !strings.Contains(blk, `version = "`+version+`"`) {
			kept = append(kept, blk)
		}
	}
	if len(kept) != len(blocks)-1 {
		t.Fatalf("recipe has no release %s to remove", version)
	}
	p := filepath.Join(t.TempDir(), "openssl.toml")
	if err := os.WriteFile(p, []byte(strings.Join(kept, "[[release]]")), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := recipe.Load(p); err != nil {
		t.Fatal(err)
	} else if _, err := r.Release(version); err == nil {
		t.Fatalf("%s still lists %s", p, version)
	}
	return p
}

func quiet() pipeline.Runtime { return pipeline.Runtime{Log: io.Discard, Environ: []string{}} }

// TestUnlistedRelease: a release the recipe does not list is built only
// with the caller's sha256, and then fetched and proven from the mirror.
func TestUnlistedRelease(t *testing.T) {
	t.Parallel()
	fx := testfixture.Get(t, "3.0.20")
	s := pipeline.Settings{Recipe: recipeWithout(t, "3.0.20"), Version: "openssl-3.0.20", Work: t.TempDir()}
	s.Fetch.Mirror, s.Fetch.Offline, s.Fetch.CacheDir = testfixture.Dir(), true, t.TempDir()

	if _, err := pipeline.Fetch(context.Background(), s, quiet()); !errors.Is(err, recipe.ErrUnknown) || !strings.Contains(err.Error(), "give its sha256") {
		t.Errorf("unlisted release without a sha256: %v", err)
	}
	s.SHA256 = strings.Repeat("0", 64)
	if _, err := pipeline.Fetch(context.Background(), s, quiet()); err == nil || !strings.Contains(err.Error(), "the sha256 given for OpenSSL 3.0.20") {
		t.Errorf("unlisted release with the wrong sha256: %v", err)
	}
	s.SHA256 = fx.SHA256
	v, err := pipeline.Fetch(context.Background(), s, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if v.Release.Version != "3.0.20" || v.Release.Size != fx.Size || v.Signer == nil || v.Signer.Signer != "BA5473A2B0587B07FB27CF2D216094DFD0CB81EF" {
		t.Errorf("verified %+v, signer %+v", v.Release, v.Signer)
	}
	if !strings.HasPrefix(v.Release.URLs[0], "https://github.com/openssl/openssl/releases/download/openssl-3.0.20/") {
		t.Errorf("unlisted release URLs %v: want upstream's", v.Release.URLs)
	}
}

// TestCallerOptionsRefused: options that are flags in disguise stop the
// build before anything is fetched; options the release's Configure does
// not know stop it at Configure, with the release named.
func TestCallerOptionsRefused(t *testing.T) {
	t.Parallel()
	s := pipeline.Settings{Version: "3.0.20", Work: t.TempDir(), Out: t.TempDir(), Rebuild: true}
	s.Fetch.Offline, s.Fetch.CacheDir = true, t.TempDir() // nothing to fetch from
	s.Options = []string{"no-zlib", "-O0", "CFLAGS=-O0"}
	_, err := pipeline.Slice(context.Background(), s, quiet(), "arm64", nil)
	if !errors.Is(err, recipe.ErrOption) || !strings.Contains(err.Error(), `"-O0"`) || !strings.Contains(err.Error(), `"CFLAGS=-O0"`) {
		t.Errorf("flags as options: %v", err)
	}

	if testing.Short() {
		t.Skip("runs Configure")
	}
	testfixture.Get(t, "3.0.20")
	if _, err := toolchain.New("cross"); err != nil {
		testfixture.Missing(t, "%v", err)
	}
	s.Fetch.Mirror = testfixture.Dir()
	s.Options = []string{"no-zlib", "no-shared", "no-bogus-feature", "enable-also_bogus", "no-apps"}
	_, err = pipeline.Slice(context.Background(), s, quiet(), "arm64", nil)
	if !errors.Is(err, recipe.ErrOption) || !strings.Contains(err.Error(), "OpenSSL 3.0.20 does not know the option(s) enable-also_bogus no-bogus-feature") {
		t.Errorf("options unknown to 3.0.20: %v", err)
	}
	if ents, _ := os.ReadDir(s.Out); len(ents) > 0 {
		t.Errorf("something was published: %v", ents)
	}
}
