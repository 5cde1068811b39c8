package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/keys"
)

const tarName = "openssl-4.0.2.tar.gz"

// ---- helpers ----

// fixture is the real OpenSSL 4.0.2 release and the File that pins it.
func fixture(t *testing.T) (testfixture.Release, File) {
	t.Helper()
	r := testfixture.Get(t, "4.0.2")
	return r, File{Name: tarName, SHA256: r.SHA256, Size: r.Size}
}

// newFetcher returns a Fetcher on a fresh cache with fast retries, and checks
// when the test ends that nothing half-written or unverified is in the cache.
func newFetcher(t *testing.T, opts Options) *Fetcher {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
		t.Cleanup(func() { assertClean(t, opts.CacheDir) })
	}
	if opts.Backoff == nil {
		opts.Backoff = []time.Duration{time.Millisecond, 2 * time.Millisecond}
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 10 * time.Second
	}
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// assertClean fails if the cache holds a temporary file, or a file under
// sha256/<hex>/ whose digest is not <hex> (signatures and origin records aside).
func assertClean(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left in cache: %s", p)
			return nil
		}
		if strings.HasSuffix(p, ".asc") || strings.HasSuffix(p, originSuffix) {
			return nil
		}
		want := filepath.Base(filepath.Dir(p))
		if got := sha256File(t, p); got != want {
			t.Errorf("cache file %s has sha256 %s, not the %s its path claims", p, got, want)
		}
		return nil
	})
	if err != nil {
		t.Errorf("walk cache: %v", err)
	}
}

func sha256File(t *testing.T, p string) string {
	t.Helper()
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// testServer is a loopback HTTP server that counts requests per path.
type testServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func serve(t *testing.T, h http.Handler) *testServer {
	t.Helper()
	s := &testServer{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// served returns file with its one URL on a new server running h.
func served(t *testing.T, file File, h http.HandlerFunc) (File, *testServer) {
	t.Helper()
	file, srvs := servedBy(t, file, h)
	return file, srvs[0]
}

// servedBy returns file with one URL for each of hs, in order, each on a
// new server, and the servers.
func servedBy(t *testing.T, file File, hs ...http.HandlerFunc) (File, []*testServer) {
	t.Helper()
	var srvs []*testServer
	file.URLs = nil
	for _, h := range hs {
		s := serve(t, h)
		srvs = append(srvs, s)
		file.URLs = append(file.URLs, s.url(tarName))
	}
	return file, srvs
}

// fetched returns a Fetcher made with opts and file, fetched by it.
func fetched(t *testing.T, opts Options, file File) (*Fetcher, Result) {
	t.Helper()
	f := newFetcher(t, opts)
	res, err := f.Fetch(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	return f, res
}

// url is where the server offers name.
func (s *testServer) url(name string) string { return s.URL + "/dl/" + name }

func (s *testServer) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits["/dl/"+name]
}

func (s *testServer) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.hits {
		n += c
	}
	return n
}

// wantTotal fails the test unless the server has had want requests in all;
// what says whose requests they are.
func (s *testServer) wantTotal(t *testing.T, want int, what string) {
	t.Helper()
	if got := s.total(); got != want {
		t.Errorf("%s: server saw %d requests, want %d", what, got, want)
	}
}

// serveDir serves files from dir by base name, streaming from disk.
func serveDir(dir string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		fh, err := os.Open(filepath.Join(dir, path.Base(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer fh.Close()
		http.ServeContent(w, r, path.Base(r.URL.Path), time.Time{}, fh)
	}
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, http.StatusText(code), code) }
}

// filler serves n bytes of "A", declaring their length or, unless declared,
// flushing the headers first so that none is sent.
func filler(n int, declared bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if declared {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		} else {
			w.(http.Flusher).Flush()
		}
		w.Write(bytes.Repeat([]byte("A"), n))
	}
}

// failFirst answers the first n requests with code, then defers to h.
func failFirst(n, code int, h http.Handler) http.HandlerFunc {
	var mu sync.Mutex
	seen := 0
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen++
		fail := seen <= n
		mu.Unlock()
		if fail {
			status(code)(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}
}

// refusedURL is an address nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/dl/" + tarName
}

func fileURL(p string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String() }

func wantErr(t *testing.T, err error, is []error, msgs []string) {
	t.Helper()
	if err == nil {
		t.Fatal("fetch succeeded, want an error")
	}
	for _, target := range is {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = false; err:\n%v", target, err)
		}
	}
	for _, m := range msgs {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error does not contain %q:\n%v", m, err)
		}
	}
}

