package fetch

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// expect is what a download must be. size < 0: no pinned digest (signatures,
// discovered files), so limit, emptiness and HTML detection are the checks.
type expect struct {
	name  string
	sha   string
	size  int64
	limit int64  // read at most limit+1 bytes: enough to notice an excess
	what  string // unpinned: what an HTML page is refused as not being ("a signature")
	where string // prefix for local write errors: "cache" or "staging"
}

// body is an open source: a local file or an HTTP 200 response.
type body struct {
	r           io.Reader
	close       func()
	length      int64 // declared size; -1 unknown
	contentType string
	// fail turns a read error after got body bytes into the error to report.
	fail func(err error, got, total int64) error
}

func (b *body) Close() { b.close() }

// openLocal opens a file:// source. Local failures are not retried.
func openLocal(ctx context.Context, u *url.URL) (*body, error) {
	p, err := localPath(u)
	if err != nil {
		return nil, &permanentError{err}
	}
	fh, st, err := ctxio.OpenRegular(p, true)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &permanentError{fmt.Errorf("%w: %w", ErrNotFound, err)}
	}
	if err != nil {
		return nil, &permanentError{err}
	}
	return &body{
		r:      ctxio.Reader(ctx, fh),
		close:  func() { fh.Close() },
		length: st.Size(),
		fail: func(err error, got, total int64) error {
			if ctx.Err() != nil {
				return stopped(ctx, got, total)
			}
			return &permanentError{fmt.Errorf("read after %d bytes: %w", got, err)}
		},
	}, nil
}

// Redirects refused: none of these can change by asking again.
var (
	errDowngrade        = errors.New("refusing redirect from https to http")
	errRedirectLoop     = errors.New("redirect loop")
	errTooManyRedirects = errors.New("too many redirects")
	errOnion            = errors.New("refusing redirect to a .onion host (RFC 7686: not resolved on the Internet)")
)

// maxRedirects is how many requests one chain of redirects may take.
const maxRedirects = 10

// httpGetter makes GET requests with the connect and header timeouts in its
// transport and the idle timeout on each body read.
type httpGetter struct {
	client *http.Client
	idle   time.Duration
}

// HTTPClient is the client fetch makes its requests with, for other requests
// that must follow the same rules (e.g. a release listing): opts.Transport,
// else one bounding connecting by ConnectTimeout and the wait for headers by
// ResponseHeaderTimeout; no overall timeout; no redirect from https to http,
// back to a URL already visited (a loop) or beyond maxRedirects. Bodies are
// not covered by IdleTimeout, MinRate or Deadline: those are per download.
func HTTPClient(opts Options) *http.Client {
	opts = withDefaults(opts)
	tr := opts.Transport
	if tr == nil {
		dialer := &net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second}
		tr = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   opts.ConnectTimeout,
			ResponseHeaderTimeout: opts.ResponseHeaderTimeout,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConns:          10,
			ForceAttemptHTTP2:     true,
		}
	}
	return &http.Client{
		Transport: tr,
		// No overall Timeout: it would kill a slow but live 55 MB download.
		CheckRedirect: checkRedirect,
	}
}

// checkRedirect refuses a redirect that downgrades to http, comes back to a
// URL already visited, or goes beyond maxRedirects, showing the chain.
func checkRedirect(req *http.Request, via []*http.Request) error {
	chain := make([]string, 0, len(via)+1)
	for _, v := range via {
		chain = append(chain, v.URL.Redacted())
	}
	chain = append(chain, req.URL.Redacted())
	if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("%w (%s)", errDowngrade, req.URL.Redacted())
	}
	if h := strings.TrimSuffix(strings.ToLower(req.URL.Hostname()), "."); h == "onion" || strings.HasSuffix(h, ".onion") {
		return fmt.Errorf("%w: %s", errOnion, strings.Join(chain, " -> "))
	}
	if slices.ContainsFunc(via, func(v *http.Request) bool { return v.URL.String() == req.URL.String() }) {
		return fmt.Errorf("%w: %s", errRedirectLoop, strings.Join(chain, " -> "))
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: gave up after %d requests, from %s to %s", errTooManyRedirects, len(via), chain[0], chain[len(chain)-1])
	}
	return nil
}

