package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// assertNoFiles fails if dir holds anything: a failed discovery must leave
// nothing behind.
func assertNoFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind in %s: %s", dir, e.Name())
	}
}

// blob serves b with contentType for any path.
func blob(b []byte, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Write(b)
	}
}

func TestDiscoverFromMirror(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	dir := filepath.Dir(r.Tarball)
	upstream := serve(t, serveDir(dir))
	httpMirror := serve(t, serveDir(dir))
	for _, tc := range []struct {
		name, mirror, wantURL string
	}{
		{"directory", dir, fileURL(r.Tarball)},
		{"http", httpMirror.URL + "/dl", httpMirror.url(tarName)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFetcher(t, Options{Mirror: tc.mirror})
			stage := filepath.Join(f.CacheDir(), "tmp")
			d, err := f.Discover(context.Background(), Discovery{Name: tarName, URLs: []string{upstream.url(tarName)}, MaxSize: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			if d.SHA256 != file.SHA256 || d.Size != file.Size || d.URL != tc.wantURL || d.Name != tarName || len(d.Failed) != 0 {
				t.Errorf("Discover = %+v; want sha256 %s, size %d, URL %s", d, file.SHA256, file.Size, tc.wantURL)
			}
			if got := sha256File(t, d.Path); got != file.SHA256 {
				t.Errorf("%s has sha256 %s, want %s", d.Path, got, file.SHA256)
			}
			if filepath.Dir(d.Path) != stage {
				t.Errorf("discovered file %s is not in %s", d.Path, stage)
			}

			sig, err := f.DiscoverSignature(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(r.Signature)
			if got, _ := os.ReadFile(sig.Path); !bytes.Equal(got, want) || sig.URL != tc.wantURL+".asc" || sig.Name != tarName+".asc" || sig.Size != int64(len(want)) {
				t.Errorf("DiscoverSignature = %+v, want the fixture's signature from %s.asc", sig, tc.wantURL)
			}
			if filepath.Dir(sig.Path) != stage {
				t.Errorf("signature %s is not beside the tarball in %s", sig.Path, stage)
			}
			os.Remove(d.Path)
			os.Remove(sig.Path)
			assertNoFiles(t, stage)
		})
	}
	upstream.wantTotal(t, 0, "upstream; the mirror comes first")
}

// TestDiscoverFallback: a 404, then a 503 that heals on retry; the failures
// are reported with the result.
func TestDiscoverFallback(t *testing.T) {
	t.Parallel()
	data := []byte("\x1f\x8b not really a tarball, but not HTML either")
	missing := serve(t, status(404))
	flaky := serve(t, failFirst(2, 503, blob(data, "application/gzip")))
	f := newFetcher(t, Options{})
	d, err := f.Discover(context.Background(), Discovery{Name: tarName, URLs: []string{missing.url(tarName), flaky.url(tarName)}, MaxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(d.Path)
	if d.URL != flaky.url(tarName) || d.Size != int64(len(data)) {
		t.Errorf("Discover = %+v, want %d bytes from %s", d, len(data), flaky.url(tarName))
	}
	if got, _ := os.ReadFile(d.Path); !bytes.Equal(got, data) {
		t.Errorf("discovered %q, want %q", got, data)
	}
	if filepath.Dir(d.Path) != filepath.Join(f.CacheDir(), "tmp") {
		t.Errorf("with no Dir, %s is not in the cache's staging area", d.Path)
	}
	if len(d.Failed) != 1 || d.Failed[0].URL != missing.url(tarName) || !errors.Is(d.Failed[0].Err, ErrNotFound) || d.Failed[0].Tries != 1 {
		t.Errorf("Failed = %+v, want the 404 from %s, tried once", d.Failed, missing.url(tarName))
	}
	if n := flaky.count(tarName); n != 3 {
		t.Errorf("flaky source asked %d times, want 3 (two 503s, then 200)", n)
	}
}

func TestDiscoverRefused(t *testing.T) {
	t.Parallel()
	const limit = 1000
	cases := []struct {
		name    string
		handler http.HandlerFunc
		is      []error
		msgs    []string
	}{
		{"HTML page", blob([]byte("<!DOCTYPE html><html>Sign in to the Wi-Fi</html>"), "text/html"),
			nil, []string{"not " + tarName + " (48 bytes)", "looks like an HTML page"}},
		{"HTML page, no type", blob([]byte("\n  <html>rate limited</html>"), ""),
			nil, []string{"looks like an HTML page"}},
		{"too large", filler(limit+1, true),
			[]error{ErrTooLarge}, []string{"too large: 1001 bytes, limit 1000"}},
		{"too large, no length", filler(4*limit, false),
			[]error{ErrTooLarge}, []string{"too large: more than 1000 bytes"}},
		{"empty", func(w http.ResponseWriter, r *http.Request) {}, nil, []string{"empty file"}},
		{"404", status(404), []error{ErrNotFound}, []string{"HTTP 404 Not Found"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tc.handler)
			f := newFetcher(t, Options{})
			d, err := f.Discover(context.Background(), Discovery{Name: tarName, URLs: []string{srv.url(tarName)}, MaxSize: limit})
			wantErr(t, err, append(tc.is, ErrAllFailed), append(tc.msgs, "fetch "+tarName+": all 1 source failed:\n  "+srv.url(tarName)+": "))
			if d.Path != "" {
				t.Errorf("result %+v on failure", d)
			}
			if srv.count(tarName) != 1 {
				t.Errorf("asked %d times; a refusal is not retried", srv.count(tarName))
			}
			assertNoFiles(t, filepath.Join(f.CacheDir(), "tmp"))
		})
	}
}

// TestDiscoverAccept: a source whose file the caller refuses counts as
// failed; its file is removed and the next source serves.
func TestDiscoverAccept(t *testing.T) {
	t.Parallel()
	bad := serve(t, blob([]byte("PK\x03\x04 a zip"), "application/zip"))
	good := serve(t, blob([]byte("\x1f\x8b gzip"), "application/gzip"))
	var seen []string
	accept := func(ctx context.Context, d Discovered) error {
		seen = append(seen, d.Path)
		if b, _ := os.ReadFile(d.Path); !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			// Quotes a retryable-looking error: it must not be retried.
			return fmt.Errorf("not a gzip file: %w", &transferError{what: "timeout", got: -1, total: -1, err: errors.New("x")})
		}
		return nil
	}
	f := newFetcher(t, Options{})
	d, err := f.Discover(context.Background(), Discovery{Name: tarName, URLs: []string{bad.url(tarName), good.url(tarName)}, MaxSize: 100, Accept: accept})
	if err != nil {
		t.Fatal(err)
	}
	if d.URL != good.url(tarName) || len(d.Failed) != 1 || !strings.Contains(d.Failed[0].Err.Error(), "not a gzip file") || d.Failed[0].Tries != 1 {
		t.Errorf("Discover = %+v", d)
	}
	if bad.count(tarName) != 1 {
		t.Errorf("refused source asked %d times, want 1", bad.count(tarName))
	}
	if _, err := os.Stat(seen[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused file %s not removed: %v", seen[0], err)
	}
	os.Remove(d.Path)
	assertNoFiles(t, filepath.Join(f.CacheDir(), "tmp"))
}

func TestDiscoverCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte{0x1f}, 1<<20))
		w.(http.Flusher).Flush()
		cancel() // mid-download: the client has headers and some bytes
		<-r.Context().Done()
	}))
	next := serve(t, blob([]byte("\x1f\x8b"), ""))
	f := newFetcher(t, Options{})
	start := time.Now()
	_, err := f.Discover(ctx, Discovery{Name: tarName, URLs: []string{srv.url(tarName), next.url(tarName)}, MaxSize: 1 << 30})
	wantErr(t, err, []error{context.Canceled}, []string{"fetch " + tarName + " from " + srv.url(tarName)})
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancellation took %v", time.Since(start))
	}
	next.wantTotal(t, 0, "next source tried after cancellation")
	assertNoFiles(t, filepath.Join(f.CacheDir(), "tmp"))

	// Canceled before the start: no request at all.
	_, err = newFetcher(t, Options{}).Discover(ctx, Discovery{Name: tarName, URLs: []string{next.url(tarName)}, MaxSize: 10})
	wantErr(t, err, []error{context.Canceled}, nil)
	next.wantTotal(t, 0, "canceled discovery")
}