// verifies is the real signature check for a cached release tarball: OpenPGP
// over its bytes against the keys pinned in keys/.
func verifies(tarball Result) Check {
	return func(ctx context.Context, sig Result) error {
		asc, err := os.ReadFile(sig.Path)
		if err != nil {
			return err
		}
		fh, err := os.Open(tarball.Path)
		if err != nil {
			return err
		}
		defer fh.Close()
		_, err = signature.Verifier{}.Verify(ctx, fh, asc, keys.Fingerprints())
		return err
	}
}

func wantFile(t *testing.T, res Result, file File) {
	t.Helper()
	if res.SHA256 != file.SHA256 || res.Size != file.Size {
		t.Errorf("result digest %s/%d, want %s/%d", res.SHA256, res.Size, file.SHA256, file.Size)
	}
	if got := sha256File(t, res.Path); got != file.SHA256 {
		t.Errorf("%s has sha256 %s, want %s", res.Path, got, file.SHA256)
	}
	if filepath.Base(res.Path) != file.Name || filepath.Base(filepath.Dir(res.Path)) != file.SHA256 {
		t.Errorf("path %s is not .../sha256/<hex>/<name>", res.Path)
	}
}

// ---- tests ----

func TestFetchSuccessThenCacheHit(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	file, srv := served(t, file, serveDir(filepath.Dir(r.Tarball)))

	var mu sync.Mutex
	var calls int
	var last, lastTotal int64
	f := newFetcher(t, Options{Progress: func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if done < last {
			t.Errorf("progress went backwards: %d after %d", done, last)
		}
		calls++
		last, lastTotal = done, total
	}})
	res, err := f.Fetch(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, res, file)
	if res.Cached || res.URL != srv.url(tarName) {
		t.Errorf("first fetch: Cached=%v URL=%q, want false %q", res.Cached, res.URL, srv.url(tarName))
	}
	if calls == 0 || last != file.Size || lastTotal != file.Size {
		t.Errorf("progress: %d calls, last (%d, %d), want (%d, %d)", calls, last, lastTotal, file.Size, file.Size)
	}

	// No network now: the second fetch must come from the cache, and report
	// the URL the bytes originally came from.
	srv.Close()
	res2, err := f.Fetch(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	if !res2.Cached || res2.Path != res.Path || res2.URL != res.URL {
		t.Errorf("second fetch: %+v, want a cache hit of %+v", res2, res)
	}
}

