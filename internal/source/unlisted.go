package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/release"
	"github.com/osslbuild/osslbuild/internal/source/signature"
)

// ErrDigest marks a download whose sha256 is not the one given for the
// release.
var ErrDigest = errors.New("sha256 is not the one given")

// MaxUnlistedSize bounds the download of a release the recipe does not
// list: with no pinned size it is the only limit on what a source can make
// us write. OpenSSL 4.0.2 is 55 MB.
const MaxUnlistedSize = 1 << 30

// FetchUnlisted fetches and proves a release the recipe does not list,
// which only the caller's sha256 pins (recipe.Resolve with listed false:
// upstream's URLs, every pinned key, no size yet).
//
// The tarball comes from the mirror, then upstream's URLs, and a source
// counts only if it serves bytes with exactly the given sha256 and the
// detached signature beside them. Then, before anything enters the cache:
// the signature must verify against the pinned keys (any of osslbuild's
// keys/ and of the recipe's release keys, judged when it signed), and the tarball must name the version asked for in its
// top-level directory and version file (CheckIdentity: a genuine older
// release served under the new name carries a valid signature too). Only
// then is it stored in the verified cache, where the next run finds it
// without downloading. The Verified it returns carries the release with its
// measured size and upstream's URLs, for the plan and the manifest.
func FetchUnlisted(ctx context.Context, f *fetch.Fetcher, rel release.Release) (*Verified, error) {
	name := rel.FileName()
	if rel.SHA256 == "" || len(rel.Signers) == 0 || rel.Version == "" {
		return nil, fmt.Errorf("fetch %s: an unlisted release needs a version, the sha256 given for it and the signers to check (got %+v)", name, rel)
	}
	if v, ok := cachedUnlisted(ctx, f, rel); ok {
		return v, nil
	}
	var sig fetch.Discovered
	d, err := f.Discover(ctx, fetch.Discovery{Name: name, URLs: rel.URLs, MaxSize: MaxUnlistedSize,
		Accept: func(ctx context.Context, d fetch.Discovered) error {
			if d.SHA256 != rel.SHA256 {
				return fmt.Errorf("%w: got sha256 %s (%d bytes), want %s, the sha256 given for OpenSSL %s", ErrDigest, d.SHA256, d.Size, rel.SHA256, rel.Version)
			}
			s, err := f.DiscoverSignature(ctx, d)
			if err != nil {
				return fmt.Errorf("tarball served (%d bytes, sha256 as given), but not its signature: %w", d.Size, err)
			}
			sig = s
			return nil
		}})
	if err != nil {
		return nil, fmt.Errorf("OpenSSL %s (not in the recipe, pinned by the sha256 given): %w", rel.Version, err)
	}
	defer os.Remove(d.Path)
	defer os.Remove(sig.Path)
	// Plain names, in a private directory: errors name the file as
	// published, and the cache takes it from here.
	dir, err := os.MkdirTemp(filepath.Dir(d.Path), ".unlisted-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	staged := filepath.Join(dir, name)
	if err := errors.Join(os.Rename(d.Path, staged), os.Rename(sig.Path, staged+".asc")); err != nil {
		return nil, err
	}
	refuse := func(err error) (*Verified, error) {
		return nil, fmt.Errorf("OpenSSL %s: refusing %s from %s: %w", rel.Version, name, d.URL, err)
	}
	asc, err := os.ReadFile(staged + ".asc")
	if err != nil {
		return refuse(err)
	}
	signer, err := VerifyTarball(ctx, staged, asc, rel)
	if err != nil {
		return refuse(fmt.Errorf("signature %s: %w", sig.URL, err))
	}
	if _, err := CheckIdentity(ctx, staged, rel.Version); err != nil {
		return refuse(err)
	}

	// Proven: store both in the cache, which records where they were
	// downloaded from (never the staging copy), so that a later build from
	// the cache records the same sources as this one.
	rel.Size = d.Size
	seeder, err := cacheOnly(f)
	if err != nil {
		return nil, err
	}
	file := FileFor(rel)
	tb, err := seeder.Seed(ctx, file, staged, d.URL)
	if err != nil {
		return nil, fmt.Errorf("OpenSSL %s: store in the cache: %w", rel.Version, err)
	}
	var cached signature.Result
	sr, err := seeder.SeedSignature(ctx, file, tb, staged+".asc", sig.URL, SignatureCheck(tb.Path, rel, &cached))
	if err != nil {
		return nil, fmt.Errorf("OpenSSL %s: store in the cache: %w", rel.Version, err)
	}
	if cached.SigningKey != signer.SigningKey {
		return nil, fmt.Errorf("OpenSSL %s: the cached signature is not the one verified (signing key %s, then %s)", rel.Version, signer.SigningKey, cached.SigningKey)
	}
	return &Verified{Release: rel, Tarball: tb, Signature: &sr, Signer: &cached}, nil
}

// cachedUnlisted finds a release fetched and proven before: the cache holds
// it under its sha256 (which also tells its size), with its signature. The
// signature and the identity are checked again, as for any cache hit.
func cachedUnlisted(ctx context.Context, f *fetch.Fetcher, rel release.Release) (*Verified, bool) {
	fi, err := os.Stat(filepath.Join(f.CacheDir(), "sha256", rel.SHA256, rel.FileName()))
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	c, err := cacheOnly(f)
	if err != nil {
		return nil, false
	}
	local := rel
	local.Size, local.URLs = fi.Size(), nil
	v, err := Fetch(ctx, c, local)
	if err != nil {
		return nil, false
	}
	if _, err := CheckIdentity(ctx, v.Tarball.Path, rel.Version); err != nil {
		return nil, false
	}
	rel.Size = fi.Size()
	v.Release = rel
	return v, true
}

// cacheOnly is a fetcher of f's cache that reaches nothing else: no mirror,
// no network, no retries; local sources come from the file URLs given.
func cacheOnly(f *fetch.Fetcher) (*fetch.Fetcher, error) {
	return fetch.New(fetch.Options{CacheDir: f.CacheDir(), Offline: true, Backoff: []time.Duration{}})
}