func TestDiscoverOffline(t *testing.T) {
	t.Parallel()
	r, _ := fixture(t)
	srv := serve(t, serveDir(filepath.Dir(r.Tarball)))
	f := newFetcher(t, Options{Offline: true})
	stage := filepath.Join(f.CacheDir(), "tmp")
	_, err := f.Discover(context.Background(), Discovery{Name: tarName, URLs: []string{srv.url(tarName)}, MaxSize: 1 << 30})
	wantErr(t, err, []error{ErrOffline, ErrAllFailed}, []string{"(1 network source not tried: offline)"})
	// A discovered file with a network origin: its signature is not fetched.
	_, err = f.DiscoverSignature(context.Background(), Discovered{Name: tarName, Path: filepath.Join(stage, "x"), URL: srv.url(tarName)})
	wantErr(t, err, []error{ErrOffline}, []string{"fetch " + tarName + ".asc: offline"})
	srv.wantTotal(t, 0, "offline discovery")
	assertNoFiles(t, stage)
}

func TestDiscoverSignatureMissing(t *testing.T) {
	t.Parallel()
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if path.Ext(r.URL.Path) == ".asc" {
			status(404)(w, r)
			return
		}
		w.Write([]byte("\x1f\x8b"))
	}))
	f := newFetcher(t, Options{})
	d, err := f.Discover(context.Background(), Discovery{Name: tarName, URLs: []string{srv.url(tarName)}, MaxSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.DiscoverSignature(context.Background(), d)
	wantErr(t, err, []error{ErrNotFound, ErrAllFailed}, []string{"fetch " + tarName + ".asc: all 1 source failed:\n  " + srv.url(tarName) + ".asc: HTTP 404"})
	os.Remove(d.Path)
	assertNoFiles(t, filepath.Join(f.CacheDir(), "tmp"))
}

// roundTripFunc lets a test stand in for the network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransport: Options.Transport carries the requests of Discover (and
// of HTTPClient's client).
func TestTransport(t *testing.T) {
	t.Parallel()
	var asked []string
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		asked = append(asked, r.URL.String())
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(strings.NewReader("\x1f\x8b")), ContentLength: 2, Request: r}, nil
	})
	const u = "https://example.invalid/openssl-4.0.2.tar.gz"
	d, err := newFetcher(t, Options{Transport: tr}).Discover(context.Background(), Discovery{Name: tarName, URLs: []string{u}, MaxSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(d.Path)
	resp, err := HTTPClient(Options{Transport: tr}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(asked) != 2 || asked[0] != u || asked[1] != u {
		t.Errorf("transport saw %v, want %s twice", asked, u)
	}
}

func TestDiscoverInvalidInput(t *testing.T) {
	t.Parallel()
	f := newFetcher(t, Options{})
	for _, want := range []Discovery{
		{Name: "", URLs: []string{"https://x/y"}, MaxSize: 1},
		{Name: "../x.tar.gz", MaxSize: 1},
		{Name: ".hidden", MaxSize: 1},
		{Name: tarName, MaxSize: 0},
		{Name: tarName, MaxSize: 1, URLs: []string{"ftp://x/y"}},
	} {
		if _, err := f.Discover(context.Background(), want); err == nil {
			t.Errorf("Discover(%+v) succeeded", want)
		}
	}
	if _, err := f.DiscoverSignature(context.Background(), Discovered{Name: tarName}); err == nil {
		t.Error("DiscoverSignature with no origin succeeded")
	}
}