func TestFetchFailures(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	head := func(n int64) []byte {
		fh, err := os.Open(r.Tarball)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		b := make([]byte, n)
		if _, err := io.ReadFull(fh, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	tarball := r.Tarball
	const htmlPage = "<!DOCTYPE html>\n<html><head><title>Rate limit exceeded</title></head><body>Try later.</body></html>\n"
	sizeStr := strconv.FormatInt(r.Size, 10)

	tests := []struct {
		name     string
		handler  http.HandlerFunc // nil: connection refused
		file     func(File) File  // adjust the pinned file
		opts     Options
		is       []error
		msgs     []string
		requests int
		maxTime  time.Duration
	}{
		{
			name:     "404",
			handler:  status(404),
			is:       []error{ErrAllFailed, ErrNotFound},
			msgs:     []string{"all 1 source failed:\n  http://", ": HTTP 404 Not Found"},
			requests: 1,
		},
		{
			name:     "410",
			handler:  status(410),
			is:       []error{ErrNotFound},
			msgs:     []string{"HTTP 410 Gone"},
			requests: 1,
		},
		{
			name:     "403 is not retried",
			handler:  status(403),
			is:       []error{ErrAllFailed},
			msgs:     []string{"HTTP 403 Forbidden"},
			requests: 1,
		},
		{
			name:     "503 retried until the schedule runs out",
			handler:  status(503),
			is:       []error{ErrAllFailed},
			msgs:     []string{"HTTP 503 Service Unavailable", "(tried 3 times)"},
			requests: 3,
		},
		{
			name: "connection cut mid-body is retried",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", sizeStr)
				w.Write(head(1 << 20))
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // close the connection with the body short
			},
			is:       []error{ErrAllFailed},
			msgs:     []string{"connection lost: unexpected EOF (after 1048576 of " + sizeStr + " bytes)", "(tried 3 times)"},
			requests: 3,
		},
		{
			name: "truncated file served as complete",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.ServeContent(w, r, tarName, time.Time{}, bytes.NewReader(head(1<<20)))
			},
			is:       []error{ErrAllFailed, ErrMismatch},
			msgs:     []string{"size mismatch: want " + sizeStr + " bytes, source has 1048576", `Content-Type "application/gzip"`},
			requests: 1,
		},
		{
			name: "wrong bytes with 200",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fh, err := os.Open(tarball)
				if err != nil {
					panic(err)
				}
				defer fh.Close()
				w.Header().Set("Content-Length", sizeStr)
				w.Header().Set("Content-Type", "application/octet-stream")
				b := make([]byte, 4096)
				io.ReadFull(fh, b)
				b[1000] ^= 0xff // same size, one byte different
				w.Write(b)
				io.Copy(w, fh)
			},
			is:       []error{ErrMismatch},
			msgs:     []string{"sha256 mismatch: want " + r.SHA256 + ", got ", " (" + sizeStr + " bytes)", `Content-Type "application/octet-stream"`},
			requests: 1,
		},
		{
			name: "HTML error page with 200",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, htmlPage)
			},
			is:       []error{ErrMismatch},
			msgs:     []string{"size mismatch", `Content-Type "text/html; charset=utf-8"`, "looks like an HTML page", "Rate limit exceeded"},
			requests: 1,
		},
		{
			name: "HTML page with 200, no length, no content type",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil // stop net/http from sniffing one
				w.(http.Flusher).Flush()         // chunked: no Content-Length
				io.WriteString(w, "\n  "+htmlPage)
			},
			is:       []error{ErrMismatch},
			msgs:     []string{"size mismatch: want " + sizeStr + " bytes, got " + strconv.Itoa(len(htmlPage)+3) + " (sha256 ", "looks like an HTML page: \"<!DOCTYPE html>"},
			requests: 1,
		},
		{
			name: "more bytes than pinned stops early",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fh, err := os.Open(tarball)
				if err != nil {
					panic(err)
				}
				defer fh.Close()
				w.(http.Flusher).Flush() // chunked: the size is not declared
				io.Copy(w, fh)
			},
			file: func(f File) File { f.Size = 100000; return f },
			is:   []error{ErrMismatch},
			msgs: []string{"size mismatch: want 100000 bytes, got more (stopped after 100001)"},
			// Stopping early means the 55 MB are not all read.
			requests: 1,
		},
		{
			name: "stall after headers fails within the idle timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", sizeStr)
				w.Write(head(65536))
				w.(http.Flusher).Flush()
				<-r.Context().Done() // send nothing more until the client gives up
			},
			opts:     Options{IdleTimeout: 200 * time.Millisecond},
			is:       []error{ErrAllFailed},
			msgs:     []string{"stalled: no data for 200ms (after 65536 of " + sizeStr + " bytes)", "(tried 3 times)"},
			requests: 3,
			maxTime:  5 * time.Second,
		},
		{
			name: "no response headers within the header timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done()
			},
			opts:     Options{ResponseHeaderTimeout: 200 * time.Millisecond},
			is:       []error{ErrAllFailed},
			msgs:     []string{"timeout: net/http: timeout awaiting response headers", "(tried 3 times)"},
			requests: 3,
			maxTime:  5 * time.Second,
		},
		{
			name:    "connection refused",
			handler: nil,
			is:      []error{ErrAllFailed},
			msgs:    []string{"connection error: dial tcp 127.0.0.1:", "connection refused", "(tried 3 times)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := file
			var srv *testServer
			if tc.handler != nil {
				srv = serve(t, tc.handler)
				file.URLs = []string{srv.url(tarName)}
			} else {
				file.URLs = []string{refusedURL(t)}
			}
			if tc.file != nil {
				file = tc.file(file)
			}
			f := newFetcher(t, tc.opts)
			start := time.Now()
			_, err := f.Fetch(context.Background(), file)
			if tc.maxTime > 0 && time.Since(start) > tc.maxTime {
				t.Errorf("took %v, want under %v", time.Since(start), tc.maxTime)
			}
			wantErr(t, err, tc.is, tc.msgs)
			t.Log(err)
			if !strings.HasPrefix(err.Error(), "fetch "+tarName+": all 1 source failed:\n  "+file.URLs[0]+": ") {
				t.Errorf("error does not start with the name and the source:\n%v", err)
			}
			if srv != nil {
				srv.wantTotal(t, tc.requests, tc.name)
			}
			var fe *Error
			if !errors.As(err, &fe) || len(fe.Attempts) != 1 {
				t.Errorf("want an *Error with 1 attempt, got %#v", err)
			}
		})
	}
}

