package bump

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/testsupport/bumptest"
)

// authRecorder passes requests on to next, recording the Authorization
// header each URL was asked with.
type authRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	auth map[string]string
}

func (a *authRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	if a.auth == nil {
		a.auth = map[string]string{}
	}
	a.auth[r.URL.String()] = r.Header.Get("Authorization")
	a.mu.Unlock()
	return a.next.RoundTrip(r)
}

// TestLatestOf: LatestAndNewer walks the listing once for several series: 3.0 is only on
// page two, so page two is read; a series the listing lacks is absent.
func TestLatestOf(t *testing.T) {
	n := newFakeNet(t)
	serveListing(n)
	l := Listing{Client: fetch.HTTPClient(fetch.Options{Transport: n})}
	got, _, err := l.LatestAndNewer(context.Background(), "", "4.0", "3.5", "3.0", "3.6")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"4.0": "4.0.2", "3.5": "3.5.7", "3.0": "3.0.20"}
	if len(got) != len(want) {
		t.Errorf("LatestAndNewer = %v, want %v", got, want)
	}
	for s, v := range want {
		if got[s] != v {
			t.Errorf("series %s: %q, want %s", s, got[s], v)
		}
	}
	if reqs := n.requested(); len(reqs) != 2 {
		t.Errorf("requests %v, want the listing's two pages", reqs)
	}

	// With only series on page one, page two is never read.
	n2 := newFakeNet(t)
	serveListing(n2)
	if _, _, err := (Listing{Client: fetch.HTTPClient(fetch.Options{Transport: n2})}).LatestAndNewer(context.Background(), "", "4.0", "3.5"); err != nil {
		t.Fatal(err)
	}
	if reqs := n2.requested(); len(reqs) != 1 {
		t.Errorf("requests %v, want page one only", reqs)
	}
	if _, _, err := l.LatestAndNewer(context.Background(), "", "4"); err == nil {
		t.Error("series \"4\" accepted")
	}
}

// TestListingToken: the token goes to the listing's host over https, on
// every page there, and nowhere else: not to a page on another host, not
// over http, and never with a download.
func TestListingToken(t *testing.T) {
	n := newFakeNet(t)
	n.blob(DefaultListingURL, []byte(`[{"tag_name": "openssl-3.5.7"}]`), "application/json")
	other := "https://mirror.example.org/releases?page=3"
	page2 := "https://api.github.com/repositories/7634677/releases?page=2"
	n.mu.Lock()
	n.links[key(DefaultListingURL)] = `<` + page2 + `>; rel="next"`
	n.links[key(page2)] = `<` + other + `>; rel="next"`
	n.mu.Unlock()
	n.blob(page2, []byte(`[]`), "application/json")
	n.blob(other, []byte(`[{"tag_name": "openssl-3.0.20"}]`), "application/json")
	rec := &authRecorder{next: n}
	l := Listing{Client: fetch.HTTPClient(fetch.Options{Transport: rec}), Token: "s3cret"}
	got, _, err := l.LatestAndNewer(context.Background(), "", "3.5", "3.0")
	if err != nil || got["3.0"] != "3.0.20" {
		t.Fatalf("LatestAndNewer = %v, %v", got, err)
	}
	for u, auth := range rec.auth {
		want := ""
		if strings.HasPrefix(u, "https://api.github.com/") {
			want = "Bearer s3cret"
		}
		if auth != want {
			t.Errorf("%s asked with Authorization %q, want %q", u, auth, want)
		}
	}
	if len(rec.auth) != 3 {
		t.Errorf("requests %v, want three pages", rec.auth)
	}

	// Over http, even to the listing's own host, no token.
	rec.auth = nil
	plain := "http://api.github.com/repos/openssl/openssl/releases"
	n.blob(plain, []byte(`[{"tag_name": "openssl-3.5.7"}]`), "application/json")
	if _, err := (Listing{URL: plain, Client: fetch.HTTPClient(fetch.Options{Transport: rec}), Token: "s3cret"}).Latest(context.Background(), "3.5"); err != nil {
		t.Fatal(err)
	}
	for u, auth := range rec.auth {
		if auth != "" {
			t.Errorf("%s (http) asked with Authorization %q", u, auth)
		}
	}
}

