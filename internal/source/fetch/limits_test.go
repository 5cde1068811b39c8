package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Limits are configured in milliseconds here; the servers below hold a
// request open until the client gives up, and a safety deadline on the
// test's context turns "never gives up" into a failure instead of a hang.
const safety = time.Minute

func safeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	t.Cleanup(cancel)
	return ctx
}

// trickle declares size bytes and sends one every 10 ms until the client
// goes away: live forever, never idle, far below any useful rate.
func trickle(size int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		for {
			w.Write([]byte{0x1f})
			w.(http.Flusher).Flush()
			select {
			case <-time.After(10 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}
}

// stall declares size bytes, sends head and then nothing.
func stall(size int64, head int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.Write(make([]byte, head))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

func TestMinRate(t *testing.T) {
	t.Parallel()
	_, file := fixture(t)
	size := strconv.FormatInt(file.Size, 10)
	file, srv := served(t, file, trickle(file.Size))
	// 1000 bytes/s over 200 ms windows: 200 bytes due per window, about 20
	// arrive. The idle timeout (10 s here) never fires: a byte comes every 10 ms.
	f := newFetcher(t, Options{MinRate: 1000, RateWindow: 200 * time.Millisecond})
	_, err := f.Fetch(safeCtx(t), file)
	wantErr(t, err, []error{ErrTooSlow, ErrAllFailed}, []string{
		"fetch " + tarName + ": all 1 source failed:\n  " + srv.url(tarName) + ": too slow: ",
		" bytes in the last 200ms, below the minimum of 1000 bytes/s (after ",
		" of " + size + " bytes) (tried 3 times)",
	})
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the test's safety deadline ended the fetch, not the minimum rate: %v", err)
	}
	srv.wantTotal(t, 3, "a slow transfer is retried")
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	size := strconv.FormatInt(file.Size, 10)
	good := serveDir(filepath.Dir(r.Tarball))

	tests := []struct {
		name     string
		handlers []http.HandlerFunc
		opts     Options
		msgs     []string
		requests []int // per server
	}{
		{
			name:     "mid-body, the rate check off",
			handlers: []http.HandlerFunc{trickle(file.Size)},
			opts:     Options{Deadline: 300 * time.Millisecond, MinRate: -1},
			msgs: []string{
				"fetch " + tarName + ": deadline of 300ms passed after trying 1 of 1 source:\n  ",
				": deadline: 300ms for the whole file passed (after ", " of " + size + " bytes)",
			},
			requests: []int{1},
		},
		{
			name:     "before the response headers",
			handlers: []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
			opts:     Options{Deadline: 300 * time.Millisecond},
			msgs:     []string{": deadline: 300ms for the whole file passed (no response yet)"},
			requests: []int{1},
		},
		{
			name:     "across retries: a stalled server is not retried past it",
			handlers: []http.HandlerFunc{stall(file.Size, 65536)},
			opts:     Options{Deadline: 500 * time.Millisecond, IdleTimeout: 100 * time.Millisecond, Backoff: []time.Duration{time.Hour}},
			msgs: []string{
				": deadline: 500ms for the whole file passed while waiting to retry (last try: stalled: no data for 100ms (after 65536 of " + size + " bytes))",
			},
			requests: []int{1},
		},
		{
			name:     "across sources: the ones after it are not tried",
			handlers: []http.HandlerFunc{status(404), trickle(file.Size), good},
			opts:     Options{Deadline: 300 * time.Millisecond, MinRate: -1},
			msgs: []string{
				"deadline of 300ms passed after trying 2 of 3 sources:\n  ",
				": HTTP 404 Not Found\n  ",
				": deadline: 300ms for the whole file passed (after ",
			},
			requests: []int{1, 1, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file, srvs := servedBy(t, file, tc.handlers...)
			_, err := newFetcher(t, tc.opts).Fetch(safeCtx(t), file)
			wantErr(t, err, []error{ErrDeadline, ErrAllFailed}, tc.msgs)
			t.Log(err)
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("the test's safety deadline ended the fetch, not Options.Deadline: %v", err)
			}
			for i, s := range srvs {
				s.wantTotal(t, tc.requests[i], "server "+strconv.Itoa(i))
			}
			var fe *Error
			if !errors.As(err, &fe) || fe.Deadline != tc.opts.Deadline {
				t.Errorf("want an *Error with Deadline %v, got %#v", tc.opts.Deadline, err)
			}
		})
	}

	t.Run("signature", func(t *testing.T) {
		t.Parallel()
		srv := serve(t, trickle(MaxSignatureSize))
		shared := newFetcher(t, Options{Mirror: filepath.Dir(r.Tarball)})
		tar, err := shared.Fetch(context.Background(), file)
		if err != nil {
			t.Fatal(err)
		}
		tar.URL = srv.url(tarName)
		_, err = newFetcher(t, Options{CacheDir: shared.CacheDir(), Deadline: 300 * time.Millisecond, MinRate: -1}).
			FetchSignature(safeCtx(t), file, tar, verifies(tar))
		wantErr(t, err, []error{ErrDeadline}, []string{"fetch " + tarName + ".asc: deadline of 300ms passed", srv.url(tarName+".asc") + ": deadline: 300ms"})
	})

	t.Run("discovery leaves nothing in its directory", func(t *testing.T) {
		t.Parallel()
		srv := serve(t, trickle(1<<20))
		f := newFetcher(t, Options{Deadline: 300 * time.Millisecond, MinRate: -1})
		_, err := f.Discover(safeCtx(t), Discovery{Name: tarName, URLs: []string{srv.url(tarName)}, MaxSize: 1 << 30})
		wantErr(t, err, []error{ErrDeadline}, []string{srv.url(tarName) + ": deadline: 300ms for the whole file passed (after ", " of 1048576 bytes)"})
		assertNoFiles(t, filepath.Join(f.CacheDir(), "tmp"))
	})
}

// TestNoRetry: failures that another request cannot change are tried once,
// counted where they happen (the server, or the attempt for DNS), and the
// error says what they are.
func TestNoRetry(t *testing.T) {
	t.Parallel()
	_, file := fixture(t)

	redirect := func(to func(r *http.Request) string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to(r), http.StatusFound) }
	}
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		msgs     []string
		requests int
	}{
		{
			name: "redirect loop",
			handler: redirect(func(r *http.Request) string {
				if strings.HasSuffix(r.URL.Path, "/b") {
					return "/dl/" + tarName
				}
				return "/dl/b"
			}),
			msgs:     []string{": redirect loop: http://", "/dl/" + tarName + " -> http://", "/dl/b -> http://"},
			requests: 2,
		},
		{
			name:     "redirect to itself",
			handler:  redirect(func(r *http.Request) string { return r.URL.Path }),
			msgs:     []string{": redirect loop: http://"},
			requests: 1,
		},
		{
			name: "redirects without end",
			handler: redirect(func(r *http.Request) string {
				n, _ := strconv.Atoi(r.URL.Query().Get("n"))
				return r.URL.Path + "?n=" + strconv.Itoa(n+1)
			}),
			msgs:     []string{": too many redirects: gave up after 10 requests, from http://", "?n=10"},
			requests: 10,
		},
		{
			name:     "redirect to a .onion host",
			handler:  redirect(func(r *http.Request) string { return "http://expyuzz4wqqyqhjn.onion/" + tarName }),
			msgs:     []string{": refusing redirect to a .onion host (RFC 7686: not resolved on the Internet): http://", " -> http://expyuzz4wqqyqhjn.onion/" + tarName},
			requests: 1,
		},
		{name: "404", handler: status(404), msgs: []string{": HTTP 404 Not Found"}, requests: 1},
		{name: "410", handler: status(410), msgs: []string{": HTTP 410 Gone"}, requests: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file, srv := served(t, file, tc.handler)
			_, err := newFetcher(t, Options{}).Fetch(safeCtx(t), file)
			wantErr(t, err, []error{ErrAllFailed}, tc.msgs)
			t.Log(err)
			if strings.Contains(err.Error(), "tried ") || strings.Contains(err.Error(), "connection error") {
				t.Errorf("retried, or not called by its name:\n%v", err)
			}
			srv.wantTotal(t, tc.requests, tc.name)
		})
	}

	t.Run("DNS failure", func(t *testing.T) {
		t.Parallel()
		file := file
		file.URLs = []string{"http://osslbuild-test.invalid/dl/" + tarName}
		_, err := newFetcher(t, Options{}).Fetch(safeCtx(t), file)
		wantErr(t, err, []error{ErrAllFailed}, []string{"\n  http://osslbuild-test.invalid/dl/" + tarName + ": DNS lookup failed: lookup osslbuild-test.invalid"})
		t.Log(err)
		var fe *Error
		if !errors.As(err, &fe) || len(fe.Attempts) != 1 || fe.Attempts[0].Tries != 1 {
			t.Errorf("want one attempt with one try: %#v", err)
		}
		var dns *net.DNSError
		if !errors.As(err, &dns) {
			t.Errorf("errors.As(err, *net.DNSError) = false: %v", err)
		}
	})

	// Certificates: a TLS server on loopback counting its connections (the
	// handshake fails before any request reaches a handler).
	tlsServer := func(t *testing.T) (*httptest.Server, *atomic.Int32) {
		var conns atomic.Int32
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("request %s reached the handler through a bad certificate", r.URL)
		}))
		srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes are expected
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv, &conns
	}
	t.Run("certificate by an unknown authority", func(t *testing.T) {
		t.Parallel()
		file := file
		srv, conns := tlsServer(t)
		file.URLs = []string{srv.URL + "/dl/" + tarName}
		_, err := newFetcher(t, Options{}).Fetch(safeCtx(t), file)
		wantErr(t, err, []error{ErrAllFailed}, []string{": certificate error: ", "x509: certificate signed by unknown authority"})
		t.Log(err)
		if n := conns.Load(); n != 1 {
			t.Errorf("server saw %d connections, want 1", n)
		}
	})
	t.Run("certificate for another name", func(t *testing.T) {
		t.Parallel()
		file := file
		srv, conns := tlsServer(t)
		// Trust the server's certificate, then ask for a name it does not
		// cover (it covers example.com and the loopback addresses).
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
		}}
		file.URLs = []string{"https://osslbuild.test/dl/" + tarName}
		_, err := newFetcher(t, Options{Transport: tr}).Fetch(safeCtx(t), file)
		wantErr(t, err, []error{ErrAllFailed}, []string{": certificate error: ", "osslbuild.test"})
		t.Log(err)
		if n := conns.Load(); n != 1 {
			t.Errorf("server saw %d connections, want 1", n)
		}
	})
}
