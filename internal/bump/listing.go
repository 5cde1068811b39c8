package bump

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// DefaultListingURL is GitHub's releases API for openssl/openssl. It is the
// listing chosen for -series because it is structured (JSON, with draft and
// pre-release marked) and is served by the same host as the first download
// URL; openssl.org's source page is HTML meant for people.
const DefaultListingURL = "https://api.github.com/repos/openssl/openssl/releases"

// Listing bounds: GitHub returns at most 100 releases a page, newest first;
// maxListingPages (1000 releases) is far more than OpenSSL has published on
// GitHub, and maxListingPage bounds what one page can make us read.
const (
	maxListingPages = 10
	maxListingPage  = 16 << 20
)

var seriesRe = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// ghRelease is the part of a GitHub release object that matters here.
type ghRelease struct {
	TagName    string `json:"tag_name"`
	Draft      bool   `json:"draft"`
	Prerelease bool   `json:"prerelease"`
}

// ErrListing marks a release listing that could not be read: unreachable,
// an HTTP error, rate limited, or not a releases list. Without it the
// newest release of a series is unknown; nothing is guessed.
var ErrListing = errors.New("cannot read the release listing")

// Listing is GitHub's releases listing of openssl/openssl (or a server
// answering the same way, such as a test's).
type Listing struct {
	URL    string       // the first page; "" means DefaultListingURL
	Client *http.Client // nil means http.DefaultClient
	// Token, if set, is sent as "Authorization: Bearer" to the listing's
	// own host over https, and nowhere else.
	Token string
}

// Latest returns the newest final release of series, or an error wrapping
// ErrNoRelease (the listing has none) or ErrListing (it could not be read).
func (l Listing) Latest(ctx context.Context, series string) (string, error) {
	m, _, err := l.LatestAndNewer(ctx, "", series)
	if err != nil {
		return "", err
	}
	v, ok := m[series]
	if !ok {
		return "", fmt.Errorf("series %s: %w in the release listing %s", series, ErrNoRelease, l.url())
	}
	return v, nil
}

func (l Listing) url() string { return cmp.Or(l.URL, DefaultListingURL) }

// LatestAndNewer walks the listing once for several series and returns the
// newest final release of each series it lists (a series it does not list
// is absent from the map). Pages are followed through the Link header; the
// walk stops once every series has been seen on a page, since the listing
// is sorted newest first. When newest is a series ("4.0"), it also returns
// the newest final release of every series newer than it that the pages it
// walked list: a series upstream started since the recipe's newest (the
// first page holds it).
func (l Listing) LatestAndNewer(ctx context.Context, newest string, series ...string) (map[string]string, map[string]string, error) {
	for _, s := range series {
		if !seriesRe.MatchString(s) {
			return nil, nil, fmt.Errorf("series %q: want X.Y, e.g. 4.0", s)
		}
	}
	var floor *osslver.Version
	if newest != "" {
		v, err := osslver.Parse(newest + ".0")
		if err != nil || !seriesRe.MatchString(newest) {
			return nil, nil, fmt.Errorf("series %q: want X.Y, e.g. 4.0", newest)
		}
		floor = &v
	}
	first := l.url()
	u, err := url.Parse(first)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, nil, fmt.Errorf("%w: %q is not an http(s) URL", ErrListing, first)
	}
	q := u.Query()
	q.Set("per_page", "100")
	u.RawQuery = q.Encode()
	next := u.String()
	client := cmp.Or(l.Client, http.DefaultClient)

	best := map[string]osslver.Version{}
	fresh := map[string]osslver.Version{}
	for page := 0; next != "" && page < maxListingPages && (len(best) < len(series) || (page == 0 && floor != nil)); page++ {
		rels, link, err := listingPage(ctx, client, next, l.tokenFor(next, u.Host))
		if err != nil {
			return nil, nil, err
		}
		found := map[string]osslver.Version{}
		for _, r := range rels {
			// The release an OpenSSL release tag names ("openssl-3.0.20");
			// alphas and betas ("openssl-3.6.0-alpha1") are none.
			tag, ok := strings.CutPrefix(r.TagName, "openssl-")
			v, err := osslver.ParseRelease(tag)
			if r.Draft || r.Prerelease || !ok || err != nil {
				continue
			}
			// A series newer than the floor: X.Y from 3.0, whose first
			// release is X.Y.0 (a letter series is never newer).
			if s := v.Series(); floor != nil && seriesRe.MatchString(s) {
				sv := osslver.MustParse(s + ".0")
				if f, seen := fresh[s]; osslver.Less(*floor, sv) && !slices.Contains(series, s) && (!seen || osslver.Less(f, v)) {
					fresh[s] = v
				}
			}
			for _, s := range series {
				if _, done := best[s]; done || v.Series() != s {
					continue
				}
				if f, seen := found[s]; !seen || osslver.Less(f, v) {
					found[s] = v
				}
			}
		}
		maps.Copy(best, found)
		next = nextLink(link)
	}
	out, newer := map[string]string{}, map[string]string{}
	for s, v := range best {
		out[s] = v.String()
	}
	for s, v := range fresh {
		newer[s] = v.String()
	}
	return out, newer, nil
}

