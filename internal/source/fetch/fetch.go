// Package fetch downloads release files into a verified, content-addressed
// cache.
//
// A file is stored as <cache>/sha256/<hex>/<name> only after its size and
// sha256 match the pinned values, so anything at such a path was verified once;
// it is hashed again on every use all the same, and a corrupted entry is removed
// and fetched again. Downloads stream into a uniquely named temporary file in
// the same directory and are renamed into place, so concurrent fetches (from
// goroutines or processes) never see or leave a half-written file. The
// temporary file is removed on every way out of a fetch, and is locked
// while it lives, so one that a killed process left is removed by the next
// fetch into that entry.
//
// Sources are tried in order: the optional local mirror, then the recipe's
// URLs. Each URL gets bounded retries with exponential backoff for network
// trouble and 5xx; an answer that cannot change (404/410, wrong bytes, a DNS
// failure, a redirect loop, a certificate error) moves on to the next source
// at once. One file has an overall deadline across all its sources and
// retries, and a transfer slower than a minimum rate is cut off.
// A failed fetch returns one *Error listing every source and what happened.
//
// A detached signature has no pinned digest, so the caller's check (OpenPGP
// against pinned keys) runs before a downloaded signature enters the cache
// and again on every cache hit: a signature that fails it is removed and the
// sources are tried in order.
//
// Discover downloads, by the same rules, a file whose digest is not known yet
// (a new release): into a temporary file, bounded in size, for the caller to
// verify; DiscoverSignature fetches the signature beside it.
package fetch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// Defaults for the zero values in Options.
const (
	DefaultConnectTimeout        = 30 * time.Second
	DefaultResponseHeaderTimeout = 60 * time.Second
	DefaultIdleTimeout           = 60 * time.Second
	// DefaultDeadline bounds one file, all sources and retries included: the
	// 55 MB tarball then needs 31 KB/s on average.
	DefaultDeadline = 30 * time.Minute
	// DefaultMinRate and DefaultRateWindow cut off a transfer that receives
	// less than 16 KiB/s over 30 s: a trickle that the idle timeout never
	// catches (one byte every 20 s would otherwise take years).
	DefaultMinRate    = 16 << 10
	DefaultRateWindow = 30 * time.Second
)

// MaxSignatureSize bounds a detached signature: it has no pinned digest, so
// its size is the only thing limiting what a source can make us store.
const MaxSignatureSize = 64 << 10

// defaultBackoff is the wait before each retry of one URL: 3 retries, 7 s in all.
var defaultBackoff = []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second}

// File is what to fetch: a name, its pinned digest and size, and the URLs to
// try, in order.
type File struct {
	Name   string   // plain file name, e.g. "openssl-4.0.2.tar.gz"
	SHA256 string   // hex
	Size   int64    // bytes
	URLs   []string // http(s) or file URLs, tried in order after the mirror
}

// Result says where a verified file is and where its bytes came from.
type Result struct {
	Path   string // the verified file inside the cache
	URL    string // the source that served it (for a cache hit: the source recorded when it was downloaded; "" if unknown)
	Cached bool   // served from the cache without a download
	SHA256 string // hex digest of the file
	Size   int64
	// Evicted, when not nil, says why a cache entry for this file was
	// removed before the file was fetched again (corrupted, or a signature
	// that failed the caller's check).
	Evicted error
}

