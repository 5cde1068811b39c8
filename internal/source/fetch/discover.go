package fetch

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
)

// Discovery is a file to download whose digest is not known yet (a new
// release, before anything pins it). It is fetched like a File: mirror
// first, then URLs, with the same retries, timeouts and offline rules; but
// with nothing to compare against, only MaxSize, emptiness and HTML
// detection judge the bytes, and the result is a temporary file, never a
// cache entry.
type Discovery struct {
	Name string   // plain file name; the mirror serves <Mirror>/<Name>
	URLs []string // http(s) or file URLs, tried in order after the mirror
	// MaxSize bounds the download: with no pinned size it is the only limit
	// on what a source can make us write.
	MaxSize int64
	// Accept, if set, judges what a source served before Discover returns it
	// (say, that its signature is beside it). An error fails that source
	// like a bad download: the file is removed, the error is recorded for
	// that source, and the next source is tried. It is not retried.
	Accept func(ctx context.Context, d Discovered) error
}

// Discovered is a downloaded file that nothing has verified yet.
type Discovered struct {
	Name   string // the file name asked for
	Path   string // a private temporary file; the caller removes it
	URL    string // the source that served it
	SHA256 string // hex digest of the bytes at Path
	Size   int64
	// Failed lists the sources tried before URL, and why each failed, for
	// callers that log what happened.
	Failed []Attempt
}

// Discover downloads want.Name from the mirror and want.URLs into a private
// temporary file, hashing as it streams. Nothing is pinned, so the caller
// must verify the file (OpenPGP) before trusting it, and remove it when
// done. A failed discovery returns an *Error listing every source and leaves
// no file behind.
func (f *Fetcher) Discover(ctx context.Context, want Discovery) (Discovered, error) {
	if err := validName(want.Name); err != nil {
		return Discovered{}, fmt.Errorf("fetch %s: %w", want.Name, err)
	}
	if want.MaxSize <= 0 {
		return Discovered{}, fmt.Errorf("fetch %s: invalid size bound %d", want.Name, want.MaxSize)
	}
	srcs, skipped, err := f.sources(want.Name, "", want.URLs)
	if err != nil {
		return Discovered{}, fmt.Errorf("fetch %s: %w", want.Name, err)
	}
	// The temporary file goes to the cache's staging area, where files a
	// killed process left behind are swept.
	dir := filepath.Join(f.cacheDir, "tmp")
	if err := prepareDir(dir, false); err != nil {
		return Discovered{}, fmt.Errorf("fetch %s: %w", want.Name, err)
	}
	exp := expect{name: want.Name, size: -1, limit: want.MaxSize, what: want.Name, where: "staging"}
	return f.stage(ctx, srcs, skipped, exp, dir, want.Accept)
}

// stage downloads exp.name from the first of srcs that serves what exp
// describes and accept (if set) takes, into a temporary file in dir.
func (f *Fetcher) stage(ctx context.Context, srcs []source, skipped int, exp expect, dir string, accept func(context.Context, Discovered) error) (Discovered, error) {
	if ctx.Err() != nil {
		return Discovered{}, fmt.Errorf("fetch %s: %w", exp.name, ctxErr(ctx))
	}
	fe := &Error{Name: exp.name, Offline: f.opts.Offline, Skipped: skipped}
	var got Discovered
	err := f.trySources(ctx, exp.name, srcs, fe, func(ctx context.Context, src source) error {
		tmp, err := f.receive(ctx, src, exp, dir)
		if err != nil {
			return err
		}
		// Closed: the caller owns the file now, outside the cache's
		// lock-aware sweeps.
		tmp.f.Close()
		d := Discovered{Name: exp.name, Path: tmp.path(), URL: src.String(), SHA256: tmp.sum, Size: tmp.n}
		if accept != nil {
			if err := accept(ctx, d); err != nil {
				os.Remove(d.Path)
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				return &permanentError{err}
			}
		}
		got = d
		return nil
	})
	if err != nil {
		return Discovered{}, err
	}
	got.Failed = fe.Attempts
	return got, nil
}

// DiscoverSignature downloads the detached signature <d.Name>.asc from the
// place that served d (d.URL + ".asc": a signature from anywhere else would
// say nothing about those bytes) into a temporary file beside d.Path. Like
// FetchSignature it is bounded by MaxSignatureSize, must not be empty or an
// HTML page, and must be verified with OpenPGP before it is trusted; the
// caller removes it. Offline, a network origin is not tried.
func (f *Fetcher) DiscoverSignature(ctx context.Context, d Discovered) (Discovered, error) {
	name := d.Name + ".asc"
	if err := validName(d.Name); err != nil {
		return Discovered{}, fmt.Errorf("fetch %s: %w", name, err)
	}
	if d.Path == "" || d.URL == "" {
		return Discovered{}, fmt.Errorf("fetch %s: no discovered file to put it beside (path %q, URL %q)", name, d.Path, d.URL)
	}
	origin, err := url.Parse(d.URL)
	if err != nil {
		return Discovered{}, fmt.Errorf("fetch %s: origin %q: %w", name, d.URL, err)
	}
	if !slices.Contains(schemes, origin.Scheme) {
		return Discovered{}, fmt.Errorf("fetch %s: origin %q: unsupported scheme %q", name, d.URL, origin.Scheme)
	}
	var srcs []source
	skipped := 0
	if local := origin.Scheme == "file"; local || !f.opts.Offline {
		srcs = []source{{u: withSuffix(origin, ".asc"), local: local}}
	} else {
		skipped = 1
	}
	return f.stage(ctx, srcs, skipped, signatureExpect(name, "staging"), filepath.Dir(d.Path), nil)
}
