package recipe

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/keys"
)

// ErrPin marks a sha256 given for a release that disagrees with what the
// recipe pins, or that the recipe pins to another release.
var ErrPin = errors.New("sha256 does not match the release")

// ParseVersion accepts a release as X.Y.Z or as pyca's OPENSSL_VERSION form,
// openssl-X.Y.Z; "" stays "" (the recipe's default).
func ParseVersion(s string) (string, error) {
	v := strings.TrimPrefix(strings.TrimSpace(s), "openssl-")
	if v == "" && s == "" {
		return "", nil
	}
	if _, err := osslver.ParseRelease(v); err != nil {
		return "", fmt.Errorf("OpenSSL version %q: want X.Y.Z or openssl-X.Y.Z", s)
	}
	return v, nil
}

// UpstreamURLs are where OpenSSL publishes the release v, in the order the
// recipe lists them: GitHub's release asset, then openssl.org's source
// directory, then its archive of older releases of the series (where
// upstream moves a release once a newer one of its series is out).
func UpstreamURLs(v string) []string {
	name := "openssl-" + v + ".tar.gz"
	// upstream files old releases by series: old/3.0/, old/1.1.1/.
	series, _ := osslver.SeriesOf(v)
	return []string{
		"https://github.com/openssl/openssl/releases/download/openssl-" + v + "/" + name,
		"https://www.openssl.org/source/" + name,
		"https://www.openssl.org/source/old/" + series + "/" + name,
	}
}

// Resolve is the release to build for version (X.Y.Z, openssl-X.Y.Z or ""
// for the default) and the caller's sha256 ("" for none).
//
// A release the recipe lists is the recipe's; a sha256 given with it must
// be the one the recipe pins. A release the recipe does not list needs the
// caller's sha256: it is then fetched from upstream's URLs, and any key
// pinned in keys/ or in the recipe's release_keys may have signed it (listed reports false; its Size is 0
// until the download measures it). A sha256 the recipe pins to another
// release is refused: the same bytes cannot be two releases.
func (r *Recipe) Resolve(ver, sha256 string) (rel Release, listed bool, err error) {
	v, err := ParseVersion(ver)
	if err != nil {
		return Release{}, false, err
	}
	if v == "" && r.Default == "" {
		_, err := r.Release("")
		return Release{}, false, err
	}
	sha := strings.ToLower(strings.TrimSpace(sha256))
	if sha256 != "" && !hex64.MatchString(sha) {
		return Release{}, false, fmt.Errorf("sha256 %q for OpenSSL %s: want 64 hex digits", sha256, cmp.Or(v, r.Default))
	}
	if rel, err := r.Release(v); err == nil {
		if sha != "" && sha != rel.SHA256 {
			return Release{}, false, fmt.Errorf("OpenSSL %s: sha256 %s given, but %s pins %s: %w", rel.Version, sha, r.Path, rel.SHA256, ErrPin)
		}
		return rel, true, nil
	} else if sha == "" {
		return Release{}, false, fmt.Errorf("%w; give its sha256 to build a release the recipe does not list", err)
	}
	for _, other := range r.Releases {
		if other.SHA256 == sha {
			return Release{}, false, fmt.Errorf("OpenSSL %s: sha256 %s is OpenSSL %s in %s, so it cannot be OpenSSL %s: %w", v, sha, other.Version, r.Path, v, ErrPin)
		}
	}
	return Release{
		Version: v,
		SHA256:  sha,
		URLs:    UpstreamURLs(v),
		Signers: r.AllSigners(),
		Keys:    r.Keys,
	}, false, nil
}

// AllSigners are the fingerprints of every key that may sign a release the
// recipe does not list: osslbuild's keys/, then the recipe's release_keys.
func (r *Recipe) AllSigners() []string {
	out := keys.Fingerprints()
	for _, k := range r.Keys {
		if !slices.Contains(out, k.Fingerprint) {
			out = append(out, k.Fingerprint)
		}
	}
	return out
}

