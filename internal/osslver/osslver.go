// Package osslver is the one grammar of OpenSSL version numbers: how
// releases, tags, recipes, advisories and version strings spell them, how
// they order, and which series they belong to. Every package that reads an
// OpenSSL version reads it here, so that all of them accept the same set.
//
// A version is MAJOR.MINOR.PATCH, without leading zeros, then before 3.0
// up to two letters numbering a series' releases ("1.1.1w", "0.9.8zh"),
// then an optional pre-release or vendor tag after "-" ("3.0.0-alpha1",
// "1.0.2k-fips") and an optional build suffix after "+" ("3.0.5+quic").
package osslver

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Version is a parsed OpenSSL version number.
type Version struct {
	Major, Minor, Patch int
	Letters             string // "w", "zh"; "" for 3.0 and later, and a letter series' first release
	Pre                 string // after "-": "alpha1", "beta2", "fips"
	Build               string // after "+": "quic"
}

// The numbers are bounded (six digits) so that no input overflows an int;
// the tags are bounded so that a version stays a short string.
var grammar = regexp.MustCompile(`^(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})([a-z]{0,2})(?:-([0-9A-Za-z.-]{1,64}))?(?:\+([0-9A-Za-z.-]{1,64}))?$`)

// Parse reads an OpenSSL version number.
func Parse(s string) (Version, error) {
	m := grammar.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("OpenSSL version %q: expected MAJOR.MINOR.PATCH without leading zeros, with optional letters (1.1.1w, 0.9.8zh), -PRE (3.0.0-alpha1) and +BUILD", s)
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	v.Letters, v.Pre, v.Build = m[4], m[5], m[6]
	return v, nil
}

// ParseRelease reads a final release's number, as recipes and upstream's
// release tags name one: no pre-release tag, no build suffix.
func ParseRelease(s string) (Version, error) {
	v, err := Parse(s)
	if err != nil {
		return Version{}, err
	}
	if v.Suffixed() {
		return Version{}, fmt.Errorf("OpenSSL version %q: expected a release, MAJOR.MINOR.PATCH with optional letters (3.0.5, 1.1.1w), without -PRE or +BUILD", s)
	}
	return v, nil
}

// IsRelease reports whether s is a final release's number (ParseRelease).
func IsRelease(s string) bool {
	_, err := ParseRelease(s)
	return err == nil
}

// SeriesOf is the series of the version number s: "3.0" for "3.0.5".
func SeriesOf(s string) (string, error) {
	v, err := Parse(s)
	if err != nil {
		return "", err
	}
	return v.Series(), nil
}

// String is the version as OpenSSL spells it; Parse(v.String()) is v.
func (v Version) String() string {
	s := v.Release()
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	if v.Build != "" {
		s += "+" + v.Build
	}
	return s
}

// Release is the release the version names, without a pre-release tag or
// build suffix: "3.0.5" for "3.0.5+quic", "1.0.2k" for "1.0.2k-fips".
func (v Version) Release() string {
	return fmt.Sprintf("%d.%d.%d%s", v.Major, v.Minor, v.Patch, v.Letters)
}

// Suffixed reports whether the version carries a pre-release tag or a
// build suffix: a fork's ("+quic"), a vendor's ("-fips") or a
// pre-release's, whose fixes its release number does not tell.
func (v Version) Suffixed() bool { return v.Pre != "" || v.Build != "" }

// Series is the release series: "3.0" for 3.0.5, "1.1.1" for 1.1.1w
// (before 3.0 the third number named the series and letters its releases).
func (v Version) Series() string {
	if v.Major >= 3 {
		return fmt.Sprintf("%d.%d", v.Major, v.Minor)
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// Compare orders two versions: -1, 0 or +1. Numbers compare as numbers,
// letters by length, then alphabetically (1.1.1t < 1.1.1y < 1.1.1za <
// 1.1.1zh, as OpenSSL numbered them after z), and a pre-release comes
// before its release (3.0.0-beta2 < 3.0.0). Pre-release tags compare by
// their runs of digits as numbers and the rest as text (beta2 < beta10).
// The build suffix does not order: 3.0.5+quic is 3.0.5.
func Compare(a, b Version) int {
	for _, d := range [][2]int{{a.Major, b.Major}, {a.Minor, b.Minor}, {a.Patch, b.Patch}, {len(a.Letters), len(b.Letters)}} {
		if c := cmp.Compare(d[0], d[1]); c != 0 {
			return c
		}
	}
	if c := strings.Compare(a.Letters, b.Letters); c != 0 {
		return c
	}
	switch {
	case a.Pre == b.Pre:
		return 0
	case a.Pre == "":
		return 1
	case b.Pre == "":
		return -1
	}
	return comparePre(a.Pre, b.Pre)
}

// Less reports whether a is an earlier version than b.
func Less(a, b Version) bool { return Compare(a, b) < 0 }

// comparePre orders two pre-release tags run by run: digits as numbers,
// other text as text; tags equal that way (beta01, beta1) by their text,
// so that only equal tags compare equal.
func comparePre(a, b string) int {
	ra, rb := runs(a), runs(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		x, y := ra[i], rb[i]
		if isDigit(x[0]) && isDigit(y[0]) {
			x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if c := cmp.Compare(len(x), len(y)); c != 0 {
				return c
			}
		}
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(ra), len(rb)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// runs splits s into maximal runs of digits and of other bytes.
func runs(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && isDigit(s[j]) == isDigit(s[i]) {
			j++
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// MustParse is Parse for a version already checked (a validated recipe's,
// a table's); it panics on an error.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}
