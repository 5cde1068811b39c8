package bump

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/keys"
)

// Proposal is one series' newer release, downloaded and verified exactly as
// `recipe:bump X.Y.Z` does, as a recipe change for someone to review: the
// recipe-bump workflow turns each into one pull request.
type Proposal struct {
	Series string // "3.5"
	Pinned string // the newest release of the series the recipe had
	*Result
}

// ProposeOptions configure Propose. Of Options, Recipe, ListingURL,
// ListingToken, Fetch, TempDir and Log are used; the recipe is
// never written and the cache never seeded.
type ProposeOptions struct {
	Options
	// Series restricts the run to these series; nil means every series
	// the recipe pins a release of.
	Series []string
}

// SeriesOf lists the series (X.Y) the recipe pins releases of, newest first.
func SeriesOf(r *recipe.Recipe) []string {
	var out []string
	for _, v := range r.Versions() {
		if s := seriesOf(v); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// seriesOf is "3.5" for "3.5.7"; "" for no version.
func seriesOf(v string) string {
	s, _ := osslver.SeriesOf(v)
	return s
}

// Propose asks the release listing once for the newest final release of
// each series and, for every series whose newest release is newer than
// the newest the recipe pins, runs the bump in dry-run mode against the
// recipe as it is. A series with nothing new gives one log line and no
// proposal. A series whose release fails any check (download, signature,
// sha256 already pinned to another release, top-level directory, version
// file) gives no proposal, a log line saying why, and an error; the other
// series are still proposed. The returned error joins every series' error;
// a listing that cannot be read fails the whole run (ErrListing), since
// without it no series' newest release is known.
func Propose(ctx context.Context, o ProposeOptions) ([]Proposal, error) {
	logw, logf := logger(o.Log)
	path, _, r, err := readRecipe(o.Recipe)
	if err != nil {
		return nil, err
	}
	pinned := SeriesOf(r)
	series := pinned
	if o.Series != nil {
		series = nil
		for _, s := range o.Series {
			if !slices.Contains(pinned, s) {
				return nil, fmt.Errorf("bump: series %q: %s pins no release of it (it pins %s); a new series is added by hand with recipe:bump X.Y.Z", s, path, strings.Join(pinned, ", "))
			}
			if !slices.Contains(series, s) {
				series = append(series, s)
			}
		}
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("bump: %s pins no release", path)
	}
	if o.Fetch.Offline {
		return nil, fmt.Errorf("bump: series %s: finding the newest releases needs the release listing, and offline mode is on", strings.Join(series, ", "))
	}

	listing := Listing{URL: o.ListingURL, Client: fetch.HTTPClient(o.Fetch), Token: o.ListingToken}
	// A run over every pinned series also looks for a series upstream
	// started since the newest one pinned (4.1 beside 4.0): proposed as its
	// own change, never moving the default. A series older than the newest
	// pinned that the recipe does not pin (3.4) is the recipe's choice.
	newest := ""
	if o.Series == nil {
		newest = pinned[0]
	}
	latest, fresh, err := listing.LatestAndNewer(ctx, newest, series...)
	if err != nil {
		logf("release listing: %v", err)
		return nil, fmt.Errorf("bump: series %s: %w; without it the newest release of a series is unknown", strings.Join(series, ", "), err)
	}

	var out []Proposal
	var errs []error
	newSeries := slices.SortedFunc(maps.Keys(fresh), func(a, b string) int {
		return osslver.Compare(osslver.MustParse(b+".0"), osslver.MustParse(a+".0"))
	})
	maps.Copy(latest, fresh)
	for _, s := range append(newSeries, series...) {
		have := newestIn(r, s)
		up, ok := latest[s]
		switch {
		case have == "":
			logf("series %s: a new series upstream, newest release %s; verifying it (proposed beside the default, which stays %s)", s, up, r.Default)
		case !ok:
			err := fmt.Errorf("series %s: %w in the release listing %s", s, ErrNoRelease, listing.url())
			logf("%v", err)
			errs = append(errs, err)
			continue
		case up == have:
			logf("series %s: newest release %s is in the recipe; nothing to do", s, up)
			continue
		case !newer(up, have):
			logf("series %s: the recipe's %s is newer than the listing's newest, %s; nothing to do", s, have, up)
			continue
		}
		if have != "" {
			logf("series %s: %s is newer than the recipe's %s; verifying it", s, up, have)
		}
		opts := o.Options
		opts.Recipe, opts.Version, opts.Series = path, up, ""
		opts.DryRun, opts.SeedCache = true, false
		opts.KeepDefault = have == ""
		opts.Log = prefixWriter{w: logw, prefix: "series " + s + ": "}
		res, err := Add(ctx, opts)
		if err != nil {
			logf("series %s: nothing proposed: %v", s, err)
			errs = append(errs, fmt.Errorf("series %s: %w", s, err))
			continue
		}
		res.Series, res.ListingURL = s, listing.url()
		logf("series %s: proposing %s", s, up)
		out = append(out, Proposal{Series: s, Pinned: have, Result: res})
	}
	return out, errors.Join(errs...)
}

// newestIn is the newest release of series s that r pins.
func newestIn(r *recipe.Recipe, s string) string {
	for _, v := range r.Versions() {
		if seriesOf(v) == s {
			return v
		}
	}
	return ""
}

// prefixWriter prefixes each write (Add logs whole lines) with prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// The files of a proposal directory, read by scripts/bump-pull-requests.sh.
const (
	ProposalRecipe = "openssl.toml" // the recipe with the release added
	ProposalDiff   = "recipe.diff"  // the change, as a unified diff
	ProposalTitle  = "title.txt"    // the pull request's title, one line
	ProposalBody   = "body.md"      // the pull request's body
	ProposalCommit = "commit.txt"   // the commit message
)

// Title is the pull request's title.
func (p Proposal) Title() string {
	t := "recipe: OpenSSL " + p.Release.Version + " (" + p.Series + " series)"
	if p.Pinned == "" {
		t = "recipe: OpenSSL " + p.Release.Version + " (new " + p.Series + " series)"
	}
	if p.NewDefault != p.OldDefault {
		t += ", the new default"
	}
	return t
}

// CommitMessage is the commit's message: the title, and what was verified.
func (p Proposal) CommitMessage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", p.Title())
	fmt.Fprintf(&b, "%s, the newest %s release, verified by recipe:bump:\n", p.Release.FileName(), p.Series)
	fmt.Fprintf(&b, "sha256 %s, %d bytes, signed %s by %s;\n", p.Release.SHA256, p.Release.Size, p.Signature.Created.UTC().Format(time.RFC3339), p.Signature.Signer)
	fmt.Fprintf(&b, "top-level directory %s/, version %s in %s.\n", p.Identity.TopDir, p.Identity.Version, strings.Join(p.Identity.VersionFiles, ", "))
	return b.String()
}

// Body is the pull request's body (GitHub Markdown): what was checked, the
// values a reviewer compares with upstream's announcement, and the diff.
func (p Proposal) Body() string {
	rel := p.Release
	var b strings.Builder
	if p.Pinned == "" {
		fmt.Fprintf(&b, "OpenSSL **%s** is the newest release of %s, a series newer than any the recipe pins, in the release listing (%s). It is added beside the default, which stays %s: moving the default to a new series is a decision of its own (edit `default`). ",
			rel.Version, p.Series, p.ListingURL, p.OldDefault)
	} else {
		fmt.Fprintf(&b, "OpenSSL **%s** is the newest %s release in the release listing (%s); the recipe's newest %s release is %s. ",
			rel.Version, p.Series, p.ListingURL, p.Series, p.Pinned)
	}
	fmt.Fprintf(&b, "`recipe:bump` downloaded it and checked it before writing this change to `%s`:\n\n", filepath.ToSlash(p.Recipe))
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	row("tarball", fmt.Sprintf("`%s`, %d bytes", rel.FileName(), rel.Size))
	row("sha256", "`"+rel.SHA256+"`")
	row("downloaded from", p.TarballURL)
	row("signature", fmt.Sprintf("%s, made %s (%s)", p.SignatureURL, p.Signature.Created.UTC().Format(time.RFC3339), p.Signature.Hash))
	signer := "`" + p.Signature.Signer + "`"
	if uid := keyUserID(p.Signature.Signer); uid != "" {
		signer += " (" + markdownEscape(uid) + ")"
	}
	signer += ", pinned in `keys/`"
	if p.Signature.SigningKey != "" && p.Signature.SigningKey != p.Signature.Signer {
		signer += "; signing subkey `" + p.Signature.SigningKey + "`"
	}
	row("signer", signer)
	row("top-level directory", "`"+p.Identity.TopDir+"/`")
	row("version file", "`"+strings.Join(p.Identity.VersionFiles, "`, `")+"` says "+p.Identity.Version)
	if p.NewDefault != p.OldDefault {
		row("default", p.OldDefault+" → **"+p.NewDefault+"**")
	} else {
		row("default", "stays "+p.OldDefault)
	}
	b.WriteString("\nThe recipe records these URLs, tried in order by every build (the signature is `<url>.asc` beside each):\n\n")
	for _, u := range rel.URLs {
		fmt.Fprintf(&b, "- %s\n", u)
	}
	fmt.Fprintf(&b, "\n```diff\n%s```\n\n", p.Diff)
	fmt.Fprintf(&b, "Check it from sources you choose (`OSSLBUILD_MIRROR`): `go tool mage recipe:bump %s -dryrun` prints this diff or says why not.\n\n", rel.Version)
	fmt.Fprintf(&b, "Opened by the recipe-bump workflow; it replaces this pull request's change when a newer %s release appears.\n", p.Series)
	return b.String()
}

// markdownEscape keeps a key's user ID ("OpenSSL <openssl@openssl.org>")
// from being read as HTML.
func markdownEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", "\\|").Replace(s)
}

