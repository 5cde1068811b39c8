package bump

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/bumptest"
	"github.com/osslbuild/osslbuild/internal/testsupport/sigtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

const (
	currentKey = "B146647E45A7B33947AB226B2A2C87D161692D40"
	retiredKey = "BA5473A2B0587B07FB27CF2D216094DFD0CB81EF"
)

// fakeNet is the internet as the tests see it: a loopback server that
// answers for any host. Its transport sends every request there, recording
// the URL asked for, so the bump code runs with the real upstream URLs.
type fakeNet struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	files    map[string]string // "host/path" -> file on disk
	blobs    map[string][]byte // "host/path" -> bytes
	types    map[string]string // "host/path" -> Content-Type
	links    map[string]string // "host/path" -> Link header
	requests []string
}

func newFakeNet(t *testing.T) *fakeNet {
	n := &fakeNet{t: t, files: map[string]string{}, blobs: map[string][]byte{}, types: map[string]string{}, links: map[string]string{}}
	n.srv = httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(n.srv.Close)
	return n
}

func key(rawURL string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(rawURL, "https://"), "http://")
	s, _, _ = strings.Cut(s, "?")
	return s
}

func (n *fakeNet) serve(w http.ResponseWriter, r *http.Request) {
	k := r.Header.Get("X-Test-Host") + r.URL.Path
	n.mu.Lock()
	file, isFile := n.files[k]
	blob, isBlob := n.blobs[k]
	ct, link := n.types[k], n.links[k]
	n.mu.Unlock()
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	if link != "" {
		w.Header().Set("Link", link)
	}
	switch {
	case isFile:
		http.ServeFile(w, r, file)
	case isBlob:
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(blob))
	default:
		http.NotFound(w, r)
	}
}

func (n *fakeNet) file(rawURL, path string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.files[key(rawURL)] = path
}

func (n *fakeNet) blob(rawURL string, b []byte, contentType string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blobs[key(rawURL)] = b
	n.types[key(rawURL)] = contentType
}

// release serves a tarball and its signature at the GitHub release URL.
func (n *fakeNet) release(v, tarball, asc string) {
	u := UpstreamURLs(v)[0]
	n.file(u, tarball)
	n.file(u+".asc", asc)
}

func (n *fakeNet) RoundTrip(req *http.Request) (*http.Response, error) {
	n.mu.Lock()
	n.requests = append(n.requests, req.URL.String())
	n.mu.Unlock()
	r := req.Clone(req.Context())
	r.Header.Set("X-Test-Host", req.URL.Host)
	r.URL.Scheme = "http"
	r.URL.Host = strings.TrimPrefix(n.srv.URL, "http://")
	r.Host = ""
	return n.srv.Client().Transport.RoundTrip(r)
}

func (n *fakeNet) requested() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.requests...)
}

// noNet fails the test on any HTTP request.
type noNet struct{ t *testing.T }

func (n noNet) RoundTrip(req *http.Request) (*http.Response, error) {
	n.t.Errorf("unexpected network request: %s", req.URL)
	return nil, errors.New("no network in this test")
}

// withoutRelease removes a version's [[release]] block (and the blank line
// after it) from recipe text.
func withoutRelease(t *testing.T, s, v string) string {
	t.Helper()
	i := strings.Index(s, "[[release]]\nversion = \""+v+"\"\n")
	if i < 0 {
		t.Fatalf("recipe has no block for %s", v)
	}
	end := strings.Index(s[i:], "\n\n")
	if end < 0 {
		return strings.TrimRight(s[:i], "\n") + "\n"
	}
	return s[:i] + s[i+end+2:]
}

func withDefault(t *testing.T, s, v string) string {
	t.Helper()
	out := strings.Replace(s, "\ndefault = \"4.0.2\"\n", "\ndefault = \""+v+"\"\n", 1)
	if out == s {
		t.Fatal("recipe has no default = \"4.0.2\" line")
	}
	return out
}