// The idle timeout bounds each read, not the whole transfer: a download that
// takes many idle periods but never pauses for one succeeds.
func TestSlowButSteadyOutlivesIdleTimeout(t *testing.T) {
	t.Parallel()
	r, _ := fixture(t)
	const chunk, chunks = 128, 150
	fh, err := os.Open(r.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	content := make([]byte, chunk*chunks)
	_, err = io.ReadFull(fh, content)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		for i := 0; i < chunks; i++ {
			w.Write(content[i*chunk : (i+1)*chunk])
			w.(http.Flusher).Flush()
			select {
			case <-time.After(20 * time.Millisecond): // a fiftieth of the idle timeout: margin for a loaded machine
			case <-r.Context().Done():
				return
			}
		}
	}))
	file := File{Name: "prefix.bin", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(content)), URLs: []string{srv.url("prefix.bin")}}
	start := time.Now()
	res, err := newFetcher(t, Options{IdleTimeout: time.Second}).Fetch(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, res, file)
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("transfer took only %v; the test should outlast several idle timeouts", d)
	}
	srv.wantTotal(t, 1, "one steady transfer")
}

func TestFetchFallback(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	good := serveDir(filepath.Dir(r.Tarball))
	tests := []struct {
		name     string
		handlers []http.HandlerFunc
		from     int   // index of the source that succeeds
		requests []int // per server
	}{
		{"404 then next URL", []http.HandlerFunc{status(404), good}, 1, []int{1, 1}},
		{"503 twice then success", []http.HandlerFunc{failFirst(2, 503, good), status(404)}, 0, []int{3, 0}},
		{"500 exhausts retries then next URL", []http.HandlerFunc{status(500), good}, 1, []int{3, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file, srvs := servedBy(t, file, tc.handlers...)
			res, err := newFetcher(t, Options{}).Fetch(context.Background(), file)
			if err != nil {
				t.Fatal(err)
			}
			wantFile(t, res, file)
			if res.URL != file.URLs[tc.from] {
				t.Errorf("URL = %q, want %q", res.URL, file.URLs[tc.from])
			}
			for i, s := range srvs {
				s.wantTotal(t, tc.requests[i], "server "+strconv.Itoa(i))
			}
		})
	}
}

