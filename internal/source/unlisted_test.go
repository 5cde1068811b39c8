package source

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/sigtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/keys"
)

// upstream serves files on loopback as upstream's release URLs do: path
// -> local file; anything else is 404. It counts the requests.
type upstream struct {
	*httptest.Server
	hits atomic.Int64
}

func serve(t *testing.T, files map[string]string) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		p, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, p)
	}))
	t.Cleanup(u.Close)
	return u
}

// unlisted is a release the recipe does not list, as recipe.Resolve makes
// it, with its URLs on srv.
func unlisted(v, sha string, srv *upstream) recipe.Release {
	return recipe.Release{Version: v, SHA256: sha, URLs: []string{srv.URL + "/download/openssl-" + v + ".tar.gz"}, Signers: keys.Fingerprints()}
}

func onlineFetcher(t *testing.T, cache string) *fetch.Fetcher {
	f, err := fetch.New(fetch.Options{CacheDir: cache, Backoff: []time.Duration{}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFetchUnlisted fetches a real release (3.0.20, signed by OpenSSL's
// retired key while it was valid) that the caller pins by sha256 alone,
// over HTTP: verified, stored in the cache, and found there next time.
func TestFetchUnlisted(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	srv := serve(t, map[string]string{
		"/download/openssl-3.0.20.tar.gz":     fx.Tarball,
		"/download/openssl-3.0.20.tar.gz.asc": fx.Signature,
	})
	cache := t.TempDir()
	rel := unlisted("3.0.20", fx.SHA256, srv)
	v, err := FetchUnlisted(context.Background(), onlineFetcher(t, cache), rel)
	if err != nil {
		t.Fatal(err)
	}
	if v.Release.Size != fx.Size || v.Release.SHA256 != fx.SHA256 || v.Release.URLs[0] != rel.URLs[0] {
		t.Errorf("release %+v: want the measured size %d and the release's URLs", v.Release, fx.Size)
	}
	if v.Tarball.URL != rel.URLs[0] || v.Signature.URL != rel.URLs[0]+".asc" {
		t.Errorf("recorded sources %s, %s; want the server's", v.Tarball.URL, v.Signature.URL)
	}
	if v.Signer == nil || v.Signer.Signer != "BA5473A2B0587B07FB27CF2D216094DFD0CB81EF" {
		t.Errorf("signer %+v", v.Signer)
	}
	if !strings.HasPrefix(v.Tarball.Path, cache) {
		t.Errorf("tarball %s is not in the cache %s", v.Tarball.Path, cache)
	}
	// Nothing is left in the staging area.
	if left, _ := filepath.Glob(filepath.Join(cache, "tmp", "*")); len(left) > 0 {
		t.Errorf("staging files left behind: %v", left)
	}
	// The next run finds it in the cache, the server untouched.
	hits := srv.hits.Load()
	again, err := FetchUnlisted(context.Background(), onlineFetcher(t, cache), rel)
	if err != nil {
		t.Fatal(err)
	}
	if srv.hits.Load() != hits || !again.Tarball.Cached || again.Release.Size != fx.Size {
		t.Errorf("second fetch: %d more requests, cached %v, size %d", srv.hits.Load()-hits, again.Tarball.Cached, again.Release.Size)
	}
	// and records the same sources as the first: the manifest of a build
	// from the cache names where the bytes came from, not a staging copy.
	if again.Tarball.URL != v.Tarball.URL || again.Signature == nil || again.Signature.URL != v.Signature.URL {
		t.Errorf("second fetch records sources %s, %+v; want the first's %s, %s", again.Tarball.URL, again.Signature, v.Tarball.URL, v.Signature.URL)
	}
	// A cache holding the tarball without its signature: fetched and
	// proven again, the signature stored beside the cached tarball.
	asc := filepath.Join(cache, "sha256", fx.SHA256, "openssl-3.0.20.tar.gz.asc")
	if err := os.Remove(asc); err != nil {
		t.Fatal(err)
	}
	hits = srv.hits.Load()
	third, err := FetchUnlisted(context.Background(), onlineFetcher(t, cache), rel)
	if err != nil {
		t.Fatal(err)
	}
	if srv.hits.Load() == hits || third.Signer == nil || third.Signature.URL != rel.URLs[0]+".asc" {
		t.Errorf("refetch after losing the signature: %d requests, signer %+v", srv.hits.Load()-hits, third.Signer)
	}
	if _, err := os.Stat(asc); err != nil {
		t.Errorf("signature not back in the cache: %v", err)
	}
}

// TestFetchUnlistedRefuses: the wrong bytes, the wrong signature, no
// signature, or a genuine release served under another release's name:
// each refused with the reason and the source named, nothing cached.
func TestFetchUnlistedRefuses(t *testing.T) {
	old := testfixture.Get(t, "3.0.20")
	other := testfixture.Get(t, "3.5.7")
	tests := []struct {
		name    string
		files   map[string]string
		version string
		sha     string
		is      error
		want    []string
	}{
		{"another sha256", map[string]string{"/download/openssl-3.0.20.tar.gz": old.Tarball, "/download/openssl-3.0.20.tar.gz.asc": old.Signature},
			"3.0.20", other.SHA256, ErrDigest, []string{"got sha256 " + old.SHA256, "want " + other.SHA256 + ", the sha256 given for OpenSSL 3.0.20", "/download/openssl-3.0.20.tar.gz"}},
		{"no signature", map[string]string{"/download/openssl-3.0.20.tar.gz": old.Tarball},
			"3.0.20", old.SHA256, nil, []string{"not its signature", "openssl-3.0.20.tar.gz.asc", "404"}},
		{"another release's signature", map[string]string{"/download/openssl-3.0.20.tar.gz": old.Tarball, "/download/openssl-3.0.20.tar.gz.asc": other.Signature},
			"3.0.20", old.SHA256, signature.ErrBadSignature, []string{"refusing openssl-3.0.20.tar.gz from", "signature"}},
		// 3.5.7, genuine and genuinely signed, offered as 3.5.9 with its
		// own sha256: only the tarball's own identity tells.
		{"relabelled", map[string]string{"/download/openssl-3.5.9.tar.gz": other.Tarball, "/download/openssl-3.5.9.tar.gz.asc": other.Signature},
			"3.5.9", other.SHA256, ErrIdentity, []string{"refusing openssl-3.5.9.tar.gz from", `top-level directory "openssl-3.5.7/", want "openssl-3.5.9/"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, tt.files)
			cache := t.TempDir()
			_, err := FetchUnlisted(context.Background(), onlineFetcher(t, cache), unlisted(tt.version, tt.sha, srv))
			if err == nil {
				t.Fatal("accepted")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			for _, w := range append(tt.want, "OpenSSL "+tt.version) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if entries, _ := filepath.Glob(filepath.Join(cache, "sha256", "*", "*")); len(entries) > 0 {
				t.Errorf("refused download entered the cache: %v", entries)
			}
			if left, _ := filepath.Glob(filepath.Join(cache, "tmp", "*")); len(left) > 0 {
				t.Errorf("staging files left behind: %v", left)
			}
		})
	}
}

// TestFetchUnlistedNeedsItsPins: a release without the caller's sha256 or
// signers is a programming error, refused before any download.
func TestFetchUnlistedNeedsItsPins(t *testing.T) {
	srv := serve(t, nil)
	rel := unlisted("4.0.3", "", srv)
	if _, err := FetchUnlisted(context.Background(), onlineFetcher(t, t.TempDir()), rel); err == nil || srv.hits.Load() != 0 {
		t.Errorf("FetchUnlisted without a sha256: %v, %d requests", err, srv.hits.Load())
	}
}

// TestFetchRecipeKey: a real release's bytes (3.0.20), signed here by a
// freshly made key that only the recipe pins (its release_keys), served
// over HTTP: accepted beside osslbuild's keys, the result naming the
// recipe's key file; the same bytes signed by a key nobody pins are
// refused naming the signing subkey's id and where OpenSSL publishes its
// keys, and nothing enters the cache. As a listed release (the pinned
// fetch, from a mirror) the recipe's key verifies too.
func TestFetchRecipeKey(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	consumer, stranger := sigtest.NewKey(t, "OpenSSL next"), sigtest.NewKey(t, "not OpenSSL")
	key, err := signature.NewKey(consumer.Fingerprint(), signature.OriginRecipe, "keys/openssl-next.asc", consumer.Armored(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ours, theirs := filepath.Join(dir, "ours.asc"), filepath.Join(dir, "theirs.asc")
	os.WriteFile(ours, consumer.Sign(t, fx.Tarball), 0o644)
	os.WriteFile(theirs, stranger.Sign(t, fx.Tarball), 0o644)
	keyed := func(rel recipe.Release) recipe.Release {
		rel.Signers, rel.Keys = append(keys.Fingerprints(), consumer.Fingerprint()), []signature.Key{key}
		return rel
	}

	srv := serve(t, map[string]string{"/download/openssl-3.0.20.tar.gz": fx.Tarball, "/download/openssl-3.0.20.tar.gz.asc": ours})
	v, err := FetchUnlisted(context.Background(), onlineFetcher(t, t.TempDir()), keyed(unlisted("3.0.20", fx.SHA256, srv)))
	if err != nil {
		t.Fatal(err)
	}
	if v.Signer.Signer != consumer.Fingerprint() || v.Signer.SigningKey != consumer.SigningFingerprint() ||
		v.Signer.Key.Origin != "recipe" || v.Signer.Key.Path != "keys/openssl-next.asc" || v.Signer.Key.SHA256 != key.SHA256 {
		t.Errorf("signer %+v", v.Signer)
	}
	if !strings.Contains(v.Describe(), "verified with recipe keys/openssl-next.asc") {
		t.Errorf("Describe: %s", v.Describe())
	}
	// Without the recipe's key, the signature is by an unknown signer.
	plain := unlisted("3.0.20", fx.SHA256, srv)
	if _, err := FetchUnlisted(context.Background(), onlineFetcher(t, t.TempDir()), plain); !errors.Is(err, signature.ErrUnknownSigner) {
		t.Errorf("without the recipe's key: %v", err)
	}

	srv = serve(t, map[string]string{"/download/openssl-3.0.20.tar.gz": fx.Tarball, "/download/openssl-3.0.20.tar.gz.asc": theirs})
	cache := t.TempDir()
	_, err = FetchUnlisted(context.Background(), onlineFetcher(t, cache), keyed(unlisted("3.0.20", fx.SHA256, srv)))
	if !errors.Is(err, signature.ErrUnknownSigner) {
		t.Fatalf("a signer nobody pins: %v", err)
	}
	for _, want := range []string{"key id " + stranger.SigningKeyID(), signature.PublishedAt, consumer.Fingerprint(), "/download/openssl-3.0.20.tar.gz"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q:\n%v", want, err)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "sha256", "*", "*")); len(entries) > 0 {
		t.Errorf("refused download entered the cache: %v", entries)
	}

	// Listed, from a mirror holding the tarball and the recipe key's
	// signature.
	mirror := t.TempDir()
	testfixture.CopyFile(t, fx.Tarball, filepath.Join(mirror, "openssl-3.0.20.tar.gz"))
	testfixture.CopyFile(t, ours, filepath.Join(mirror, "openssl-3.0.20.tar.gz.asc"))
	f, err := fetch.New(fetch.Options{CacheDir: t.TempDir(), Mirror: mirror, Offline: true, Backoff: []time.Duration{}})
	if err != nil {
		t.Fatal(err)
	}
	rel := recipe.Release{Version: "3.0.20", SHA256: fx.SHA256, Size: fx.Size, URLs: []string{"https://example.invalid/openssl-3.0.20.tar.gz"},
		Signers: []string{consumer.Fingerprint()}, Keys: []signature.Key{key}}
	v, err = Fetch(context.Background(), f, rel)
	if err != nil {
		t.Fatal(err)
	}
	if v.Signer.Key.Origin != "recipe" || v.Signer.Signer != consumer.Fingerprint() {
		t.Errorf("listed: signer %+v", v.Signer)
	}
}