// Options configure a Fetcher. The zero value fetches into DefaultCacheDir
// with default timeouts and retries.
type Options struct {
	// CacheDir is the cache root; "" means DefaultCacheDir().
	CacheDir string
	// Mirror is tried before the URLs: a directory, a file:// URL or an
	// http(s):// URL; the file is <Mirror>/<name>.
	Mirror string
	// Offline never touches the network: only the cache and a directory or
	// file:// mirror are used.
	Offline bool

	// ConnectTimeout bounds dialling and the TLS handshake.
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for response headers.
	ResponseHeaderTimeout time.Duration
	// IdleTimeout bounds each read of a response body: a transfer that makes
	// no progress for this long fails.
	IdleTimeout time.Duration
	// Deadline bounds the fetch of one file: every source, retry and backoff
	// wait together. 0 means DefaultDeadline; negative means none.
	Deadline time.Duration
	// MinRate is the slowest transfer accepted, in bytes per second,
	// averaged over each RateWindow of a response body. 0 means
	// DefaultMinRate; negative means no minimum.
	MinRate int64
	// RateWindow is the period MinRate is measured over; 0 means
	// DefaultRateWindow.
	RateWindow time.Duration
	// Backoff is the wait before each retry of one URL; its length is the
	// number of retries. nil means 1 s, 2 s, 4 s; an empty non-nil slice
	// means no retries.
	Backoff []time.Duration

	// Progress, if set, is called as bytes of a file arrive (done so far,
	// total expected). It restarts from 0 when a source is retried or
	// abandoned. Calls come from the fetching goroutine. Only pinned
	// downloads (Fetch) report progress: elsewhere the total is unknown.
	Progress func(done, total int64)

	// Transport, if set, carries every HTTP request instead of a transport
	// built from ConnectTimeout and ResponseHeaderTimeout (which it must then
	// enforce itself). Tests point it at a loopback server.
	Transport http.RoundTripper
}

// Fetcher fetches files into one cache. It is safe for concurrent use.
type Fetcher struct {
	opts     Options
	cacheDir string
	mirror   *url.URL // nil: none
	http     *httpGetter
}

// DefaultCacheDir is $OSSLBUILD_CACHE if set, else <user cache dir>/osslbuild
// (~/.cache/osslbuild on Linux, ~/Library/Caches/osslbuild on macOS).
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("OSSLBUILD_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate cache directory (set OSSLBUILD_CACHE): %w", err)
	}
	return filepath.Join(d, "osslbuild"), nil
}

// withDefaults fills opts' zero timeouts and backoff.
func withDefaults(opts Options) Options {
	opts.ConnectTimeout = positive(opts.ConnectTimeout, DefaultConnectTimeout)
	opts.ResponseHeaderTimeout = positive(opts.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	opts.IdleTimeout = positive(opts.IdleTimeout, DefaultIdleTimeout)
	opts.RateWindow = positive(opts.RateWindow, DefaultRateWindow)
	opts.Deadline = cmp.Or(opts.Deadline, DefaultDeadline)
	opts.MinRate = cmp.Or(opts.MinRate, DefaultMinRate)
	if opts.Backoff == nil {
		opts.Backoff = defaultBackoff
	}
	return opts
}

// positive is d, or def when d is not positive.
func positive(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// New returns a Fetcher for opts.
func New(opts Options) (*Fetcher, error) {
	f := &Fetcher{opts: withDefaults(opts)}
	dir := opts.CacheDir
	var err error
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	if f.cacheDir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("cache directory %q: %w", opts.CacheDir, err)
	}
	if opts.Mirror != "" {
		if f.mirror, err = parseMirror(opts.Mirror); err != nil {
			return nil, err
		}
	}
	f.http = &httpGetter{client: HTTPClient(f.opts), idle: f.opts.IdleTimeout}
	return f, nil
}

// CacheDir is the cache root in use.
func (f *Fetcher) CacheDir() string { return f.cacheDir }

// parseMirror accepts a directory path, a file:// URL or an http(s):// URL.
func parseMirror(s string) (*url.URL, error) {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("mirror %q: %w", s, err)
		}
		switch u.Scheme {
		case "http", "https":
			return u, nil
		case "file":
			if _, err := localPath(u); err != nil {
				return nil, fmt.Errorf("mirror %q: %w", s, err)
			}
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

// localPath is the file system path of a file:// URL.
func localPath(u *url.URL) (string, error) {
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("file URL with host %q: only local files are supported", u.Host)
	}
	if u.Path == "" {
		return "", errors.New("file URL without a path")
	}
	return filepath.FromSlash(u.Path), nil
}

func (file File) validate() error {
	if err := validName(file.Name); err != nil {
		return err
	}
	if len(file.SHA256) != 64 || strings.Trim(strings.ToLower(file.SHA256), "0123456789abcdef") != "" {
		return fmt.Errorf("invalid sha256 %q: want 64 hex digits", file.SHA256)
	}
	if file.Size <= 0 {
		return fmt.Errorf("invalid size %d", file.Size)
	}
	return nil
}

// validName refuses anything but a plain, visible file name: names become
// paths, and hidden ones are reserved for temporary files.
func validName(name string) error {
	if name == "" || name == "." || name == ".." ||
		strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("invalid file name %q: want a plain name", name)
	}
	return nil
}