func TestFetchAllSourcesFail(t *testing.T) {
	t.Parallel()
	_, file := fixture(t)
	mirror := t.TempDir()
	if err := os.WriteFile(filepath.Join(mirror, tarName), []byte("not a tarball\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s404 := serve(t, status(404))
	s503 := serve(t, status(503))
	refused := refusedURL(t)
	file.URLs = []string{s404.url(tarName), s503.url(tarName), refused}

	_, err := newFetcher(t, Options{Mirror: mirror}).Fetch(context.Background(), file)
	wantErr(t, err, []error{ErrAllFailed, ErrMismatch, ErrNotFound}, nil)
	t.Logf("the error a user sees:\n%v", err)
	mirrorURL := fileURL(filepath.Join(mirror, tarName))
	want := []string{
		"fetch " + tarName + ": all 4 sources failed:",
		"  " + mirrorURL + ": size mismatch: want " + strconv.FormatInt(file.Size, 10) + " bytes, source has 14",
		"  " + s404.url(tarName) + ": HTTP 404 Not Found",
		"  " + s503.url(tarName) + ": HTTP 503 Service Unavailable",
		"  " + refused + ": connection error: ",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("error has %d lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], want[i])
		}
	}
	s503.wantTotal(t, 3, "the 503 server, retried")
}

func TestCorruptedCacheIsRefetched(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	tests := []struct {
		name    string
		corrupt func(t *testing.T, p string)
	}{
		{"flipped byte", func(t *testing.T, p string) {
			fh, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			if _, err := fh.WriteAt([]byte{0}, 12345); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 1000); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file, srv := served(t, file, serveDir(filepath.Dir(r.Tarball)))
			f, res := fetched(t, Options{}, file)
			tc.corrupt(t, res.Path)
			res2, err := f.Fetch(context.Background(), file)
			if err != nil {
				t.Fatal(err)
			}
			if res2.Cached || srv.total() != 2 {
				t.Errorf("Cached=%v after %d requests; want a fresh download (2 requests)", res2.Cached, srv.total())
			}
			wantFile(t, res2, file)
		})
	}

	t.Run("and reported when no source has it", func(t *testing.T) {
		t.Parallel()
		file, srv := served(t, file, serveDir(filepath.Dir(r.Tarball)))
		f, res := fetched(t, Options{}, file)
		if err := os.Truncate(res.Path, 1000); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		_, err := f.Fetch(context.Background(), file)
		wantErr(t, err, []error{ErrAllFailed}, []string{"\n  cache: " + res.Path + " (downloaded from " + srv.url(tarName) + "): size mismatch: want", "got 1000", "(removed)"})
		if _, err := os.Stat(res.Path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("corrupted entry still there: %v", err)
		}
	})
}

func TestMirror(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	dir := filepath.Dir(r.Tarball)
	mirrorSrv := serve(t, http.StripPrefix("/mirror", serveDir(dir)))
	tests := []struct {
		name    string
		mirror  string
		wantURL string
	}{
		{"directory", dir, fileURL(r.Tarball)},
		{"file URL", fileURL(dir), fileURL(r.Tarball)},
		{"http URL", mirrorSrv.URL + "/mirror", mirrorSrv.URL + "/mirror/" + tarName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file, upstream := served(t, file, serveDir(dir))
			res, err := newFetcher(t, Options{Mirror: tc.mirror}).Fetch(context.Background(), file)
			if err != nil {
				t.Fatal(err)
			}
			wantFile(t, res, file)
			if res.URL != tc.wantURL {
				t.Errorf("URL = %q, want %q", res.URL, tc.wantURL)
			}
			upstream.wantTotal(t, 0, "upstream; the mirror should have served")
		})
	}
}

// The spellings of a mirror, down to the URL of the file in it (no download).
func TestMirrorSpellings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct{ mirror, want string }{
		{dir, fileURL(filepath.Join(dir, tarName))},
		{dir + "/", fileURL(filepath.Join(dir, tarName))},
		{relTo(t, dir), fileURL(filepath.Join(dir, tarName))},
		{fileURL(dir), fileURL(filepath.Join(dir, tarName))},
		{fileURL(dir) + "/", fileURL(filepath.Join(dir, tarName))},
		{"https://mirror.example/openssl", "https://mirror.example/openssl/" + tarName},
		{"https://mirror.example/openssl/", "https://mirror.example/openssl/" + tarName},
		{"http://mirror.example", "http://mirror.example/" + tarName},
	}
	for _, tc := range tests {
		f := newFetcher(t, Options{Mirror: tc.mirror})
		srcs, _, err := f.sources(tarName, "", nil)
		if err != nil || len(srcs) != 1 || srcs[0].String() != tc.want {
			t.Errorf("mirror %q: sources %v, %v; want [%s]", tc.mirror, srcs, err, tc.want)
		}
	}
}