// get requests u under ctx; cancel is ctx's cancel function, which the idle
// timer calls when a body read makes no progress.
func (g *httpGetter) get(ctx context.Context, cancel context.CancelCauseFunc, u *url.URL) (*body, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &permanentError{err}
	}
	// Ask for the bytes as stored: with Go's transparent gzip, a server that
	// labels a .tar.gz "Content-Encoding: gzip" would hand us the .tar.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "osslbuild")
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, g.netError(ctx, err, -1, -1)
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &statusError{code: resp.StatusCode, status: resp.Status, contentType: ct}
	}
	// The idle deadline is a timer re-armed for every read: a server that
	// sends headers and then stalls fails within g.idle, while a slow but
	// steady transfer can take as long as it needs.
	timer := time.AfterFunc(g.idle, func() { cancel(&stalled{idle: g.idle}) })
	return &body{
		r:           &idleReader{r: resp.Body, t: timer, d: g.idle},
		close:       func() { timer.Stop(); resp.Body.Close() },
		length:      resp.ContentLength,
		contentType: ct,
		fail: func(err error, got, total int64) error {
			return g.netError(ctx, err, got, total)
		},
	}, nil
}

type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (ir *idleReader) Read(p []byte) (int, error) {
	ir.t.Reset(ir.d)
	n, err := ir.r.Read(p)
	ir.t.Stop()
	return n, err
}

// netError describes a failed request or body read (after got of total bytes;
// -1 before the body) as a retryable transferError, unless the context ended
// (a limit of fetch's own, or the caller's cancellation) or the failure is one
// a retry cannot fix: a refused redirect, a DNS failure, a certificate error.
func (g *httpGetter) netError(ctx context.Context, err error, got, total int64) error {
	if ctx.Err() != nil {
		return stopped(ctx, got, total)
	}
	// The URL is already on the line; keep only what went wrong.
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	if errors.Is(err, errDowngrade) || errors.Is(err, errRedirectLoop) || errors.Is(err, errTooManyRedirects) || errors.Is(err, errOnion) {
		return &permanentError{err}
	}
	// A name that does not resolve now will not within the backoff schedule;
	// a resolver timeout has already been retried by the resolver itself.
	if dns, ok := errors.AsType[*net.DNSError](err); ok {
		return &permanentError{&transferError{what: "DNS lookup failed", got: got, total: total, err: dns}}
	}
	if isCertificateError(err) {
		return &permanentError{&transferError{what: "certificate error", got: got, total: total, err: err}}
	}
	what := "connection error"
	if got >= 0 {
		what = "connection lost"
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		what = "timeout"
	}
	return &transferError{what: what, got: got, total: total, err: err}
}

// isCertificateError reports whether err is a TLS certificate that failed
// verification: the server's certificate will not change between retries.
func isCertificateError(err error) bool {
	var verify *tls.CertificateVerificationError
	var authority x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &host) || errors.As(err, &invalid)
}

// stopped is the error for a transfer whose context ended after got of total
// bytes (-1: before the body): one of fetch's own limits, with the bytes
// received, or else the caller's cancellation as it is.
func stopped(ctx context.Context, got, total int64) error {
	cause := context.Cause(ctx)
	if s, ok := errors.AsType[*stalled](cause); ok {
		return &transferError{what: "stalled", got: max(got, 0), total: total, err: s}
	}
	if slow, ok := errors.AsType[*tooSlow](cause); ok {
		return &transferError{what: "too slow", got: max(got, 0), total: total, err: slow}
	}
	if dl, ok := errors.AsType[*deadlineExceeded](cause); ok {
		return &transferError{what: "deadline", got: got, total: total, err: dl}
	}
	return cause
}

// atDeadline is the error for a source that the deadline for the file
// interrupted: err itself when it says so already (with the bytes received),
// else the deadline with err, what the last try got, beside it.
func atDeadline(ctx context.Context, err error) error {
	if errors.Is(err, ErrDeadline) {
		if _, ok := errors.AsType[*transferError](err); ok {
			return err
		}
		err = nil // the bare cause: the deadline passed in a check
	}
	dl, _ := errors.AsType[*deadlineExceeded](context.Cause(ctx))
	return &transferError{what: "deadline", got: -1, total: -1, err: dl, last: err}
}