// Path is where the cache keeps file, verified when it was stored: a
// reader that cannot wait for Fetch to hash it again (source.Files) hashes
// what it reads itself. The file may be absent, or since changed.
func (f *Fetcher) Path(file File) string {
	return filepath.Join(f.entryDir(file.SHA256), file.Name)
}

// entryDir is the cache directory for one digest.
func (f *Fetcher) entryDir(sha string) string {
	return filepath.Join(f.cacheDir, "sha256", strings.ToLower(sha))
}

// schemes are those of the URLs a file is fetched from.
var schemes = []string{"http", "https", "file"}

// source is one place to try, as a URL.
type source struct {
	u     *url.URL
	local bool // file://: readable offline
	// origin, if set, is where the bytes at u were downloaded from (a file
	// that Seed stores): the cache records it instead of u.
	origin string
}

func (s source) String() string {
	if s.origin != "" {
		return s.u.String() + " (downloaded from " + s.origin + ")"
	}
	return s.u.String()
}

// recorded is the URL the cache records for bytes from s.
func (s source) recorded() string { return cmp.Or(s.origin, s.u.String()) }

// sources lists the places to try for name, each once: first (a recorded
// origin; skipped if it is not a usable URL), the mirror, then urls. Offline
// keeps only local ones and returns how many it skipped.
func (f *Fetcher) sources(name, first string, urls []string) ([]source, int, error) {
	var all []source
	seen := map[string]bool{}
	add := func(u *url.URL) {
		if k := u.String(); !seen[k] {
			seen[k] = true
			all = append(all, source{u: u, local: u.Scheme == "file"})
		}
	}
	if u, err := url.Parse(first); err == nil && slices.Contains(schemes, u.Scheme) {
		add(u)
	}
	if f.mirror != nil {
		add(f.mirror.JoinPath(name))
	}
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil {
			return nil, 0, fmt.Errorf("source URL %q: %w", s, err)
		}
		if !slices.Contains(schemes, u.Scheme) {
			return nil, 0, fmt.Errorf("source URL %q: unsupported scheme %q", s, u.Scheme)
		}
		add(u)
	}
	if !f.opts.Offline {
		return all, 0, nil
	}
	n := len(all)
	local := slices.DeleteFunc(all, func(s source) bool { return !s.local })
	return local, n - len(local), nil
}

// seedSource is a local file to store in the cache as if downloaded from origin.
func seedSource(path, origin string) (source, error) {
	u, err := url.Parse(origin)
	if err != nil || !slices.Contains(schemes, u.Scheme) {
		return source{}, fmt.Errorf("origin %q: want the http(s) or file URL %s was downloaded from", origin, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return source{}, err
	}
	return source{u: &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}, local: true, origin: origin}, nil
}

// Fetch returns the verified file from the cache, or downloads it into the
// cache from the first source that serves the right bytes.
func (f *Fetcher) Fetch(ctx context.Context, file File) (Result, error) {
	return f.fetch(ctx, file, nil)
}

// Seed stores the file at path, downloaded earlier from origin (say, by
// Discover), in the cache, verified against file's pins like any download;
// the cache records origin as where it came from, never path. A verified
// entry already in the cache is kept.
func (f *Fetcher) Seed(ctx context.Context, file File, path, origin string) (Result, error) {
	src, err := seedSource(path, origin)
	if err != nil {
		return Result{}, fmt.Errorf("seed %s: %w", file.Name, err)
	}
	return f.fetch(ctx, file, []source{src})
}