func relTo(t *testing.T, dir string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestOffline(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	dir := filepath.Dir(r.Tarball)

	t.Run("cache hit", func(t *testing.T) {
		t.Parallel()
		file, srv := served(t, file, serveDir(dir))
		cache := t.TempDir()
		t.Cleanup(func() { assertClean(t, cache) })
		if _, err := newFetcher(t, Options{CacheDir: cache}).Fetch(context.Background(), file); err != nil {
			t.Fatal(err)
		}
		res, err := newFetcher(t, Options{CacheDir: cache, Offline: true}).Fetch(context.Background(), file)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Cached || res.URL != srv.url(tarName) {
			t.Errorf("got %+v, want a cache hit recording %s", res, srv.url(tarName))
		}
		srv.wantTotal(t, 1, "the online fetch")
	})

	t.Run("directory mirror hit", func(t *testing.T) {
		t.Parallel()
		file, srv := served(t, file, serveDir(dir))
		res, err := newFetcher(t, Options{Offline: true, Mirror: dir}).Fetch(context.Background(), file)
		if err != nil {
			t.Fatal(err)
		}
		wantFile(t, res, file)
		if res.URL != fileURL(r.Tarball) || srv.total() != 0 {
			t.Errorf("URL %q after %d requests; want %q and no network", res.URL, srv.total(), fileURL(r.Tarball))
		}
	})

	misses := []struct {
		name   string
		mirror func(t *testing.T) string
		msgs   []string
	}{
		{"miss with empty mirror", func(t *testing.T) string { return t.TempDir() },
			[]string{"offline, not in the cache, and the local mirror failed:\n  file://", "not found", "(2 network sources not tried: offline)"}},
		{"miss without mirror", func(t *testing.T) string { return "" },
			[]string{"offline, not in the cache, and no local mirror", "(2 network sources not tried: offline)"}},
		{"http mirror is network", func(t *testing.T) string { return serve(t, serveDir(dir)).URL },
			[]string{"no local mirror", "(3 network sources not tried: offline)"}},
	}
	for _, tc := range misses {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := file
			srv := serve(t, serveDir(dir))
			file.URLs = []string{srv.url(tarName), srv.URL + "/elsewhere/" + tarName}
			_, err := newFetcher(t, Options{Offline: true, Mirror: tc.mirror(t)}).Fetch(context.Background(), file)
			wantErr(t, err, []error{ErrOffline, ErrAllFailed}, tc.msgs)
			srv.wantTotal(t, 0, "offline fetch")
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	dir := filepath.Dir(r.Tarball)

	// Cancel from the progress callback once some megabytes have arrived:
	// mid-download, for both network and mirror reads.
	for _, viaMirror := range []bool{false, true} {
		name := map[bool]string{false: "http mid-download", true: "mirror mid-copy"}[viaMirror]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			file, _ := served(t, file, serveDir(dir))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var received int64
			opts := Options{Progress: func(done, total int64) {
				received = done
				if done > 8<<20 {
					cancel()
				}
			}}
			if viaMirror {
				opts.Mirror = dir
			}
			f := newFetcher(t, opts)
			res, err := f.Fetch(ctx, file)
			wantErr(t, err, []error{context.Canceled}, []string{"fetch " + tarName + " from "})
			if received >= file.Size {
				t.Errorf("received all %d bytes; cancellation did not stop the download", received)
			}
			if res.Path != "" {
				t.Errorf("result %+v on cancellation", res)
			}
			if _, err := os.Stat(filepath.Join(f.CacheDir(), "sha256", file.SHA256, tarName)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("cache entry exists after cancellation: %v", err)
			}
		})
	}

	t.Run("during backoff", func(t *testing.T) {
		t.Parallel()
		file, _ := served(t, file, status(503))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := newFetcher(t, Options{Backoff: []time.Duration{time.Hour}}).Fetch(ctx, file)
		wantErr(t, err, []error{context.DeadlineExceeded}, nil)
		if time.Since(start) > 5*time.Second {
			t.Errorf("cancellation took %v", time.Since(start))
		}
	})

	t.Run("before start", func(t *testing.T) {
		t.Parallel()
		file, srv := served(t, file, serveDir(dir))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := newFetcher(t, Options{}).Fetch(ctx, file)
		wantErr(t, err, []error{context.Canceled}, nil)
		srv.wantTotal(t, 0, "canceled fetch")
	})
}

