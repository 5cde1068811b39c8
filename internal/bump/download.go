package bump

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/fetch"
)

// downloaded is a tarball staged on disk with its signature, not yet trusted.
type downloaded struct {
	tarball string // path of the staged tarball; the signature is staged at tarball+".asc"
	sha256  string
	size    int64
	from    string // URL that served the tarball
	asc     []byte
	ascFrom string // URL that served the signature
}

// errStalled is the cause given to a request's context when its body stalls.
var errStalled = errors.New("body stalled")

// newClient is the HTTP client for the listing and the downloads. Like
// package fetch's, it has no overall timeout (a slow but live 55 MB download
// must finish), bounds connecting and waiting for headers, and refuses a
// redirect from https to http.
func newClient(opts Options) *http.Client {
	connect := or(opts.Fetch.ConnectTimeout, fetch.DefaultConnectTimeout)
	header := or(opts.Fetch.ResponseHeaderTimeout, fetch.DefaultResponseHeaderTimeout)
	tr := opts.Transport
	if tr == nil {
		dialer := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
		tr = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   connect,
			ResponseHeaderTimeout: header,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
				return fmt.Errorf("refusing redirect from https to http (%s)", req.URL.Redacted())
			}
			return nil
		},
	}
}

func or(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// source is one place to try for the tarball; its signature is beside it.
type source struct {
	u     *url.URL
	local bool // file://: readable offline
}

// sources lists the mirror (if any) then the URLs; offline keeps the local
// ones and returns how many network sources it dropped.
func sources(fo fetch.Options, name string, urls []string) ([]source, int, error) {
	var all []source
	if fo.Mirror != "" {
		m, err := parseMirror(fo.Mirror)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, source{u: m.JoinPath(name), local: m.Scheme == "file"})
	}
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil {
			return nil, 0, fmt.Errorf("source URL %q: %w", s, err)
		}
		all = append(all, source{u: u, local: u.Scheme == "file"})
	}
	if !fo.Offline {
		return all, 0, nil
	}
	var local []source
	for _, s := range all {
		if s.local {
			local = append(local, s)
		}
	}
	return local, len(all) - len(local), nil
}

// parseMirror accepts what fetch.Options.Mirror accepts: a directory, a
// file:// URL or an http(s):// URL.
func parseMirror(s string) (*url.URL, error) {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("mirror %q: %w", s, err)
		}
		switch u.Scheme {
		case "http", "https", "file":
			return u, nil
		}
		return nil, fmt.Errorf("mirror %q: unsupported scheme %q (want a directory, file://, http:// or https://)", s, u.Scheme)
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return nil, fmt.Errorf("mirror %q: %w", s, err)
	}
	return &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}, nil
}

func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// download tries each source in order for the tarball and the signature
// beside it, staging both in dir. A source fails as a whole (and the next one
// is tried) if either file is missing or obviously not what it claims to be;
// judging the signature is the caller's business.
func download(ctx context.Context, client *http.Client, fo fetch.Options, dir, name string, urls []string, logf func(string, ...any)) (*downloaded, error) {
	srcs, skipped, err := sources(fo, name, urls)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", name, err)
	}
	idle := or(fo.IdleTimeout, fetch.DefaultIdleTimeout)
	fe := &fetch.Error{Name: name, Offline: fo.Offline, Skipped: skipped}
	for _, src := range srcs {
		logf("trying %s", src.u.Redacted())
		dl, err := tryOne(ctx, client, idle, src, filepath.Join(dir, name))
		if err == nil {
			return dl, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("download %s from %s: %w", name, src.u.Redacted(), context.Cause(ctx))
		}
		fe.Attempts = append(fe.Attempts, fetch.Attempt{URL: src.u.Redacted(), Tries: 1, Err: err})
	}
	return nil, fe
}

// gzipMagic starts every .tar.gz; anything else (an HTML error page served
// with 200, say) is not worth hashing and checking a signature over.
var gzipMagic = []byte{0x1f, 0x8b}

