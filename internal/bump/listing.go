package bump

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/hashicorp/go-version"
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

// tagRe is OpenSSL's release tag for a final release ("openssl-3.0.20");
// alphas and betas ("openssl-3.6.0-alpha1") do not match.
var tagRe = regexp.MustCompile(`^openssl-([0-9]+\.[0-9]+\.[0-9]+[a-z]?)$`)

var seriesRe = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// ghRelease is the part of a GitHub release object that matters here.
type ghRelease struct {
	TagName    string `json:"tag_name"`
	Draft      bool   `json:"draft"`
	Prerelease bool   `json:"prerelease"`
}

// LatestInSeries asks the GitHub releases listing at listingURL for the
// newest final (not draft, not pre-release) release of series ("4.0") and
// returns its version. Pages are followed through the Link header; the walk
// stops after the first page with a release of the series, since the
// listing is sorted newest first.
func LatestInSeries(ctx context.Context, client *http.Client, listingURL, series string) (string, error) {
	if !seriesRe.MatchString(series) {
		return "", fmt.Errorf("series %q: want X.Y, e.g. 4.0", series)
	}
	u, err := url.Parse(listingURL)
	if err != nil {
		return "", fmt.Errorf("release listing %q: %w", listingURL, err)
	}
	q := u.Query()
	q.Set("per_page", "100")
	u.RawQuery = q.Encode()
	next := u.String()

	var best *version.Version
	for page := 0; next != "" && page < maxListingPages; page++ {
		rels, link, err := listingPage(ctx, client, next)
		if err != nil {
			return "", err
		}
		for _, r := range rels {
			m := tagRe.FindStringSubmatch(r.TagName)
			if r.Draft || r.Prerelease || m == nil || !strings.HasPrefix(m[1], series+".") {
				continue
			}
			v, err := version.NewVersion(m[1])
			if err != nil {
				continue
			}
			if best == nil || v.GreaterThan(best) {
				best = v
			}
		}
		if best != nil {
			return best.Original(), nil
		}
		next = nextLink(link)
	}
	return "", fmt.Errorf("series %s: %w in the release listing %s", series, ErrNoRelease, listingURL)
}

// listingPage fetches and decodes one page, returning its Link header.
func listingPage(ctx context.Context, client *http.Client, pageURL string) ([]ghRelease, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return nil, "", fmt.Errorf("release listing %s: %w", pageURL, err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "osslbuild")
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("release listing %s: %w", pageURL, netErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("release listing %s: HTTP %s", pageURL, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxListingPage+1))
	if err != nil {
		return nil, "", fmt.Errorf("release listing %s: %w", pageURL, netErr(err))
	}
	if len(b) > maxListingPage {
		return nil, "", fmt.Errorf("release listing %s: more than %d bytes", pageURL, maxListingPage)
	}
	var rels []ghRelease
	if err := json.Unmarshal(b, &rels); err != nil {
		return nil, "", fmt.Errorf("release listing %s: not a GitHub releases list (starting %q): %w", pageURL, start(b), err)
	}
	return rels, resp.Header.Get("Link"), nil
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

// netErr drops the *url.Error wrapper: the URL is already on the line.
func netErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// start is the beginning of b for an error message.
func start(b []byte) string {
	s := strings.TrimSpace(string(b[:min(len(b), 60)]))
	if len(b) > 60 {
		s += "..."
	}
	return s
}
