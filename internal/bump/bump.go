// Package bump adds a new upstream OpenSSL release to a recipe: the logic of
// `go tool mage recipe:bump X.Y.Z` (or -series=X.Y, the newest release of a
// series according to the release listing).
//
// The steps, in order, and why:
//
//  1. The recipe is parsed first: an invalid recipe, or one that already has
//     the version (ErrExists), is refused before anything is downloaded.
//  2. The tarball is downloaded with no pinned digest (there is none yet):
//     from the mirror (OSSLBUILD_MIRROR semantics: <mirror>/<name>), then
//     from the upstream URLs (UpstreamURLs), streamed into a temporary file
//     while its sha256 and size are computed, bounded by MaxTarballSize
//     (fetch.Discover: fetch's sources order, retries, timeouts and offline
//     rules). Its detached signature is the "<url>.asc" beside whichever
//     source served the tarball (fetch.DiscoverSignature). The ".sha256"
//     files upstream publishes are not used: they come from the same place
//     as the tarball and prove nothing.
//  3. The signature is verified with package signature against EVERY key
//     pinned in keys/ (keys.Fingerprints) and in the recipe's release_keys
//     (a consumer's own, beside its recipe). Pinned keys change only by a
//     reviewed commit, so "any pinned key" is exactly the set of signers the
//     project (or the consumer) has decided to trust; a signature by any other key is refused
//     (signature.ErrUnknownSigner, naming the issuer's key id and
//     fingerprint), as is a bad or expired one. The new [[release]] then
//     lists only the key that actually signed it: the narrowest pin that
//     verifies. A refused signature stops the bump at once; it does not fall
//     through to the next source, since a source serving forged bytes is
//     something to look at, not to route around.
//  4. The tarball must be the release asked for, which a valid signature
//     does not prove: a genuine older release served under the new name
//     carries its genuine signature. A sha256 the recipe already pins to
//     another version is refused before the signature is checked
//     (ErrRelabelled, naming both versions); after the signature, the
//     tarball's top-level directory and its version file (VERSION.dat, or
//     include/openssl/opensslv.h before 3.0) must name the version
//     (source.CheckIdentity, source.ErrIdentity). Like a bad signature, a
//     refusal stops the bump rather than trying the next source.
//  5. Only then is the recipe rewritten, textually so comments and layout
//     survive (see rewrite.go), the result checked by recipe.Parse and by
//     comparing its decoded content with the old recipe plus the new
//     release, and written atomically (temporary file and rename, after
//     checking that nobody changed the file meanwhile).
//
// The release listing (GitHub's, for -series) is the only source of "the
// newest release"; when it cannot be read the error says so (ErrListing)
// and nothing is guessed. Propose (propose.go) runs the steps above in
// dry-run mode for every series the recipe pins, for the recipe-bump
// workflow.
//
// Default policy: `default` moves to the new version only when the new
// version is newer than the current default. Bumping a patch release of an
// older series (3.5.x while the default is 4.0.x) must not silently switch
// what every build produces.
package bump

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/lifecycle"
	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/signature"
)

// DefaultRecipe is the recipe file a bump rewrites when Options.Recipe is "".
const DefaultRecipe = "recipes/openssl.toml"

// MaxTarballSize bounds the unpinned tarball download: with no digest known
// yet it is the only limit on what a source can make us write to disk.
// OpenSSL 4.0.2 is 55 MB.
const MaxTarballSize = 1 << 30

// ErrExists marks a version the recipe already has. With Series this is the
// usual outcome of a weekly run when upstream released nothing: callers may
// treat errors.Is(err, ErrExists) as "nothing to do".
var ErrExists = errors.New("release already in recipe")

// ErrKnownMismatch marks a download whose sha256 or size is not what the
// recipe's known-release line (recipe.KnownReleases) says: two sources
// disagree about the release.
var ErrKnownMismatch = errors.New("the download is not the release the recipe knows")

// ErrRelabelled marks a download whose sha256 the recipe already pins to
// another release: the same bytes cannot be two releases, so the source is
// serving an old release under a new name. Its signature would verify (it is
// genuine, just not the release asked for), so this is checked first.
var ErrRelabelled = errors.New("already pinned as another release")

