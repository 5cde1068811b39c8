package source

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/sigtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func pinned(t *testing.T, v string) recipe.Release {
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
	v, err := Fetch(context.Background(), fetcher(t, testfixture.Dir()), pinned(t, "3.0.20"))
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
	rel := pinned(t, "3.0.20")
	if _, err := Fetch(context.Background(), fetcher(t, mirror), rel); err == nil || !strings.Contains(err.Error(), "signature required") {
		t.Errorf("missing signature: %v", err)
	}
	rel.Signature = "optional"
	v, err := Fetch(context.Background(), fetcher(t, mirror), rel)
	if err != nil || v.Signer != nil {
		t.Errorf("optional signature: %v %+v", err, v)
	}
	rel = pinned(t, "3.0.20")
	rel.Signers = []string{"B146647E45A7B33947AB226B2A2C87D161692D40"}
	if _, err := Fetch(context.Background(), fetcher(t, testfixture.Dir()), rel); !errors.Is(err, signature.ErrUnknownSigner) {
		t.Errorf("signer not allowed by the recipe: %v", err)
	}
}

// serveRelease serves the files in dir over loopback HTTP, with asc in place
// of every .asc when it is not nil.
func serveRelease(t *testing.T, dir string, asc []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asc != nil && path.Ext(r.URL.Path) == ".asc" {
			w.Write(asc)
			return
		}
		http.ServeFile(w, r, filepath.Join(dir, path.Base(r.URL.Path)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBadSignatureNotStuckInCache: one fetch from a source that serves the
// genuine 4.0.2 tarball with a foreign or truncated .asc is refused, and
// must not break the next fetch from a genuine source through the cache;
// a bad signature already in the cache is replaced, and when nothing can
// replace it the error names the cache file.
func TestBadSignatureNotStuckInCache(t *testing.T) {
	fx := testfixture.Get(t, "4.0.2")
	genuine, err := os.ReadFile(fx.Signature)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		asc  []byte
		is   error
	}{
		{"foreign", sigtest.Foreign(t, fx.Tarball), signature.ErrUnknownSigner},
		{"truncated", genuine[:len(genuine)/2], signature.ErrMalformed},
	} {
		t.Run(bad.name, func(t *testing.T) {
			evil := serveRelease(t, filepath.Dir(fx.Tarball), bad.asc)
			good := serveRelease(t, filepath.Dir(fx.Tarball), nil)
			f, err := fetch.New(fetch.Options{CacheDir: t.TempDir(), Backoff: []time.Duration{}})
			if err != nil {
				t.Fatal(err)
			}
			rel := pinned(t, "4.0.2")

			rel.URLs = []string{evil.URL + "/openssl-4.0.2.tar.gz"}
			_, err = Fetch(context.Background(), f, rel)
			if !errors.Is(err, bad.is) || !strings.Contains(err.Error(), evil.URL+"/openssl-4.0.2.tar.gz.asc: ") {
				t.Fatalf("bad signature from %s: %v; want %v naming the source", evil.URL, err, bad.is)
			}

			// The next run, from a genuine source: the cached tarball records
			// the hostile origin, which is asked first and passed over.
			rel.URLs = []string{good.URL + "/openssl-4.0.2.tar.gz"}
			v, err := Fetch(context.Background(), f, rel)
			if err != nil {
				t.Fatalf("genuine source after a bad one: %v", err)
			}
			if v.Signer == nil || v.Signer.Signer != "B146647E45A7B33947AB226B2A2C87D161692D40" || v.Signature.URL != good.URL+"/openssl-4.0.2.tar.gz.asc" {
				t.Errorf("signer %+v from %s", v.Signer, v.Signature.URL)
			}
			if !v.Tarball.Cached {
				t.Error("tarball not served from the cache")
			}

			// A bad signature in the cache (left by an older osslbuild, or
			// written over): replaced from the source...
			sigPath := v.Signature.Path
			if err := os.WriteFile(sigPath, bad.asc, 0o644); err != nil {
				t.Fatal(err)
			}
			v, err = Fetch(context.Background(), f, rel)
			if err != nil {
				t.Fatalf("bad signature in the cache, genuine source: %v", err)
			}
			if v.Signature.Cached || v.Signature.Evicted == nil || !strings.Contains(v.Describe(), "the cached one failed") {
				t.Errorf("signature %+v; description %q", v.Signature, v.Describe())
			}
			// ...and, with no source left, named as the culprit.
			if err := os.WriteFile(sigPath, bad.asc, 0o644); err != nil {
				t.Fatal(err)
			}
			good.Close()
			_, err = Fetch(context.Background(), f, rel)
			if !errors.Is(err, bad.is) || !strings.Contains(err.Error(), "\n  cache: "+sigPath+" (downloaded from "+good.URL+"/openssl-4.0.2.tar.gz.asc): ") ||
				!strings.Contains(err.Error(), "(removed)") {
				t.Errorf("bad cached signature, no source: %v; want %v naming the cache file", err, bad.is)
			}
			t.Log(err)
		})
	}
}