// fetch is Fetch from srcs, or from the mirror and file.URLs if srcs is nil.
func (f *Fetcher) fetch(ctx context.Context, file File, srcs []source) (Result, error) {
	if err := file.validate(); err != nil {
		return Result{}, fmt.Errorf("fetch %s: %w", file.Name, err)
	}
	file.SHA256 = strings.ToLower(file.SHA256)
	final := f.Path(file)

	res, hit, cacheErr := cached(ctx, final, file.Size+1, func(e *entry, _ Result) error {
		if e.n == file.Size && e.sum == file.SHA256 {
			return nil
		}
		mm := &MismatchError{WantSHA256: file.SHA256, WantSize: file.Size, GotSHA256: e.sum, GotSize: e.n, More: e.n > file.Size, Head: e.head}
		if mm.More {
			mm.GotSHA256 = ""
		}
		return mm
	})
	if hit {
		return res, nil
	}
	want := expect{name: file.Name, sha: file.SHA256, size: file.Size, limit: file.Size, where: "cache"}
	return f.download(ctx, final, want, nil, cacheErr, srcs, "", file.URLs)
}

// download fills the cache entry final with the first source that serves
// what want describes and check (if any) accepts, after a cache lookup that
// found none (cacheErr: what it removed), and returns it: from srcs or, if
// srcs is nil, from first (a recorded origin), the mirror and urls. Each
// try makes one request and, if the bytes are right and check accepts
// them, installs them at final together with a record of the source.
func (f *Fetcher) download(ctx context.Context, final string, want expect, check Check, cacheErr error, srcs []source, first string, urls []string) (Result, error) {
	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("fetch %s: %w", want.name, ctxErr(ctx))
	}
	skipped := 0
	if srcs == nil {
		var err error
		if srcs, skipped, err = f.sources(want.name, first, urls); err != nil {
			return Result{}, fmt.Errorf("fetch %s: %w", want.name, err)
		}
	}
	if err := prepareDir(filepath.Dir(final), true); err != nil {
		return Result{}, fmt.Errorf("fetch %s: %w", want.name, err)
	}
	var res Result
	fe := &Error{Name: want.name, Offline: f.opts.Offline, Skipped: skipped, Cache: cacheErr}
	err := f.trySources(ctx, want.name, srcs, fe, func(ctx context.Context, src source) error {
		tmp, err := f.receive(ctx, src, want, filepath.Dir(final))
		if err != nil {
			return err
		}
		res = Result{Path: final, URL: src.recorded(), SHA256: tmp.sum, Size: tmp.n, Evicted: cacheErr}
		if check != nil {
			if err := check(ctx, Result{Path: tmp.path(), URL: res.URL, SHA256: tmp.sum, Size: tmp.n}); err != nil {
				tmp.discard()
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				return &permanentError{&rejectedError{err}}
			}
		}
		return install(tmp, final, res.URL)
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// cached looks for the cache entry final, hashing at most limit bytes, and
// returns it when fault finds nothing wrong with it (a corrupted file, a
// signature the caller's check refuses). One it faults is removed and
// reported in evicted, naming the file and where it had come from, so the
// final error can mention it; cancellation meanwhile is no fault of the
// entry, which then stays.
func cached(ctx context.Context, final string, limit int64, fault func(e *entry, res Result) error) (res Result, hit bool, evicted error) {
	e, err := openEntry(ctx, final, limit)
	if e == nil {
		return Result{}, false, err
	}
	defer e.fh.Close()
	res = Result{Path: final, URL: readOrigin(final), Cached: true, SHA256: e.sum, Size: e.n}
	switch why := fault(e, res); {
	case why == nil:
		return res, true, nil
	case ctx.Err() != nil:
		return Result{}, false, nil
	default:
		return Result{}, false, evict(final, e.fh, why)
	}
}

// entry is a cache file opened and hashed for verification. It stays open
// so that evict removes it only if it is still this file.
type entry struct {
	fh   *os.File
	sum  string
	n    int64
	head []byte
}

// openEntry opens the cache entry final and hashes at most limit bytes of
// it. A missing entry is no entry and no error; the caller closes e.fh.
func openEntry(ctx context.Context, final string, limit int64) (*entry, error) {
	fh, _, err := ctxio.OpenRegular(final, true)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %w", final, err)
	}
	sum, n, head, err := hashCopy(io.Discard, ctxio.Reader(ctx, fh), limit)
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", final, err)
	}
	return &entry{fh: fh, sum: sum, n: n, head: head}, nil
}