// spooled is a received file: a temporary file, still open, so the lock
// createTemp took keeps sweeps away until it is installed or discarded.
type spooled struct {
	f   *os.File
	sum string // sha256, hex
	n   int64
}

func (s *spooled) path() string { return s.f.Name() }

// discard closes and removes the file.
func (s *spooled) discard() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// spool streams b into a new temporary file in dir while hashing and checks
// it against want. Nothing is left behind on any error.
func (f *Fetcher) spool(ctx context.Context, b *body, want expect, dir string) (_ *spooled, err error) {
	pinned := want.size >= 0
	if pinned && b.length >= 0 && b.length != want.size {
		// Wrong before a byte is read: read just enough to say what it is.
		head, _ := io.ReadAll(io.LimitReader(b.r, 512))
		return nil, &MismatchError{WantSHA256: want.sha, WantSize: want.size, GotSize: b.length, Declared: true, ContentType: b.contentType, Head: head}
	}
	if !pinned && b.length > want.limit {
		return nil, &permanentError{fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, b.length, want.limit)}
	}

	tmp, err := createTemp(dir, tempPattern(want.name))
	if err != nil {
		return nil, &permanentError{fmt.Errorf("%s: %w", want.where, err)}
	}
	s := &spooled{f: tmp}
	// Removed on every way out but success, a panic included (err is not
	// set then).
	kept := false
	defer func() {
		if !kept {
			s.discard()
		}
	}()
	if s.sum, s.n, err = f.copyChecked(ctx, b, want, tmp); err != nil {
		return nil, err
	}
	// No fsync: every use re-hashes a cached file, so a torn write after a
	// crash is caught and fetched again; a discovered file dies with its run.
	if err := tmp.Chmod(0o644); err != nil {
		return nil, &permanentError{fmt.Errorf("%s: %w", want.where, err)}
	}
	kept = true
	return s, nil
}

// copyChecked copies b to w, hashing, and checks the bytes against want.
func (f *Fetcher) copyChecked(ctx context.Context, b *body, want expect, w io.Writer) (sum string, n int64, err error) {
	pinned := want.size >= 0
	if pinned && f.opts.Progress != nil {
		w = io.MultiWriter(w, &progressWriter{total: want.size, fn: f.opts.Progress})
	}
	total := want.size // for messages: the pinned size, else the declared one
	if !pinned {
		total = b.length
	}
	rr := &errReader{r: b.r}
	sum, n, head, err := hashCopy(w, rr, want.limit+1)
	if err != nil {
		if rr.err != nil {
			return "", n, b.fail(rr.err, n, total)
		}
		return "", n, &permanentError{fmt.Errorf("%s: %w", want.where, err)}
	}
	if ctx.Err() != nil {
		return "", n, stopped(ctx, n, total)
	}
	if n > want.limit {
		if !pinned {
			return "", n, &permanentError{fmt.Errorf("%w: more than %d bytes", ErrTooLarge, want.limit)}
		}
		return "", n, &MismatchError{WantSHA256: want.sha, WantSize: want.size, GotSize: n, More: true, ContentType: b.contentType, Head: head}
	}
	if pinned && (n != want.size || sum != want.sha) {
		return "", n, &MismatchError{WantSHA256: want.sha, WantSize: want.size, GotSHA256: sum, GotSize: n, ContentType: b.contentType, Head: head}
	}
	if !pinned {
		if n == 0 {
			return "", n, &permanentError{errors.New("empty file")}
		}
		if looksHTML(b.contentType, head) {
			return "", n, &permanentError{fmt.Errorf("not %s (%d bytes)%s", want.what, n, describeContent(b.contentType, head))}
		}
	}
	return sum, n, nil
}