func TestSignature(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	dir := filepath.Dir(r.Tarball)
	sig, err := os.ReadFile(r.Signature)
	if err != nil {
		t.Fatal(err)
	}
	sigName := tarName + ".asc"
	checkSig := func(t *testing.T, res Result, wantURL string) {
		t.Helper()
		got, err := os.ReadFile(res.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, sig) {
			t.Errorf("signature at %s differs from the fixture", res.Path)
		}
		if res.URL != wantURL {
			t.Errorf("signature URL = %q, want %q", res.URL, wantURL)
		}
		if filepath.Dir(res.Path) != filepath.Join(filepath.Dir(filepath.Dir(res.Path)), file.SHA256) || filepath.Base(res.Path) != sigName {
			t.Errorf("signature path %s is not beside the tarball", res.Path)
		}
		if res.Size != int64(len(sig)) {
			t.Errorf("signature size %d, want %d", res.Size, len(sig))
		}
	}

	t.Run("from the source that served the tarball, then cached", func(t *testing.T) {
		t.Parallel()
		file := file
		// The first source lacks the tarball but has a signature; it must not
		// be asked for it.
		first := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if path.Base(r.URL.Path) == tarName {
				status(404)(w, r)
				return
			}
			serveDir(dir)(w, r)
		}))
		second := serve(t, serveDir(dir))
		file.URLs = []string{first.url(tarName), second.url(tarName)}
		cache := t.TempDir()
		t.Cleanup(func() { assertClean(t, cache) })
		_, tar := fetched(t, Options{CacheDir: cache}, file)
		// A later run: the tarball comes from the cache, the signature from
		// the place the cache records.
		f2 := newFetcher(t, Options{CacheDir: cache})
		tar2, err := f2.Fetch(context.Background(), file)
		if err != nil || !tar2.Cached || tar2.URL != tar.URL {
			t.Fatalf("cached tarball: %+v, %v", tar2, err)
		}
		res, err := f2.FetchSignature(context.Background(), file, tar2, verifies(tar2))
		if err != nil {
			t.Fatal(err)
		}
		checkSig(t, res, second.url(sigName))
		if res.Cached {
			t.Error("first signature fetch reported Cached")
		}
		if first.count(sigName) != 0 || second.count(sigName) != 1 {
			t.Errorf("signature requests: first %d, second %d; want 0, 1", first.count(sigName), second.count(sigName))
		}

		first.Close()
		second.Close()
		res2, err := f2.FetchSignature(context.Background(), file, tar2, verifies(tar2))
		if err != nil {
			t.Fatal(err)
		}
		checkSig(t, res2, second.url(sigName))
		if !res2.Cached {
			t.Error("second signature fetch not from the cache")
		}
	})

	t.Run("from the directory mirror", func(t *testing.T) {
		t.Parallel()
		file, srv := served(t, file, serveDir(dir))
		f, tar := fetched(t, Options{Mirror: dir}, file)
		res, err := f.FetchSignature(context.Background(), file, tar, verifies(tar))
		if err != nil {
			t.Fatal(err)
		}
		checkSig(t, res, fileURL(r.Signature))
		srv.wantTotal(t, 0, "upstream")
	})

	t.Run("offline: the local mirror stands in for a network origin", func(t *testing.T) {
		t.Parallel()
		file, srv := served(t, file, serveDir(dir))
		cache := t.TempDir()
		t.Cleanup(func() { assertClean(t, cache) })
		tar, err := newFetcher(t, Options{CacheDir: cache}).Fetch(context.Background(), file)
		if err != nil {
			t.Fatal(err)
		}
		_, err = newFetcher(t, Options{CacheDir: cache, Offline: true}).FetchSignature(context.Background(), file, tar, verifies(tar))
		wantErr(t, err, []error{ErrOffline}, []string{"fetch " + sigName + ": offline, not in the cache, and no local mirror", "(1 network source not tried: offline)"})
		res, err := newFetcher(t, Options{CacheDir: cache, Offline: true, Mirror: dir}).FetchSignature(context.Background(), file, tar, verifies(tar))
		if err != nil {
			t.Fatal(err)
		}
		checkSig(t, res, fileURL(r.Signature))
		if srv.count(sigName) != 0 {
			t.Errorf("offline signature fetch made %d requests", srv.count(sigName))
		}
	})

	t.Run("origin unknown: sources in order", func(t *testing.T) {
		t.Parallel()
		file := file
		s404 := serve(t, status(404))
		srv := serve(t, serveDir(dir))
		file.URLs = []string{s404.url(tarName), srv.url(tarName)}
		f, tar := fetched(t, Options{}, file)
		if err := os.Remove(tar.Path + originSuffix); err != nil {
			t.Fatal(err)
		}
		tar.URL = ""
		res, err := f.FetchSignature(context.Background(), file, tar, verifies(tar))
		if err != nil {
			t.Fatal(err)
		}
		checkSig(t, res, srv.url(sigName))
	})

	bad := []struct {
		name    string
		handler http.HandlerFunc
		is      []error
		msgs    []string
	}{
		{"too large", filler(MaxSignatureSize+1, true),
			[]error{ErrTooLarge}, []string{"too large: 65537 bytes, limit 65536"}},
		{"too large, no length", filler(2*MaxSignatureSize, false),
			[]error{ErrTooLarge}, []string{"too large: more than 65536 bytes"}},
		{"HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>nope</html>")
		}, nil, []string{"not a signature (17 bytes)", "looks like an HTML page"}},
		{"empty", func(w http.ResponseWriter, r *http.Request) {}, nil, []string{"empty file"}},
		{"404", status(404), []error{ErrNotFound}, []string{"HTTP 404 Not Found"}},
	}
	// The bad cases share one cache holding the tarball (fetched once), each
	// claiming its tarball came from its own server.
	shared := t.TempDir()
	t.Cleanup(func() { assertClean(t, shared) })
	tar, err := newFetcher(t, Options{CacheDir: shared, Mirror: dir}).Fetch(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if path.Base(r.URL.Path) == sigName {
					tc.handler(w, r)
					return
				}
				status(500)(w, r)
			}))
			tar := tar
			tar.URL = srv.url(tarName)
			_, err := newFetcher(t, Options{CacheDir: shared}).FetchSignature(context.Background(), file, tar, verifies(tar))
			wantErr(t, err, append(tc.is, ErrAllFailed), append(tc.msgs, "fetch "+sigName+": all 1 source failed:\n  "+srv.url(sigName)+": "))
			if _, err := os.Stat(filepath.Join(filepath.Dir(tar.Path), sigName)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("bad signature was cached: %v", err)
			}
		})
	}
}