// PlanFor is release rel built for target with options: nil means the
// recipe's own options; otherwise the caller's, in their order, each held
// to CheckOption. Either way the recipe's per-version rules apply: an
// option the recipe limits to releases that exclude rel is left out (and
// recorded in Skipped), and the target's own options follow.
func (r *Recipe) PlanFor(rel Release, target string, options []string) (*Plan, error) {
	t, err := r.Target(target)
	if err != nil {
		return nil, err
	}
	v, err := osslver.ParseRelease(rel.Version)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: release %s: %w", r.Path, rel.Version, err)
	}
	common := r.Options
	if options != nil {
		var errs []error
		common = nil
		for _, o := range options {
			if err := CheckOption(o); err != nil {
				errs = append(errs, err)
			}
			ro := r.rule(o, t)
			ro.Name = o
			common = append(common, ro)
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("OpenSSL %s for %s: %w", rel.Version, target, err)
		}
	}
	p := &Plan{Recipe: r, Release: rel, Slice: t.Slice, CallerOptions: options != nil}
	p.Slice.Options, p.Slice.Skipped = nil, nil
	seen := map[string]bool{}
	for _, o := range append(append([]Option{}, common...), t.Options...) {
		ok, err := o.when.Check(v)
		if err != nil {
			return nil, fmt.Errorf("recipe %s: %s (option %s): %w", r.lines.where(r.Path, o.field), o.field, o.Name, err)
		}
		if !ok {
			p.Slice.Skipped = append(p.Slice.Skipped, o.Name)
			continue
		}
		if !seen[o.Name] {
			seen[o.Name] = true
			p.Slice.Options = append(p.Slice.Options, o.Name)
		}
	}
	// A feature the release's Configure does not know is refused here,
	// before anything is fetched, where osslbuild has read that Configure;
	// otherwise the release's Configure refuses it itself.
	if unknown, from := unknownFeatures(rel.Version, p.Slice.Options); len(unknown) > 0 {
		if from == "OpenSSL "+rel.Version {
			return nil, fmt.Errorf("OpenSSL %s for %s: OpenSSL %s does not know the option(s) %s (its Configure's features are listed in docs/recipes.md); instead, leave them out or spell a feature of that list: %w", rel.Version, target, rel.Version, strings.Join(unknown, " "), ErrOption)
		}
		return nil, fmt.Errorf("OpenSSL %s for %s: the option(s) %s name no feature the Configure of %s knows (the releases osslbuild has read); instead, leave them out or spell a feature docs/recipes.md lists: %w", rel.Version, target, strings.Join(unknown, " "), from, ErrOption)
	}
	// Which libraries OpenSSL builds is its no-shared option's to say; the
	// recipe's libraries must agree with it, or the build would make
	// dylibs no stage lays out or proves (or none it was asked for).
	switch {
	case r.Shared != nil && seen["no-shared"]:
		return nil, fmt.Errorf("OpenSSL %s for %s: option no-shared builds no shared libraries, but recipe %s asks for them (libraries): %w", rel.Version, target, r.Path, ErrOption)
	case r.Shared == nil && !seen["no-shared"]:
		return nil, fmt.Errorf("OpenSSL %s for %s: the options lack no-shared, so OpenSSL would build shared libraries, and recipe %s ships static libraries only: add no-shared (or libraries = [\"static\", \"shared\"]): %w", rel.Version, target, r.Path, ErrOption)
	}
	if r.Shared != nil {
		sh := *r.Shared
		// OpenSSL names its shared libraries by SHLIB_VERSION, its major
		// version since 3.0 (layout checks VERSION.dat says so).
		if v.Major < 3 {
			return nil, fmt.Errorf("OpenSSL %s for %s: shared libraries are built for OpenSSL 3.0 and later: %w", rel.Version, target, ErrOption)
		}
		sh.Version = strconv.Itoa(v.Major)
		p.Slice.Shared = &sh
	}
	return p, nil
}

// rule is the recipe's entry for option o (common options, then target
// t's), whose version constraint applies to it; the zero Option when the
// recipe does not restrict it.
func (r *Recipe) rule(o string, t Target) Option {
	for _, ro := range append(append([]Option{}, r.Options...), t.Options...) {
		if ro.Name == o {
			return ro
		}
	}
	return Option{}
}