// tokenFor is the token to send with a request for pageURL: only over
// https and only to the host of the listing's first page.
func (l Listing) tokenFor(pageURL, host string) string {
	u, err := url.Parse(pageURL)
	if l.Token == "" || err != nil || u.Scheme != "https" || u.Host != host {
		return ""
	}
	return l.Token
}

// listingPage fetches and decodes one page, returning its Link header.
func listingPage(ctx context.Context, client *http.Client, pageURL, token string) ([]ghRelease, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return nil, "", fmt.Errorf("%w %s: %w", ErrListing, pageURL, err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "osslbuild")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%w %s: unreachable: %w", ErrListing, pageURL, cause(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("%w %s: HTTP %s%s", ErrListing, pageURL, resp.Status, rateLimited(resp, token != ""))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxListingPage+1))
	if err != nil {
		return nil, "", fmt.Errorf("%w %s: %w", ErrListing, pageURL, cause(err))
	}
	if len(b) > maxListingPage {
		return nil, "", fmt.Errorf("%w %s: more than %d bytes", ErrListing, pageURL, maxListingPage)
	}
	var rels []ghRelease
	if err := json.Unmarshal(b, &rels); err != nil {
		return nil, "", fmt.Errorf("%w %s: not a GitHub releases list (starting %q): %w", ErrListing, pageURL, start(b), err)
	}
	return rels, resp.Header.Get("Link"), nil
}

// rateLimited explains a 403 or 429 that GitHub's rate limit headers
// account for, and what to do about it.
func rateLimited(resp *http.Response, withToken bool) string {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return ""
	}
	if resp.Header.Get("X-RateLimit-Remaining") != "0" && resp.Header.Get("Retry-After") == "" {
		return ""
	}
	msg := ": GitHub's API rate limit is used up"
	if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		msg += " until " + time.Unix(reset, 0).UTC().Format(time.RFC3339)
	}
	if !withToken {
		msg += " (anonymous requests get 60 an hour per address; set GITHUB_TOKEN)"
	}
	return msg
}

// nextLink returns the rel="next" URL of an RFC 8288 Link header, or "".
func nextLink(header string) string {
	for _, part := range strings.Split(header, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.TrimSpace(k) == "rel" && strings.Contains(" "+strings.Trim(strings.TrimSpace(v), `"`)+" ", " next ") {
				return strings.TrimSuffix(strings.TrimPrefix(target, "<"), ">")
			}
		}
	}
	return ""
}

// start is the beginning of b for an error message.
func start(b []byte) string {
	s := strings.TrimSpace(string(b[:min(len(b), 60)]))
	if len(b) > 60 {
		s += "..."
	}
	return s
}