// Two fetchers with their own HTTP clients share one cache, as two processes
// would: they share nothing but the file system.
func TestConcurrentFetchesShareCache(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	file, _ = served(t, file, serveDir(filepath.Dir(r.Tarball)))
	cache := t.TempDir()
	t.Cleanup(func() { assertClean(t, cache) })
	var wg sync.WaitGroup
	errs := make([]error, 2)
	results := make([]Result, 2)
	for i := range 2 {
		f := newFetcher(t, Options{CacheDir: cache})
		wg.Go(func() { results[i], errs[i] = f.Fetch(context.Background(), file) })
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("fetcher %d: %v", i, errs[i])
		}
		wantFile(t, results[i], file)
	}
}

func TestInvalidInput(t *testing.T) {
	t.Parallel()
	good := File{Name: tarName, SHA256: strings.Repeat("ab", 32), Size: 1, URLs: []string{"https://example.invalid/x"}}
	tests := []struct {
		name string
		edit func(*File)
		msg  string
	}{
		{"path in name", func(f *File) { f.Name = "../x.tar.gz" }, "invalid file name"},
		{"hidden name", func(f *File) { f.Name = ".x" }, "invalid file name"},
		{"short sha", func(f *File) { f.SHA256 = "abc" }, "invalid sha256"},
		{"non-hex sha", func(f *File) { f.SHA256 = strings.Repeat("zz", 32) }, "invalid sha256"},
		{"zero size", func(f *File) { f.Size = 0 }, "invalid size"},
		{"bad scheme", func(f *File) { f.URLs = []string{"ftp://example.invalid/x"} }, `unsupported scheme "ftp"`},
		{"no sources", func(f *File) { f.URLs = nil }, "not in the cache, and no mirror or URL to fetch it from"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := good
			tc.edit(&file)
			_, err := newFetcher(t, Options{}).Fetch(context.Background(), file)
			wantErr(t, err, nil, []string{tc.msg})
		})
	}
	if _, err := New(Options{CacheDir: t.TempDir(), Mirror: "ftp://x/y"}); err == nil || !strings.Contains(err.Error(), "unsupported scheme") {
		t.Errorf("New with an ftp mirror: %v", err)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("OSSLBUILD_CACHE", dir)
	if got, err := DefaultCacheDir(); err != nil || got != dir {
		t.Errorf("with OSSLBUILD_CACHE: %q, %v; want %q", got, err, dir)
	}
	t.Setenv("OSSLBUILD_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", dir)
	if got, err := DefaultCacheDir(); err != nil || got != filepath.Join(dir, "osslbuild") {
		t.Errorf("without OSSLBUILD_CACHE: %q, %v; want %q", got, err, filepath.Join(dir, "osslbuild"))
	}
}

func TestStaleTempFilesSwept(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	file, _ = served(t, file, serveDir(filepath.Dir(r.Tarball)))
	f := newFetcher(t, Options{})
	dir := filepath.Join(f.CacheDir(), "sha256", file.SHA256)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "."+tarName+".tmp-123")
	if err := os.WriteFile(stale, []byte("left by a killed process"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fetch(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temporary file not swept: %v", err)
	}
}