// ErrNoRelease marks a series for which the listing has no final release.
var ErrNoRelease = errors.New("no release found")

// Options configure Run.
type Options struct {
	// Recipe is the recipe file to rewrite; "" means DefaultRecipe.
	Recipe string
	// Version is the release to add, X.Y.Z. Exactly one of Version and
	// Series must be set.
	Version string
	// Series (e.g. "4.0") adds the newest final release of that series, as
	// the release listing at ListingURL reports it.
	Series string
	// ListingURL is GitHub's releases API for openssl/openssl; ""
	// means DefaultListingURL.
	ListingURL string
	// ListingToken, if set, is sent as a bearer token with the listing
	// requests only (never with a download), and only over https: GitHub
	// allows an anonymous client 60 API requests an hour per address, which
	// runners share. In the bump workflow it is the job's read-only token.
	ListingToken string

	// Fetch supplies the mirror and offline mode (as OSSLBUILD_MIRROR and
	// OSSLBUILD_OFFLINE do for builds), the timeouts and retries, the cache
	// that SeedCache fills, and the transport of every HTTP request
	// (listing, tarball, signature), with the same client rules for all:
	// package fetch's, with its timeouts and its refusal of https-to-http
	// redirects (tests point it at a loopback server). Progress is not used.
	Fetch fetch.Options
	// SeedCache stores the verified tarball and signature in the fetch cache
	// (through fetch.Seed, which checks them against the new pins and records
	// the URLs they were downloaded from), so the first build of the new
	// release need not download them again.
	SeedCache bool
	// DryRun computes and returns the diff without writing the recipe or
	// seeding the cache.
	DryRun bool
	// KeepDefault never moves the recipe's default: a new series is
	// proposed beside the default, and moving to it is a decision of its
	// own.
	KeepDefault bool
	// TempDir is where the download is staged; "" means os.TempDir().
	TempDir string
	// Log receives one line per step (source tried, signer, result); nil
	// discards them.
	Log io.Writer
}

// UpstreamURLs are the download URLs recorded for a new release, in the
// order the existing recipe entries use: recipe.UpstreamURLs' first two,
// GitHub's release asset, then openssl.org's source directory (where the
// newest release of each series lives; upstream moves older ones to
// source/old/<series>/ later).
func UpstreamURLs(v string) []string { return recipe.UpstreamURLs(v)[:2] }

// Result is what Add found and did: the verified release and the evidence
// for it, in the form a reviewer reads (the pull request body of the bump
// workflow is made from it).
type Result struct {
	Recipe       string           // the recipe file
	Series       string           // Options.Series, if the version came from the listing
	ListingURL   string           // the listing asked, with Series
	Release      recipe.Release   // the new [[release]]: version, sha256, size, URLs, signer
	TarballURL   string           // where the tarball was downloaded from
	SignatureURL string           // where its signature was downloaded from
	Signature    signature.Result // who signed it, when
	Identity     source.Identity  // what the tarball says it is
	OldDefault   string           // default before
	NewDefault   string           // default after (== OldDefault if unmoved)
	Before       []byte           // the recipe's bytes before
	After        []byte           // the recipe's bytes after
	Diff         string           // unified diff from Before to After
	Written      bool             // After was written to Recipe (not a dry run)
}