// evict removes the cache entry final (open as fh) that failed verification
// with why, together with its origin record, and returns the error that
// says so, naming the file and where it had come from.
func evict(final string, fh *os.File, why error) error {
	from := ""
	if o := readOrigin(final); o != "" {
		from = " (downloaded from " + o + ")"
	}
	// Only if final is still the file open as fh, so a good copy that
	// another process has just renamed into place survives; a failed
	// removal is replaced by the next rename anyway.
	if sameFile(fh, final) && os.Remove(final) == nil {
		_ = os.Remove(final + originSuffix) // best effort: a stale record only misleads a log line
	}
	return fmt.Errorf("%s%s: %w (removed)", final, from, why)
}

// trySources tries srcs in order, each with retries, until try succeeds for
// one. Each failed source is added to fe, which is the error when all fail,
// or when the deadline for the file (Options.Deadline) passes: then the
// source in progress is the last attempt, with what it had received. The
// caller's cancellation ends the walk at once, naming the source in
// progress rather than listing the ones before it.
func (f *Fetcher) trySources(ctx context.Context, name string, srcs []source, fe *Error, try func(context.Context, source) error) error {
	parent := ctx
	if d := f.opts.Deadline; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, &deadlineExceeded{limit: d})
		defer cancel()
	}
	for i, src := range srcs {
		tries, err := f.tryWithRetries(ctx, func() error { return try(ctx, src) })
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			if parent.Err() != nil {
				return fmt.Errorf("fetch %s from %s: %w", name, src, ctxErr(parent))
			}
			fe.Attempts = append(fe.Attempts, Attempt{URL: src.String(), Tries: tries, Err: atDeadline(ctx, err)})
			fe.Deadline, fe.Untried = f.opts.Deadline, len(srcs)-i-1
			return fe
		}
		fe.Attempts = append(fe.Attempts, Attempt{URL: src.String(), Tries: tries, Err: err})
	}
	return fe
}

// tryWithRetries calls try (one request to one source) until it succeeds,
// fails in a way a retry cannot fix, or the backoff schedule runs out.
func (f *Fetcher) tryWithRetries(ctx context.Context, try func() error) (tries int, err error) {
	for {
		tries++
		err = try()
		if err == nil || ctx.Err() != nil || !retryable(err) || tries > len(f.opts.Backoff) {
			return tries, err
		}
		t := time.NewTimer(f.opts.Backoff[tries-1])
		select {
		case <-ctx.Done():
			t.Stop()
			return tries, err
		case <-t.C:
		}
	}
}

// receive makes one request to src and streams a good answer into a new
// temporary file in dir (see spool). The body is cut off if it arrives
// slower than Options.MinRate.
func (f *Fetcher) receive(ctx context.Context, src source, want expect, dir string) (_ *spooled, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var b *body
	if src.local {
		b, err = openLocal(actx, src.u)
	} else {
		b, err = f.http.get(actx, cancel, src.u)
	}
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if f.opts.MinRate > 0 {
		g := watchRate(f.opts.MinRate, f.opts.RateWindow, cancel)
		defer g.stop()
		b.r = &rateReader{r: b.r, g: g}
	}
	return f.spool(actx, b, want, dir)
}

