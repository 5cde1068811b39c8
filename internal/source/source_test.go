package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func release(t *testing.T, v string) recipe.Release {
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := r.Release(v)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func fetcher(t *testing.T, mirror string) *fetch.Fetcher {
	f, err := fetch.New(fetch.Options{Mirror: mirror, Offline: true, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFetchAndUnpack runs the source stage on the real 3.0.20 release: the
// tarball and signature verified, then unpacked with a matching patch
// applied and SOURCE_DATE_EPOCH taken from the newest member.
func TestFetchAndUnpack(t *testing.T) {
	testfixture.Get(t, "3.0.20")
	v, err := Fetch(context.Background(), fetcher(t, testfixture.Dir()), release(t, "3.0.20"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Signer == nil || v.Signer.Signer != "BA5473A2B0587B07FB27CF2D216094DFD0CB81EF" {
		t.Errorf("signer = %+v", v.Signer)
	}
	patches := fstest.MapFS{
		"README.md": {Data: []byte("not a patch")},
		"001-note.patch": {Data: []byte("Applies-To: >= 3.0.0, < 3.1.0\n\n" +
			"diff --git a/OSSLBUILD-NOTE b/OSSLBUILD-NOTE\nnew file mode 100644\n--- /dev/null\n+++ b/OSSLBUILD-NOTE\n@@ -0,0 +1 @@\n+patched by osslbuild's test\n")},
		"002-other.patch": {Data: []byte("Applies-To: >= 4.0.0\n\n--- /dev/null\n+++ b/OTHER\n@@ -0,0 +1 @@\n+no\n")},
	}
	dest := filepath.Join(t.TempDir(), "src")
	tree, err := Unpack(context.Background(), v, dest, patches)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Patches) != 1 || tree.Patches[0].Name != "001-note.patch" {
		t.Errorf("patches = %+v", tree.Patches)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "OSSLBUILD-NOTE")); err != nil || !strings.Contains(string(b), "patched") {
		t.Errorf("patch not applied: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, "Configure")); err != nil {
		t.Error("no Configure in the tree")
	}
	if tree.SourceDateEpoch < 1700000000 {
		t.Errorf("SOURCE_DATE_EPOCH %d is not the release's", tree.SourceDateEpoch)
	}
}

// TestSignatureRequired: a mirror without the .asc fails unless the recipe
// makes the signature optional; a signature by a key the recipe does not
// allow is refused.
func TestSignatureRequired(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	mirror := t.TempDir()
	if err := os.Symlink(fx.Tarball, filepath.Join(mirror, "openssl-3.0.20.tar.gz")); err != nil {
		t.Fatal(err)
	}
	rel := release(t, "3.0.20")
	if _, err := Fetch(context.Background(), fetcher(t, mirror), rel); err == nil || !strings.Contains(err.Error(), "signature required") {
		t.Errorf("missing signature: %v", err)
	}
	rel.Signature = "optional"
	v, err := Fetch(context.Background(), fetcher(t, mirror), rel)
	if err != nil || v.Signer != nil {
		t.Errorf("optional signature: %v %+v", err, v)
	}
	rel = release(t, "3.0.20")
	rel.Signers = []string{"B146647E45A7B33947AB226B2A2C87D161692D40"}
	if _, err := Fetch(context.Background(), fetcher(t, testfixture.Dir()), rel); !errors.Is(err, signature.ErrUnknownSigner) {
		t.Errorf("signer not allowed by the recipe: %v", err)
	}
}