// Add adds the release named by opts to the recipe and returns everything
// it checked, with a unified diff of the change (Result.Diff). On any error
// the recipe file is left untouched and the Result is nil.
func Add(ctx context.Context, opts Options) (*Result, error) {
	_, logf := logger(opts.Log)
	path, orig, old, err := readRecipe(opts.Recipe)
	if err != nil {
		return nil, err
	}

	res := &Result{Recipe: path, Series: opts.Series, Before: orig, OldDefault: old.Default}
	ver := opts.Version
	switch {
	case ver != "" && opts.Series != "":
		return nil, fmt.Errorf("bump: give a version (%s) or a series (%s), not both", ver, opts.Series)
	case ver == "" && opts.Series == "":
		return nil, errors.New("bump: no version or series given")
	case opts.Series != "":
		if opts.Fetch.Offline {
			return nil, fmt.Errorf("bump: series %s: finding its newest release needs the release listing, and offline mode is on; give the version instead", opts.Series)
		}
		l := Listing{URL: opts.ListingURL, Client: fetch.HTTPClient(opts.Fetch), Token: opts.ListingToken}
		res.ListingURL = l.url()
		if ver, err = l.Latest(ctx, opts.Series); err != nil {
			if errors.Is(err, ErrListing) {
				return nil, fmt.Errorf("bump: series %s: %w; without it the newest %s release is unknown: give the version instead (recipe:bump %s.N)", opts.Series, err, opts.Series, opts.Series)
			}
			return nil, fmt.Errorf("bump: %w", err)
		}
		logf("series %s: newest release is %s (from %s)", opts.Series, ver, res.ListingURL)
	}
	if _, err := osslver.ParseRelease(ver); err != nil {
		return nil, fmt.Errorf("bump: version %q: want X.Y.Z", ver)
	}
	if _, err := old.Release(ver); err == nil {
		return nil, fmt.Errorf("bump: %s: OpenSSL %s: %w", path, ver, ErrExists)
	}

	rel := recipe.Release{
		Version: ver,
		URLs:    UpstreamURLs(ver),
		Keys:    old.Keys,
	}
	staged, err := os.MkdirTemp(opts.TempDir, "osslbuild-bump-")
	if err != nil {
		return nil, fmt.Errorf("bump %s: staging directory: %w", ver, err)
	}
	defer os.RemoveAll(staged)

	// The downloads are staged in the private directory, never in a cache,
	// so the fetcher's cache is that directory too: a bump needs no user
	// cache unless it seeds one.
	fo := opts.Fetch
	fo.CacheDir = staged
	fetcher, err := fetch.New(fo)
	if err != nil {
		return nil, fmt.Errorf("bump %s: %w", ver, err)
	}
	dl, err := download(ctx, fetcher, rel.FileName(), rel.URLs, logf)
	if err != nil {
		return nil, fmt.Errorf("bump %s: %w", ver, err)
	}
	tb := dl.tarball
	rel.SHA256, rel.Size = tb.SHA256, tb.Size
	res.TarballURL, res.SignatureURL = tb.URL, dl.sig.URL
	logf("downloaded %s from %s: sha256 %s, %d bytes", rel.FileName(), tb.URL, tb.SHA256, tb.Size)
	for _, other := range old.Releases {
		if strings.EqualFold(other.SHA256, tb.SHA256) && other.Version != ver {
			return nil, fmt.Errorf("bump %s: refusing %s from %s: %w: sha256 %s is OpenSSL %s in %s, so it cannot be OpenSSL %s", ver, rel.FileName(), tb.URL, ErrRelabelled, tb.SHA256, other.Version, path, ver)
		}
	}
	for _, k := range recipe.KnownReleases(orig) {
		if k.Version == ver && (k.SHA256 != tb.SHA256 || k.Size != tb.Size) {
			return nil, fmt.Errorf("bump %s: refusing %s from %s: sha256 %s, %d bytes; %s:%d lists OpenSSL %s as known, from another signed source, with sha256 %s, %d bytes: %w",
				ver, rel.FileName(), tb.URL, tb.SHA256, tb.Size, path, k.Line, ver, k.SHA256, k.Size, ErrKnownMismatch)
		}
	}

	// Against every pinned key, osslbuild's and the recipe's release keys
	// (see the package doc for why).
	signer, err := source.VerifyTarball(ctx, tb.Path, dl.asc, recipe.Release{Signers: old.AllSigners(), Keys: old.Keys})
	if err != nil {
		return nil, fmt.Errorf("bump %s: refusing %s from %s: %w", ver, rel.FileName(), tb.URL, err)
	}
	rel.Signers = []string{signer.Signer}
	res.Signature = signer
	logf("signature %s: made %s by %s (signing key %s)", dl.sig.URL, signer.Created.Format(time.RFC3339), signer.Signer, signer.SigningKey)

	id, err := source.CheckIdentity(ctx, tb.Path, ver)
	if err != nil {
		return nil, fmt.Errorf("bump %s: refusing %s from %s: %w", ver, rel.FileName(), tb.URL, err)
	}
	res.Identity = id
	logf("identity: top-level directory %s/, version %s in %s", id.TopDir, id.Version, strings.Join(id.VersionFiles, ", "))

	setDefault := !opts.KeepDefault && newer(ver, old.Default)
	mark := ""
	if ser, ok := lifecycle.Of(ver); ok && ser.Ended(time.Now()) {
		mark = recipe.MarkLine(ser)
		logf("warning: %s; the release is marked in the recipe", ser.EndedOn())
	}
	updated, err := rewrite(orig, rel, setDefault, mark)
	if err != nil {
		return nil, fmt.Errorf("bump %s: rewrite %s: %w", ver, path, err)
	}
	updated = dropKnown(updated, ver)
	if err := checkRewrite(path, orig, updated, rel, setDefault); err != nil {
		return nil, fmt.Errorf("bump %s: rewrite %s: %w", ver, path, err)
	}
	res.NewDefault = old.Default
	if setDefault {
		res.NewDefault = ver
		logf("default: %s -> %s", old.Default, ver)
	} else {
		logf("default stays %s (newer than %s)", old.Default, ver)
	}
	res.Release, res.After = rel, updated
	res.Diff = UnifiedDiff(path, path, string(orig), string(updated))
	if opts.DryRun {
		return res, nil
	}

	if opts.SeedCache {
		if err := seed(ctx, opts.Fetch, rel, dl); err != nil {
			return nil, fmt.Errorf("bump %s: seed the cache: %w", ver, err)
		}
	}
	if err := writeAtomic(path, orig, updated); err != nil {
		return nil, fmt.Errorf("bump %s: %w", ver, err)
	}
	res.Written = true
	logf("wrote %s", path)
	return res, nil
}