// TestBumpSeriesTokenNotDownloads: recipe:bump X.Y with a token sends it
// with the listing only, never with the tarball or signature downloads.
func TestBumpSeriesTokenNotDownloads(t *testing.T) {
	n := newFakeNet(t)
	serveListing(n)
	// No tarball is served: the downloads fail, which is enough to see
	// what they were asked with.
	rec := &authRecorder{next: n}
	path := writeRecipe(t, withoutRelease(t, bumptest.RepoRecipe(t), "3.0.20"))
	_, err := Add(context.Background(), Options{Recipe: path, Series: "3.0", Fetch: fetch.Options{Transport: rec}, ListingToken: "s3cret"})
	if err == nil {
		t.Fatal("bump succeeded with nothing to download")
	}
	var listing, downloads int
	for u, auth := range rec.auth {
		switch {
		case strings.HasPrefix(u, "https://api.github.com/"):
			listing++
			if auth != "Bearer s3cret" {
				t.Errorf("listing %s asked with Authorization %q", u, auth)
			}
		default:
			downloads++
			if auth != "" {
				t.Errorf("download %s asked with Authorization %q", u, auth)
			}
		}
	}
	if listing == 0 || downloads == 0 {
		t.Errorf("requests %v: want the listing and the downloads", rec.auth)
	}
}

// TestListingErrors: every way the listing can fail wraps ErrListing and
// says what happened at which URL; a used-up rate limit says until when and
// what to do.
func TestListingErrors(t *testing.T) {
	// https, so that a token is sent (see TestListingToken).
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/limited":
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", "1798675200")
			http.Error(w, `{"message": "API rate limit exceeded"}`, http.StatusForbidden)
		case "/forbidden":
			http.Error(w, "no", http.StatusForbidden)
		case "/html":
			w.Write([]byte("<html>sign in</html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	gone := closed.URL + "/releases"
	closed.Close()

	for _, tc := range []struct {
		url, token string
		want       []string
		not        string
	}{
		{gone, "", []string{"cannot read the release listing " + gone + "?per_page=100: unreachable: ", "connection refused"}, ""},
		{srv.URL + "/missing", "", []string{"/missing?per_page=100: HTTP 404 Not Found"}, ""},
		{srv.URL + "/limited", "", []string{"HTTP 403 Forbidden: GitHub's API rate limit is used up until 2026-12-31T00:00:00Z (anonymous requests get 60 an hour per address; set GITHUB_TOKEN)"}, ""},
		{srv.URL + "/limited", "tok", []string{"rate limit is used up until 2026-12-31T00:00:00Z"}, "set GITHUB_TOKEN"},
		{srv.URL + "/forbidden", "", []string{"HTTP 403 Forbidden"}, "rate limit"},
		{srv.URL + "/html", "", []string{"not a GitHub releases list (starting \"<html>sign in</html>\")"}, ""},
		{"ftp://example.org/releases", "", []string{`"ftp://example.org/releases" is not an http(s) URL`}, ""},
	} {
		_, err := Listing{URL: tc.url, Client: srv.Client(), Token: tc.token}.Latest(context.Background(), "3.5")
		if !errors.Is(err, ErrListing) {
			t.Errorf("%s: err = %v, want ErrListing", tc.url, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", tc.url, w, err)
			}
		}
		if tc.not != "" && strings.Contains(err.Error(), tc.not) {
			t.Errorf("%s: error says %q:\n%v", tc.url, tc.not, err)
		}
	}
}

// TestBumpSeriesListingUnreachable: recipe:bump X.Y with no listing says
// so, names the URL, says what to do instead, and leaves the recipe alone.
func TestBumpSeriesListingUnreachable(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	gone := closed.URL + "/releases"
	closed.Close()
	orig := bumptest.RepoRecipe(t)
	path := writeRecipe(t, orig)
	_, err := Add(context.Background(), Options{Recipe: path, Series: "3.5", ListingURL: gone})
	if !errors.Is(err, ErrListing) {
		t.Fatalf("err = %v, want ErrListing", err)
	}
	want := "bump: series 3.5: cannot read the release listing " + gone + "?per_page=100: unreachable: "
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; without it the newest 3.5 release is unknown: give the version instead (recipe:bump 3.5.N)") {
		t.Errorf("error:\n%v\nwant it to start %q and say what to do", err, want)
	}
	assertFile(t, path, orig)
}
