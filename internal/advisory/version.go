package advisory

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/lifecycle"
)

// Version is an OpenSSL release number as releases, advisories and
// version strings spell it: "3.0.5", "1.1.1t", "1.1.1zj" (before 3.0
// letters numbered a series' releases), with an optional pre-release tag
// ("0.9.7-beta3", "1.0.2k-fips") and build suffix ("3.0.5+quic").
type Version struct {
	Major, Minor, Patch int
	Letters             string // "t", "zj"; "" for 3.0 and later, and a letter series' first release
	Pre                 string // after "-": "beta3", "fips"
	Build               string // after "+": "quic"
}

var versionRe = regexp.MustCompile(`^([0-9]{1,6})\.([0-9]{1,6})\.([0-9]{1,6})([a-z]{0,3})(?:-([0-9A-Za-z.-]{1,64}))?(?:\+([0-9A-Za-z.-]{1,64}))?$`)

// ParseVersion reads an OpenSSL version number.
func ParseVersion(s string) (Version, error) {
	m := versionRe.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("OpenSSL version %q: expected MAJOR.MINOR.PATCH with optional letters (1.1.1t), -PRE and +BUILD", s)
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	v.Letters, v.Pre, v.Build = m[4], m[5], m[6]
	return v, nil
}

// String is the version as OpenSSL spells it.
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

// Series is the release series: "3.0" for 3.0.5, "1.1.1" for 1.1.1t.
func (v Version) Series() string {
	s, _ := lifecycle.SeriesName(v.Release())
	return s
}

// Compare orders two versions: -1, 0 or +1. Numbers compare as numbers,
// letters by length, then alphabetically (1.1.1t < 1.1.1y < 1.1.1za <
// 1.1.1zj, as OpenSSL numbered them after z), and a pre-release comes
// before its release (0.9.7-beta3 < 0.9.7). The build suffix does not
// order: 3.0.5+quic is 3.0.5.
func Compare(a, b Version) int {
	for _, d := range [][2]int{{a.Major, b.Major}, {a.Minor, b.Minor}, {a.Patch, b.Patch}, {len(a.Letters), len(b.Letters)}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
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
	return strings.Compare(a.Pre, b.Pre)
}