// logger returns w (io.Discard if nil) and a function that logs a line to it.
func logger(w io.Writer) (io.Writer, func(format string, args ...any)) {
	if w == nil {
		w = io.Discard
	}
	return w, func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
}

// readRecipe reads the recipe file at path ("" means DefaultRecipe), which
// must be valid before a bump, and returns its path, bytes and parse.
func readRecipe(path string) (string, []byte, *recipe.Recipe, error) {
	path = cmp.Or(path, DefaultRecipe)
	b, err := recipe.ReadFile(path)
	if err != nil {
		return "", nil, nil, fmt.Errorf("bump: read recipe: %w", err)
	}
	r, err := recipe.Parse(path, b)
	if err != nil {
		return "", nil, nil, fmt.Errorf("bump: the recipe must be valid before a bump: %w", err)
	}
	return path, b, r, nil
}

// newer reports whether a is a later version than b (b unparsable: true).
func newer(a, b string) bool {
	va, err := osslver.Parse(a)
	if err != nil {
		return false
	}
	vb, err := osslver.Parse(b)
	if err != nil {
		return true
	}
	return osslver.Less(vb, va)
}

// seed puts the verified files into the fetch cache through fetch's Seed,
// which checks them against the new release's pins (and the signature with
// OpenPGP) exactly as a build will, and records the URLs they were really
// downloaded from, not the staging directory that is removed afterwards.
func seed(ctx context.Context, fo fetch.Options, rel recipe.Release, dl *downloaded) error {
	f, err := fetch.New(fetch.Options{CacheDir: fo.CacheDir, Offline: true, Backoff: []time.Duration{}})
	if err != nil {
		return err
	}
	file := source.FileFor(rel)
	tb, err := f.Seed(ctx, file, dl.tarball.Path, dl.tarball.URL)
	if err != nil {
		return err
	}
	var signer signature.Result
	_, err = f.SeedSignature(ctx, file, tb, dl.sig.Path, dl.sig.URL, source.SignatureCheck(tb.Path, rel, &signer))
	return err
}