// Check judges a signature before it is trusted: sig.Path holds the bytes
// (a temporary file for a download, the entry for a cache hit) and sig.URL
// says where they came from. An error rejects them. For a release tarball
// it is OpenPGP verification against the pinned keys.
type Check func(ctx context.Context, sig Result) error

// FetchSignature returns the detached signature <name>.asc for a file that
// Fetch returned, cached beside it (keyed by the file's digest), once check
// accepts it. The place that served the file (tarball.URL + ".asc") is
// tried first, then the mirror and the file's URLs + ".asc" in order; a
// source whose signature check rejects is passed over like one that
// failed. A cached signature is checked on every use: one that fails is
// removed, the sources are tried again, and the error (if all fail) names
// the cache file first. Offline, only local sources are tried. The size of
// a signature is bounded by MaxSignatureSize.
func (f *Fetcher) FetchSignature(ctx context.Context, file File, tarball Result, check Check) (Result, error) {
	return f.fetchSignature(ctx, file, tarball, check, nil)
}

// SeedSignature stores the signature at path, downloaded earlier from
// origin, beside a tarball that Seed stored, as FetchSignature would have:
// check must accept it, and the cache records origin. A cached signature
// that check accepts is kept.
func (f *Fetcher) SeedSignature(ctx context.Context, file File, tarball Result, path, origin string, check Check) (Result, error) {
	src, err := seedSource(path, origin)
	if err != nil {
		return Result{}, fmt.Errorf("seed %s.asc: %w", file.Name, err)
	}
	return f.fetchSignature(ctx, file, tarball, check, []source{src})
}

// fetchSignature is FetchSignature from srcs, or from the usual sources if
// srcs is nil.
func (f *Fetcher) fetchSignature(ctx context.Context, file File, tarball Result, check Check, srcs []source) (Result, error) {
	name := file.Name + ".asc"
	if err := file.validate(); err != nil {
		return Result{}, fmt.Errorf("fetch %s: %w", name, err)
	}
	if check == nil {
		return Result{}, fmt.Errorf("fetch %s: no check given: a signature is only cached once verified", name)
	}
	sha := strings.ToLower(file.SHA256)
	if !strings.EqualFold(tarball.SHA256, sha) {
		return Result{}, fmt.Errorf("fetch %s: tarball result is for sha256 %q, not %s", name, tarball.SHA256, sha)
	}
	final := filepath.Join(f.entryDir(sha), name)

	// A cached signature must be plausible and pass check.
	res, hit, cacheErr := cached(ctx, final, MaxSignatureSize+1, func(e *entry, res Result) error {
		switch {
		case e.n == 0:
			return errors.New("empty file")
		case e.n > MaxSignatureSize:
			return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxSignatureSize)
		case looksHTML("", e.head):
			return fmt.Errorf("not a signature (%d bytes)%s", e.n, describeContent("", e.head))
		}
		if err := check(ctx, res); err != nil {
			return &rejectedError{err}
		}
		return nil
	})
	if hit {
		return res, nil
	}
	origin := ""
	if u, err := url.Parse(tarball.URL); tarball.URL != "" && err == nil {
		origin = withSuffix(u, ".asc").String()
	}
	urls := make([]string, len(file.URLs))
	for i, u := range file.URLs {
		urls[i] = u + ".asc"
	}
	return f.download(ctx, final, signatureExpect(name, "cache"), check, cacheErr, srcs, origin, urls)
}

// signatureExpect is what a detached signature must be: no pinned digest,
// at most MaxSignatureSize bytes, not empty, not an HTML page.
func signatureExpect(name, where string) expect {
	return expect{name: name, size: -1, limit: MaxSignatureSize, what: "a signature", where: where}
}

// ctxErr is ctx's error, with its cause when one was given (e.g. "interrupted"),
// so errors.Is works for both.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}

// withSuffix returns u with suffix appended to its path.
func withSuffix(u *url.URL, suffix string) *url.URL {
	v := *u
	v.Path += suffix
	if v.RawPath != "" {
		v.RawPath += url.PathEscape(suffix)
	}
	return &v
}