// tryOne stages the tarball from src at dst and its signature at dst+".asc".
func tryOne(ctx context.Context, client *http.Client, idle time.Duration, src source, dst string) (*downloaded, error) {
	body, err := open(ctx, client, idle, src.u)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	if body.length > MaxTarballSize {
		return nil, fmt.Errorf("%w: declares %d bytes, limit %d", fetch.ErrTooLarge, body.length, MaxTarballSize)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	head := &headBuf{max: 512}
	n, copyErr := io.Copy(io.MultiWriter(out, h, head), io.LimitReader(body, MaxTarballSize+1))
	if err := out.Close(); err != nil && copyErr == nil {
		copyErr = err
	}
	switch {
	case copyErr != nil:
		return nil, body.fail(copyErr, n)
	case n > MaxTarballSize:
		return nil, fmt.Errorf("%w: more than %d bytes", fetch.ErrTooLarge, MaxTarballSize)
	case n == 0:
		return nil, errors.New("empty file")
	case !bytes.HasPrefix(head.buf, gzipMagic):
		return nil, fmt.Errorf("not a gzip file (%d bytes%s, starting %q)", n, contentType(body.contentType), start(head.buf))
	}
	dl := &downloaded{tarball: dst, sha256: hex.EncodeToString(h.Sum(nil)), size: n, from: src.u.Redacted()}

	ascURL := *src.u
	ascURL.Path += ".asc"
	ascURL.RawPath = ""
	asc, err := readSmall(ctx, client, idle, &ascURL, fetch.MaxSignatureSize)
	if err != nil {
		return nil, fmt.Errorf("tarball served (%d bytes), but its signature %s: %w", n, ascURL.Redacted(), err)
	}
	if !bytes.Contains(asc, []byte("-----BEGIN PGP SIGNATURE-----")) {
		return nil, fmt.Errorf("tarball served, but %s is not an armored OpenPGP signature (starting %q)", ascURL.Redacted(), start(asc))
	}
	if err := os.WriteFile(dst+".asc", asc, 0o644); err != nil {
		return nil, err
	}
	dl.asc, dl.ascFrom = asc, ascURL.Redacted()
	return dl, nil
}

// readSmall reads a whole small file (at most limit bytes) from u.
func readSmall(ctx context.Context, client *http.Client, idle time.Duration, u *url.URL, limit int64) ([]byte, error) {
	body, err := open(ctx, client, idle, u)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	if body.length > limit {
		return nil, fmt.Errorf("%w: declares %d bytes, limit %d", fetch.ErrTooLarge, body.length, limit)
	}
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, body.fail(err, int64(len(b)))
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", fetch.ErrTooLarge, limit)
	}
	if len(b) == 0 {
		return nil, errors.New("empty file")
	}
	return b, nil
}

// body is an open source: a local file or an HTTP 200 response.
type body struct {
	io.Reader
	close       func()
	length      int64 // declared size, -1 unknown
	contentType string
	fail        func(err error, got int64) error // describes a read error after got bytes
}

func (b *body) Close() { b.close() }

// open opens u: a file:// URL directly, http(s) with a GET whose body must
// keep arriving (no read may wait longer than idle).
func open(ctx context.Context, client *http.Client, idle time.Duration, u *url.URL) (*body, error) {
	if u.Scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("file URL with host %q: only local files are supported", u.Host)
		}
		f, err := os.Open(filepath.FromSlash(u.Path))
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %w", fetch.ErrNotFound, err)
		}
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("%s is not a regular file", u.Path)
		}
		return &body{
			Reader: ctxio.Reader(ctx, f),
			close:  func() { f.Close() },
			length: st.Size(),
			fail: func(err error, got int64) error {
				return fmt.Errorf("read after %d bytes: %w", got, err)
			},
		}, nil
	}

	rctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	// The bytes as stored: Go's transparent gzip would turn a .tar.gz that a
	// server labels "Content-Encoding: gzip" into a .tar.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "osslbuild")
	resp, err := client.Do(req)
	if err != nil {
		cancel(nil)
		return nil, netErr(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel(nil)
		return nil, &statusError{code: resp.StatusCode, status: resp.Status}
	}
	// Re-armed on every read: a stalled transfer fails within idle, a slow
	// but steady one may take as long as it needs.
	timer := time.AfterFunc(idle, func() { cancel(errStalled) })
	return &body{
		Reader:      &idleReader{r: resp.Body, t: timer, d: idle},
		close:       func() { timer.Stop(); resp.Body.Close(); cancel(nil) },
		length:      resp.ContentLength,
		contentType: resp.Header.Get("Content-Type"),
		fail: func(err error, got int64) error {
			if errors.Is(context.Cause(rctx), errStalled) {
				return fmt.Errorf("stalled: no data for %v (after %d bytes)", idle, got)
			}
			return fmt.Errorf("connection lost after %d bytes: %w", got, netErr(err))
		},
	}, nil
}

// netErr drops the *url.Error wrapper: the URL is already on the line.
func netErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusError is an HTTP answer other than 200; 404 and 410 match
// fetch.ErrNotFound.
type statusError struct {
	code   int
	status string
}

func (e *statusError) Error() string { return "HTTP " + e.status }

func (e *statusError) Is(target error) bool {
	return target == fetch.ErrNotFound && (e.code == http.StatusNotFound || e.code == http.StatusGone)
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

// headBuf keeps the first max bytes written to it.
type headBuf struct {
	max int
	buf []byte
}

func (h *headBuf) Write(p []byte) (int, error) {
	if room := h.max - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func contentType(ct string) string {
	if ct == "" {
		return ""
	}
	return ", Content-Type " + ct
}

// start is the beginning of b for an error message.
func start(b []byte) string {
	s := strings.TrimSpace(string(b[:min(len(b), 60)]))
	if len(b) > 60 {
		s += "..."
	}
	return s
}