// keyUserID is the primary user ID of the pinned key fpr, or "".
func keyUserID(fpr string) string {
	a, err := keys.Armored(fpr)
	if err != nil {
		return ""
	}
	el, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(a))
	if err != nil || len(el) == 0 {
		return ""
	}
	if id := el[0].PrimaryIdentity(); id != nil {
		return id.Name
	}
	return ""
}

// WriteProposals writes each proposal into dir/<series>/ (the files named
// by the Proposal* constants). Each directory appears whole or not at all:
// it is written under a temporary name and renamed. An existing dir/<series>
// is an error, never overwritten.
func WriteProposals(dir string, ps []Proposal) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("proposals: %w", err)
	}
	for _, p := range ps {
		if !seriesRe.MatchString(p.Series) {
			return fmt.Errorf("proposals: series %q: want X.Y", p.Series)
		}
		final := filepath.Join(dir, p.Series)
		if _, err := os.Lstat(final); err == nil {
			return fmt.Errorf("proposals: %s already exists", final)
		}
		tmp, err := os.MkdirTemp(dir, "."+p.Series+"-")
		if err != nil {
			return fmt.Errorf("proposals: %w", err)
		}
		if err = writeProposal(tmp, p); err == nil {
			err = os.Rename(tmp, final)
		}
		if err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("proposals: series %s: %w", p.Series, err)
		}
	}
	return nil
}

func writeProposal(dir string, p Proposal) error {
	b, err := json.MarshalIndent(Facts{Series: p.Series, Pinned: p.Pinned, Version: p.Release.Version}, "", "  ")
	if err != nil {
		return err
	}
	facts := string(b) + "\n"
	for name, content := range map[string]string{
		ProposalRecipe: string(p.After),
		ProposalDiff:   p.Diff,
		ProposalTitle:  p.Title() + "\n",
		ProposalBody:   p.Body(),
		ProposalCommit: p.CommitMessage(),
		ProposalFacts:  facts,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return os.Chmod(dir, 0o755) // MkdirTemp made it 0700
}