// install moves a spooled temporary file to final in the cache, recording
// origin beside it; the file is removed on any error.
func install(s *spooled, final, origin string) error {
	if err := writeOrigin(final, origin); err != nil {
		s.discard()
		return &permanentError{fmt.Errorf("cache: %w", err)}
	}
	// Atomic: a concurrent fetcher sees the old entry, none, or this one.
	// Renamed while still open and locked, so no sweep can take it first.
	if err := os.Rename(s.path(), final); err != nil {
		s.discard()
		return &permanentError{fmt.Errorf("cache: %w", err)}
	}
	// A late write error surfacing here is caught by the re-hash on use.
	_ = s.f.Close()
	return nil
}

// errReader remembers a read error so store can tell it from a write error.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// headWriter keeps the first max bytes written.
type headWriter struct {
	max int
	buf []byte
}

func (h *headWriter) Write(p []byte) (int, error) {
	if room := h.max - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

type progressWriter struct {
	done, total int64
	fn          func(done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	p.fn(p.done, p.total)
	return len(b), nil
}

// hashCopy copies at most limit bytes of r to w, hashing them, and returns
// the first bytes too.
func hashCopy(w io.Writer, r io.Reader, limit int64) (sum string, n int64, head []byte, err error) {
	h := sha256.New()
	hw := &headWriter{max: 512}
	n, err = io.CopyBuffer(io.MultiWriter(w, h, hw), io.LimitReader(r, limit), make([]byte, 256<<10))
	return hex.EncodeToString(h.Sum(nil)), n, hw.buf, err
}

// tempPattern names temporary files: hidden, unique per call (CreateTemp),
// and recognisable so stale ones can be swept.
func tempPattern(base string) string { return "." + base + ".tmp-*" }

// createTemp creates a temporary file in dir holding an exclusive lock
// (where the system has them) that lasts until the file is closed or its
// process dies: a sweep tells a live download's file from one that a
// killed process left by trying that lock.
func createTemp(dir, pattern string) (*os.File, error) {
	for range 3 {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
		// A sweep may have removed the file between its creation and the lock.
		if sameFile(f, f.Name()) {
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("%s: temporary files removed as soon as they were created", dir)
}

// sameFile reports whether path still names the file open as f.
func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// staleAge is how old a temporary file must be before prepareDir removes it
// without asking its lock: old enough that no live download can still own it.
const staleAge = 24 * time.Hour

// prepareDir creates a directory for temporary files and sweeps the ones a
// killed process left there: any older than staleAge and, when locked is
// true (a cache entry, where only a running fetch owns temporary files),
// any that no process holds locked. A discovered file, handed to its
// caller unlocked, lives in a directory swept with locked false.
func prepareDir(dir string, locked bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") || !strings.Contains(e.Name(), ".tmp-") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleAge {
			_ = os.Remove(p) // best effort; another process may have swept it
		} else if locked {
			sweepUnlocked(p)
		}
	}
	return nil
}

// sweepUnlocked removes the temporary file p if no process holds its lock:
// its owner died before it could remove it.
func sweepUnlocked(p string) {
	f, err := os.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	if ok, err := tryLockFile(f); err == nil && ok && sameFile(f, p) {
		_ = os.Remove(p) // best effort, as above
	}
}

// originSuffix names the record, beside a cached file, of the URL it came from.
const originSuffix = ".url"

// beforeRename, when set (by tests), runs as a temporary file is about to
// be renamed into place: where a concurrent fetch's sweep may strike.
var beforeRename func(tmp string)

// writeOrigin records origin for final atomically (temp file and rename).
// Like install, it renames the temporary file while it is still open and
// locked: a concurrent fetch sweeping the directory takes only files no
// live process holds, so the record cannot vanish between its close and
// its rename.
func writeOrigin(final, origin string) (err error) {
	dst := final + originSuffix
	tmp, err := createTemp(filepath.Dir(dst), tempPattern(filepath.Base(dst)))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	_, err = tmp.WriteString(origin + "\n")
	if err = errors.Join(err, tmp.Chmod(0o644)); err != nil {
		return err
	}
	if beforeRename != nil {
		beforeRename(tmp.Name())
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	return tmp.Close()
}

// readOrigin returns the recorded source of a cached file, or "".
func readOrigin(final string) string {
	b, err := ctxio.ReadFile(context.Background(), final+originSuffix, true, 4<<10)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