// writeRecipe writes text as openssl.toml in a fresh directory.
func writeRecipe(t *testing.T, text string) string {
	t.Helper()
	if _, err := recipe.Parse("test", []byte(text)); err != nil {
		t.Fatalf("test recipe is invalid: %v", err)
	}
	p := filepath.Join(t.TempDir(), "openssl.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s changed:\n%s", path, UnifiedDiff("want", "got", want, string(got)))
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory of %s holds %v, want only the recipe", path, names)
	}
}

// assertEmpty checks that Run left nothing behind in its staging directory.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%s not cleaned up: %d entries", dir, len(ents))
	}
}

// TestBumpRestoresRelease bumps 4.0.2 into a recipe that lacks it: the result
// must be the repository's own recipe, byte for byte (block layout, position,
// default, comments), and the cache must hold the verified files.
func TestBumpRestoresRelease(t *testing.T) {
	fx := testfixture.Get(t, "4.0.2")
	orig := bumptest.RepoRecipe(t)
	path := writeRecipe(t, withDefault(t, withoutRelease(t, orig, "4.0.2"), "3.5.7"))
	n := newFakeNet(t)
	n.release("4.0.2", fx.Tarball, fx.Signature)
	cache, staging := t.TempDir(), t.TempDir()

	var log bytes.Buffer
	diffRes, err := Add(context.Background(), Options{
		Recipe:    path,
		Version:   "4.0.2",
		Fetch:     fetch.Options{Transport: n, CacheDir: cache},
		SeedCache: true,
		TempDir:   staging,
		Log:       &log,
	})
	if err != nil {
		t.Fatalf("Add: %v\nlog:\n%s", err, log.String())
	}
	diff := diffRes.Diff
	assertFile(t, path, orig)
	assertEmpty(t, staging)
	for _, want := range []string{
		"--- " + path + "\n+++ " + path + "\n",
		"-default = \"3.5.7\"\n+default = \"4.0.2\"\n",
		"+[[release]]\n+version = \"4.0.2\"\n+sha256 = \"" + fx.SHA256 + "\"\n+size = 55153883\n",
		"+signers = [\"" + currentKey + "\"]\n+\n # end of life 2026-11-01: the 3.6 series; builds warn\n [[release]]\n version = \"3.6.3\"\n",
	} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	for _, want := range []string{"by " + currentKey, "identity: top-level directory openssl-4.0.2/, version 4.0.2 in openssl-4.0.2/VERSION.dat"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}

	// The cache now holds both files, verified against the new pins.
	f, err := fetch.New(fetch.Options{CacheDir: cache, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	file := fetch.File{Name: "openssl-4.0.2.tar.gz", SHA256: fx.SHA256, Size: fx.Size}
	res, err := f.Fetch(context.Background(), file)
	if err != nil || !res.Cached {
		t.Fatalf("tarball not in the cache after SeedCache: %+v, %v", res, err)
	}
	var signer signature.Result
	sig, err := f.FetchSignature(context.Background(), file, res, source.SignatureCheck(res.Path, recipe.Release{Signers: []string{currentKey}}, &signer))
	if err != nil || !sig.Cached || signer.Signer != currentKey {
		t.Fatalf("verified signature not in the cache after SeedCache: %+v, %v (signer %q)", sig, err, signer.Signer)
	}
	// The cache records where the files were downloaded from, not the
	// staging directory they passed through (removed by now).
	if want := UpstreamURLs("4.0.2")[0]; res.URL != want || sig.URL != want+".asc" {
		t.Errorf("cache records origins %q and %q, want %q and %q.asc", res.URL, sig.URL, want, want)
	}
}

// TestBumpFromMirrorOffline bumps from a directory mirror with the network
// off; the recipe still records the upstream URLs. A dry run first must
// leave the file alone and predict the diff exactly.
func TestBumpFromMirrorOffline(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	mirror := t.TempDir()
	for _, p := range []string{fx.Tarball, fx.Signature} {
		if err := os.Symlink(p, filepath.Join(mirror, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	before := withoutRelease(t, bumptest.RepoRecipe(t), "3.0.20")
	path := writeRecipe(t, before)
	opts := Options{
		Recipe:  path,
		Version: "3.0.20",
		Fetch:   fetch.Options{Transport: noNet{t}, Mirror: mirror, Offline: true},
		DryRun:  true,
	}
	dryRes, err := Add(context.Background(), opts)
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	dry := dryRes.Diff
	assertFile(t, path, before)

	opts.DryRun = false
	diffRes, err := Add(context.Background(), opts)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	diff := diffRes.Diff
	if diff != dry {
		t.Errorf("dry run predicted\n%s\nbut the run made\n%s", dry, diff)
	}
	b, _ := os.ReadFile(path)
	r, err := recipe.Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Default != "4.0.2" {
		t.Errorf("default = %s; an older release must not move it from 4.0.2", r.Default)
	}
	if strings.Contains(diff, "default") {
		t.Errorf("diff touches default:\n%s", diff)
	}
	got, err := r.Release("3.0.20")
	if err != nil {
		t.Fatal(err)
	}
	want := recipe.Release{Version: "3.0.20", SHA256: fx.SHA256, Size: fx.Size, URLs: UpstreamURLs("3.0.20"), Signers: []string{retiredKey}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("release 3.0.20 = %+v, want %+v", got, want)
	}
	// Releases stay newest first in the file.
	var order []string
	for _, x := range r.Releases {
		order = append(order, x.Version)
	}
	if !newestFirst(order) {
		t.Errorf("release blocks in file order: %v, want newest first", order)
	}
	if !strings.Contains(string(b), "# Releases: pinned sha256 and size") {
		t.Error("comments were lost")
	}
}

// TestBumpTampered: the real signature over a tarball with one byte changed
// must be refused, the file left alone and no further source tried.
func TestBumpTampered(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	data, err := os.ReadFile(fx.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	n := newFakeNet(t)
	u := UpstreamURLs("3.0.20")
	n.blob(u[0], data, "application/octet-stream")
	n.file(u[0]+".asc", fx.Signature)
	n.file(u[1], fx.Tarball) // a good copy that must not be reached
	n.file(u[1]+".asc", fx.Signature)

	before := withoutRelease(t, bumptest.RepoRecipe(t), "3.0.20")
	path := writeRecipe(t, before)
	staging := t.TempDir()
	_, err = Add(context.Background(), Options{Recipe: path, Version: "3.0.20", Fetch: fetch.Options{Transport: n}, TempDir: staging})
	if !errors.Is(err, signature.ErrBadSignature) {
		t.Fatalf("err = %v, want ErrBadSignature", err)
	}
	for _, want := range []string{"openssl-3.0.20.tar.gz", u[0]} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	assertFile(t, path, before)
	assertEmpty(t, staging)
	for _, r := range n.requested() {
		if strings.HasPrefix(r, u[1]) {
			t.Errorf("tried %s after a bad signature", r)
		}
	}
}

// TestBumpRelabelledPinned: the genuine 4.0.2 tarball and signature served
// as openssl-4.0.3.* from the release URL. The recipe pins those bytes as
// 4.0.2, so the bump stops there, naming both versions, with the recipe,
// the cache and the staging directory untouched and the next source not
// tried.
func TestBumpRelabelledPinned(t *testing.T) {
	fx := testfixture.Get(t, "4.0.2")
	n := newFakeNet(t)
	n.release("4.0.3", fx.Tarball, fx.Signature)
	u := UpstreamURLs("4.0.3")
	n.file(u[1], fx.Tarball)
	n.file(u[1]+".asc", fx.Signature)
	orig := bumptest.RepoRecipe(t)
	path := writeRecipe(t, orig)
	cache, staging := t.TempDir(), t.TempDir()

	_, err := Add(context.Background(), Options{
		Recipe:    path,
		Version:   "4.0.3",
		Fetch:     fetch.Options{Transport: n, CacheDir: cache},
		SeedCache: true,
		TempDir:   staging,
	})
	if !errors.Is(err, ErrRelabelled) {
		t.Fatalf("err = %v, want ErrRelabelled", err)
	}
	want := "bump 4.0.3: refusing openssl-4.0.3.tar.gz from " + u[0] + ": already pinned as another release: sha256 " +
		fx.SHA256 + " is OpenSSL 4.0.2 in " + path + ", so it cannot be OpenSSL 4.0.3"
	if err.Error() != want {
		t.Errorf("error:\n%v\nwant\n%s", err, want)
	}
	assertFile(t, path, orig)
	assertEmpty(t, cache)
	assertEmpty(t, staging)
	for _, r := range n.requested() {
		if strings.HasPrefix(r, u[1]) {
			t.Errorf("tried %s after a relabelled tarball", r)
		}
	}
}

// TestBumpRelabelledUnpinned: each real release, with its signature, in a
// mirror directory under the next patch release's name, offline, bumped into
// a recipe that does not pin it (so the digest check cannot see it and the
// signature verifies). The tarball's top-level directory gives it away; the
// recipe (whose default the relabelled 4.0.2 would have taken over), the
// cache and the staging directory stay untouched.
func TestBumpRelabelledUnpinned(t *testing.T) {
	for _, tc := range []struct{ real, claimed, dflt string }{
		{"4.0.2", "4.0.3", "3.5.7"},
		{"3.5.7", "3.5.8", "4.0.2"},
		{"3.0.20", "3.0.21", "4.0.2"},
	} {
		t.Run(tc.real+" as "+tc.claimed, func(t *testing.T) {
			fx := testfixture.Get(t, tc.real)
			mirror := t.TempDir()
			for _, p := range []string{fx.Tarball, fx.Signature} {
				relabelled := strings.Replace(filepath.Base(p), tc.real, tc.claimed, 1)
				if err := os.Symlink(p, filepath.Join(mirror, relabelled)); err != nil {
					t.Fatal(err)
				}
			}
			before := withoutRelease(t, bumptest.RepoRecipe(t), tc.real)
			if tc.dflt != "4.0.2" {
				before = withDefault(t, before, tc.dflt)
			}
			// Without the recipe's known-release lines (which would refuse
			// 4.0.2 as 4.0.3 by its sha256 first, TestBumpKnownRelease):
			// the identity alone must tell.
			before = regexp.MustCompile(`(?m)^# not pinned: .*\n`).ReplaceAllString(before, "")
			path := writeRecipe(t, before)
			cache, staging := t.TempDir(), t.TempDir()
			var log bytes.Buffer
			_, err := Add(context.Background(), Options{
				Recipe:    path,
				Version:   tc.claimed,
				Fetch:     fetch.Options{Transport: noNet{t}, Mirror: mirror, Offline: true, CacheDir: cache},
				SeedCache: true,
				TempDir:   staging,
				Log:       &log,
			})
			if !errors.Is(err, source.ErrIdentity) {
				t.Fatalf("err = %v, want source.ErrIdentity\nlog:\n%s", err, log.String())
			}
			for _, want := range []string{
				"bump " + tc.claimed + ": refusing openssl-" + tc.claimed + ".tar.gz from file://" + filepath.ToSlash(mirror),
				`member "openssl-` + tc.real + `/": not the release it is named as: top-level directory "openssl-` + tc.real + `/", want "openssl-` + tc.claimed + `/"`,
			} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			// The signature did verify: only the identity caught it.
			if !strings.Contains(log.String(), "signature ") {
				t.Errorf("log shows no verified signature:\n%s", log.String())
			}
			assertFile(t, path, before)
			assertEmpty(t, cache)
			assertEmpty(t, staging)
		})
	}
}

// TestBumpUnknownSigner: a valid signature by a key that is not pinned.
func TestBumpUnknownSigner(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	e, err := openpgp.NewEntity("Mallory", "", "mallory@example.org", nil)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := os.Open(fx.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	var asc bytes.Buffer
	err = openpgp.ArmoredDetachSign(&asc, e, tb, nil)
	tb.Close()
	if err != nil {
		t.Fatal(err)
	}
	n := newFakeNet(t)
	u := UpstreamURLs("3.0.20")[0]
	n.file(u, fx.Tarball)
	n.blob(u+".asc", asc.Bytes(), "text/plain")

	before := withoutRelease(t, bumptest.RepoRecipe(t), "3.0.20")
	path := writeRecipe(t, before)
	_, err = Add(context.Background(), Options{Recipe: path, Version: "3.0.20", Fetch: fetch.Options{Transport: n}})
	if !errors.Is(err, signature.ErrUnknownSigner) {
		t.Fatalf("err = %v, want ErrUnknownSigner", err)
	}
	sk, ok := e.SigningKey(time.Now())
	if !ok {
		t.Fatal("generated key cannot sign")
	}
	if id := fmt.Sprintf("%016X", sk.PublicKey.KeyId); !strings.Contains(err.Error(), id) {
		t.Errorf("error does not name key id %s: %v", id, err)
	}
	assertFile(t, path, before)
}

// TestBumpNotFound: every source answers 404; the error lists them all.
func TestBumpNotFound(t *testing.T) {
	n := newFakeNet(t)
	orig := bumptest.RepoRecipe(t)
	path := writeRecipe(t, orig)
	mirror := n.srv.URL + "/mirror"
	_, err := Add(context.Background(), Options{
		Recipe:  path,
		Version: "9.9.9",
		Fetch:   fetch.Options{Transport: n, Mirror: mirror},
	})
	if !errors.Is(err, fetch.ErrNotFound) || !errors.Is(err, fetch.ErrAllFailed) {
		t.Fatalf("err = %v, want ErrNotFound and ErrAllFailed", err)
	}
	msg := err.Error()
	for _, want := range append([]string{"bump 9.9.9", mirror + "/openssl-9.9.9.tar.gz: HTTP 404"}, UpstreamURLs("9.9.9")...) {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	assertFile(t, path, orig)
}

// TestBumpNoSignature: a source with the tarball but no .asc beside it is
// a failed source, and the error says so.
func TestBumpNoSignature(t *testing.T) {
	n := newFakeNet(t)
	u := UpstreamURLs("9.9.9")
	n.blob(u[0], []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}, "application/gzip")
	orig := bumptest.RepoRecipe(t)
	path := writeRecipe(t, orig)
	_, err := Add(context.Background(), Options{Recipe: path, Version: "9.9.9", Fetch: fetch.Options{Transport: n}})
	if err == nil || !strings.Contains(err.Error(), u[0]+": tarball served (8 bytes), but its signature "+u[0]+".asc: HTTP 404") {
		t.Fatalf("err = %v", err)
	}
	assertFile(t, path, orig)
}

// TestBumpOfflineNoMirror: offline with only network sources fails without
// touching the network.
func TestBumpOfflineNoMirror(t *testing.T) {
	orig := bumptest.RepoRecipe(t)
	path := writeRecipe(t, orig)
	_, err := Add(context.Background(), Options{Recipe: path, Version: "9.9.9", Fetch: fetch.Options{Transport: noNet{t}, Offline: true}})
	if !errors.Is(err, fetch.ErrOffline) {
		t.Fatalf("err = %v, want ErrOffline", err)
	}
	assertFile(t, path, orig)
}

// TestBumpExists refuses a version the recipe has, before any download.
func TestBumpExists(t *testing.T) {
	orig := bumptest.RepoRecipe(t)
	path := writeRecipe(t, orig)
	_, err := Add(context.Background(), Options{Recipe: path, Version: "4.0.2", Fetch: fetch.Options{Transport: noNet{t}}})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	assertFile(t, path, orig)
}

func TestBumpBadArguments(t *testing.T) {
	path := writeRecipe(t, bumptest.RepoRecipe(t))
	for _, o := range []Options{
		{Recipe: path},
		{Recipe: path, Version: "4.0.3", Series: "4.0"},
		{Recipe: path, Version: "4.0"},
		{Recipe: path, Version: "../4.0.3"},
		{Recipe: path, Series: "4"},
		{Recipe: path, Series: "4.0", Fetch: fetch.Options{Offline: true}},
		{Recipe: filepath.Join(t.TempDir(), "missing.toml"), Version: "4.0.3"},
	} {
		o.Fetch.Transport = noNet{t}
		if _, err := Add(context.Background(), o); err == nil {
			t.Errorf("Add(%+v) succeeded", o)
		}
	}
	// An invalid recipe is refused before anything else happens.
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("default = \"1.0.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Add(context.Background(), Options{Recipe: bad, Version: "4.0.3", Fetch: fetch.Options{Transport: noNet{t}}}); !errors.Is(err, recipe.ErrInvalid) {
		t.Errorf("invalid recipe: err = %v, want recipe.ErrInvalid", err)
	}
}

// TestBumpSkipsHTMLPage: a source answering 200 with an HTML page (a
// captive portal, say) is skipped for the next one.
func TestBumpSkipsHTMLPage(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	n := newFakeNet(t)
	u := UpstreamURLs("3.0.20")
	n.blob(u[0], []byte("<!DOCTYPE html><html>Sign in to the Wi-Fi</html>"), "text/html")
	n.file(u[1], fx.Tarball)
	n.file(u[1]+".asc", fx.Signature)
	path := writeRecipe(t, withoutRelease(t, bumptest.RepoRecipe(t), "3.0.20"))
	var log bytes.Buffer
	diffRes, err := Add(context.Background(), Options{Recipe: path, Version: "3.0.20", Fetch: fetch.Options{Transport: n}, DryRun: true, Log: &log})
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	diff := diffRes.Diff
	if !strings.Contains(diff, "+sha256 = \""+fx.SHA256+"\"") {
		t.Errorf("diff:\n%s", diff)
	}
	if !strings.Contains(log.String(), "from "+u[1]) {
		t.Errorf("log does not say the tarball came from %s:\n%s", u[1], log.String())
	}
}

// listing pages in GitHub's shape: newest first, with drafts, pre-releases
// and alphas mixed in, and the 3.0 series only on page two.
const listingPage1 = `[
  {"tag_name": "openssl-4.0.2", "draft": false, "prerelease": false},
  {"tag_name": "openssl-3.0.99", "draft": true, "prerelease": false},
  {"tag_name": "openssl-3.0.98", "draft": false, "prerelease": true},
  {"tag_name": "openssl-3.6.0-alpha1", "draft": false, "prerelease": true},
  {"tag_name": "openssl-3.5.7", "draft": false, "prerelease": false},
  {"tag_name": "openssl-3.5.6", "draft": false, "prerelease": false}
]`

const listingPage2 = `[
  {"tag_name": "openssl-3.0.19", "draft": false, "prerelease": false},
  {"tag_name": "openssl-3.0.20", "draft": false, "prerelease": false},
  {"tag_name": "openssl-3.0.2", "draft": false, "prerelease": false},
  {"tag_name": "OpenSSL_1_1_1w", "draft": false, "prerelease": false}
]`

const page2URL = "https://api.github.com/repositories/7634677/releases?per_page=100&page=2"

func serveListing(n *fakeNet) {
	n.blob(DefaultListingURL, []byte(listingPage1), "application/json")
	n.mu.Lock()
	n.links[key(DefaultListingURL)] = `<` + page2URL + `>; rel="next", <https://api.github.com/repositories/7634677/releases?per_page=100&page=2>; rel="last"`
	n.mu.Unlock()
	n.blob(page2URL, []byte(listingPage2), "application/json")
}

// TestBumpSeries takes the newest 3.0 release from the listing (3.0.20, on
// page two) and bumps it from the real files.
func TestBumpSeries(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	n := newFakeNet(t)
	serveListing(n)
	n.release("3.0.20", fx.Tarball, fx.Signature)
	path := writeRecipe(t, withoutRelease(t, bumptest.RepoRecipe(t), "3.0.20"))

	diffRes, err := Add(context.Background(), Options{Recipe: path, Series: "3.0", Fetch: fetch.Options{Transport: n}})
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	diff := diffRes.Diff
	if !strings.Contains(diff, "+version = \"3.0.20\"") {
		t.Errorf("diff:\n%s", diff)
	}
	b, _ := os.ReadFile(path)
	r, err := recipe.Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := r.Release("3.0.20"); err != nil || rel.SHA256 != fx.SHA256 || rel.Size != fx.Size {
		t.Errorf("release 3.0.20 = %+v, %v", rel, err)
	}
	if got := n.requested(); len(got) < 2 || !strings.HasPrefix(got[0], DefaultListingURL+"?") || got[1] != page2URL {
		t.Errorf("requests = %v, want the listing, then its page 2", got)
	}

	// Run again: 3.0.20 is now there, so the weekly run has nothing to do.
	if _, err := Add(context.Background(), Options{Recipe: path, Series: "3.0", Fetch: fetch.Options{Transport: n}}); !errors.Is(err, ErrExists) {
		t.Errorf("second run: err = %v, want ErrExists", err)
	}
}

func TestLatestInSeries(t *testing.T) {
	n := newFakeNet(t)
	serveListing(n)
	client := fetch.HTTPClient(fetch.Options{Transport: n})
	ctx := context.Background()
	for series, want := range map[string]string{"3.5": "3.5.7", "4.0": "4.0.2", "3.0": "3.0.20"} {
		got, err := (Listing{URL: DefaultListingURL, Client: client}).Latest(ctx, series)
		if err != nil || got != want {
			t.Errorf("Latest(%s) = %q, %v; want %s", series, got, err, want)
		}
	}
	if _, err := (Listing{URL: DefaultListingURL, Client: client}).Latest(ctx, "3.6"); !errors.Is(err, ErrNoRelease) {
		t.Errorf("3.6 (only an alpha): err = %v, want ErrNoRelease", err)
	}
	if _, err := (Listing{URL: "https://api.github.com/missing", Client: client}).Latest(ctx, "3.0"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("missing listing: err = %v", err)
	}
	n.blob("https://api.github.com/html", []byte("<html>rate limited</html>"), "text/html")
	if _, err := (Listing{URL: "https://api.github.com/html", Client: client}).Latest(ctx, "3.0"); err == nil || !strings.Contains(err.Error(), "not a GitHub releases list") {
		t.Errorf("HTML listing: err = %v", err)
	}
}

func TestNextLink(t *testing.T) {
	for h, want := range map[string]string{
		``: "",
		`<https://x/2>; rel="next", <https://x/9>; rel="last"`: "https://x/2",
		`<https://x/1>; rel="prev", <https://x/3>; rel="next"`: "https://x/3",
		`<https://x/9>; rel="last"`:                            "",
		`<https://x/4>; rel=next`:                              "https://x/4",
	} {
		if got := nextLink(h); got != want {
			t.Errorf("nextLink(%q) = %q, want %q", h, got, want)
		}
	}
}

// TestBumpRecipeKey: a consumer's recipe that pins its own release key
// (release_keys) takes a release signed by that key, which osslbuild's
// keys/ do not hold: the new [[release]] names it as its signer, and the
// recipe stays valid.
func TestBumpRecipeKey(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	k := sigtest.NewKey(t, "OpenSSL next")
	sigPath := filepath.Join(t.TempDir(), "openssl-3.0.20.tar.gz.asc")
	os.WriteFile(sigPath, k.Sign(t, fx.Tarball), 0o644)
	n := newFakeNet(t)
	n.release("3.0.20", fx.Tarball, sigPath)

	example, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "recipes", "examples", "python-build-standalone.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := strings.Replace(string(example), "schema = 1\n", fmt.Sprintf("schema = 1\n\nrelease_keys = [{ path = \"keys/openssl-next.asc\", fingerprint = %q }]\n", k.Fingerprint()), 1)
	testfixture.WriteTree(t, dir, map[string]string{"osslbuild.toml": text, "keys/openssl-next.asc": string(k.Armored(t))})
	path := filepath.Join(dir, "osslbuild.toml")
	if _, err := Add(context.Background(), Options{Recipe: path, Version: "3.0.20", Fetch: fetch.Options{Transport: n}, KeepDefault: true}); err != nil {
		t.Fatal(err)
	}
	r, err := recipe.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := r.Release("3.0.20")
	if err != nil || !slices.Equal(rel.Signers, []string{k.Fingerprint()}) || rel.SHA256 != fx.SHA256 {
		t.Errorf("bumped release %+v, %v; want signed by the recipe's key %s", rel, err, k.Fingerprint())
	}
}

// TestBumpKnownRelease: a release the recipe lists as known and not pinned
// (its sha256 and size from another signed source) is bumped only when the
// download has that sha256 and size; then its line goes, with the lines of
// older releases of its series, and the other series' lines stay. A
// download that disagrees is refused, naming both digests and the line,
// and the recipe is left as it was.
func TestBumpKnownRelease(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	line := func(v, sha string, size int64) string {
		return fmt.Sprintf("# not pinned: %s sha256 %s %d bytes\n", v, sha, size)
	}
	header := "# Known releases.\n" + line("3.0.19", strings.Repeat("1", 64), 1) + line("3.0.20", fx.SHA256, fx.Size) + line("3.5.9", strings.Repeat("2", 64), 2) + "\n"
	before := header + withoutRelease(t, bumptest.RepoRecipe(t), "3.0.20")
	n := newFakeNet(t)
	n.release("3.0.20", fx.Tarball, fx.Signature)

	path := writeRecipe(t, before)
	if _, err := Add(context.Background(), Options{Recipe: path, Version: "3.0.20", Fetch: fetch.Options{Transport: n}}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	for _, k := range recipe.KnownReleases(after) {
		if strings.HasPrefix(k.Version, "3.0.") {
			t.Errorf("known line %+v left after 3.0.20 is pinned", k)
		}
	}
	if got, want := len(recipe.KnownReleases(after)), len(recipe.KnownReleases([]byte(before)))-2; got != want {
		t.Errorf("%d known lines after the bump, want %d (the 3.0 series' two dropped)", got, want)
	}
	if !strings.HasPrefix(string(after), "# Known releases.\n"+line("3.5.9", strings.Repeat("2", 64), 2)+"\n") {
		t.Errorf("the header after the bump:\n%s", string(after)[:200])
	}

	wrong := strings.Replace(before, line("3.0.20", fx.SHA256, fx.Size), line("3.0.20", strings.Repeat("3", 64), fx.Size), 1)
	path = writeRecipe(t, wrong)
	_, err := Add(context.Background(), Options{Recipe: path, Version: "3.0.20", Fetch: fetch.Options{Transport: n}})
	if !errors.Is(err, ErrKnownMismatch) {
		t.Fatalf("a download the known line disagrees with: %v", err)
	}
	for _, want := range []string{fx.SHA256, strings.Repeat("3", 64), path + ":3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	assertFile(t, path, wrong)
}

// newer orders as OpenSSL numbers releases: a letter release after its
// series' first (go-version read 1.1.1a as a pre-release of 1.1.1).
func TestNewer(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"3.0.10", "3.0.9", true},
		{"3.0.9", "3.0.10", false},
		{"1.1.1a", "1.1.1", true},
		{"1.1.1za", "1.1.1z", true},
		{"3.0.9", "3.0.9", false},
		{"3.0.9", "not a version", true},
		{"not a version", "3.0.9", false},
	} {
		if got := newer(tc.a, tc.b); got != tc.want {
			t.Errorf("newer(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
