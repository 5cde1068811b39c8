package advisory

import (
	"fmt"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// Finding is one advisory affecting a version: the advisory, with every
// series' range, and the range of the version's own series.
type Finding struct {
	Advisory
	Range Range // in the version's series
}

// Match is what the table says of one OpenSSL version.
type Match struct {
	Version osslver.Version // as given, parsed
	Release string          // the release matched: "3.0.5" for "3.0.5+quic"
	Series  string          // "3.0"
	// Findings are the advisories affecting Release, newest first.
	Findings []Finding
}

// Affecting returns the advisories of table t affecting an OpenSSL
// version ("1.1.1t", "3.0.5+quic"): for each its CVE, date, severity,
// every series' range and fixing release, and the range of the version's
// series, whose Fix says which release fixes it there or that none did
// publicly. A version with a pre-release tag or build suffix is matched
// as its release (Version.Suffixed says it was).
func (t *Table) Affecting(version string) (*Match, error) {
	v, err := osslver.Parse(version)
	if err != nil {
		return nil, err
	}
	rel, _ := osslver.Parse(v.Release())
	m := &Match{Version: v, Release: rel.String(), Series: rel.Series()}
	for _, a := range t.Advisories {
		for _, r := range a.Affected {
			if r.Series == m.Series && r.Contains(rel) {
				m.Findings = append(m.Findings, Finding{Advisory: a, Range: r})
				break
			}
		}
	}
	return m, nil
}

// Summary is a set of findings in numbers.
type Summary struct {
	Total  int
	Counts map[Severity]int // every severity, zero included
	// Highest is the most severe rated severity found; Unknown when every
	// finding is unrated, "" when there are none.
	Highest Severity
	// FixedBy is the release of the series that fixes every finding with
	// a public fix (the newest of those fixes); "" when none has one.
	FixedBy string
	// NoPublicFix counts the findings whose series got no public fix:
	// premium support only, or no fix named.
	NoPublicFix int
	// PremiumFix is the newest fix that went to premium support
	// customers only, "" when none did.
	PremiumFix string
}

// Summarize counts findings by severity and names the releases fixing
// them.
func Summarize(fs []Finding) Summary {
	s := Summary{Total: len(fs), Counts: map[Severity]int{}}
	for _, sev := range Severities {
		s.Counts[sev] = 0
	}
	for _, f := range fs {
		s.Counts[f.Severity]++
		if s.Highest == "" || s.Highest == Unknown && f.Severity != Unknown || f.Severity.Rank() > s.Highest.Rank() {
			s.Highest = f.Severity
		}
		if fix := f.Range.PublicFix(); fix != "" {
			s.FixedBy = newer(s.FixedBy, fix)
		} else {
			s.NoPublicFix++
			if f.Range.Fixed != "" {
				s.PremiumFix = newer(s.PremiumFix, f.Range.Fixed)
			}
		}
	}
	return s
}

// newer is the later of two versions ("" for none).
func newer(a, b string) string {
	if a == "" {
		return b
	}
	va, erra := osslver.Parse(a)
	vb, errb := osslver.Parse(b)
	if erra == nil && errb == nil && osslver.Compare(vb, va) > 0 {
		return b
	}
	return a
}

// Fixes says which release fixes the findings: "fixed in 3.0.21", "no
// public fix (up to 1.1.1zj: premium support only)", or both ("3.0.20
// fixes 36; 9 have no public fix (3.0.23: premium support only)").
func (s Summary) Fixes() string {
	premium := "no public fix"
	if s.PremiumFix != "" {
		premium += " (" + s.PremiumFix + ": premium support only)"
	}
	switch {
	case s.Total == 0:
		return ""
	case s.NoPublicFix == 0:
		return "fixed in " + s.FixedBy
	case s.NoPublicFix == s.Total:
		return premium
	}
	have := "have"
	if s.NoPublicFix == 1 {
		have = "has"
	}
	return fmt.Sprintf("%s fixes %d; %d %s %s", s.FixedBy, s.Total-s.NoPublicFix, s.NoPublicFix, have, premium)
}

// AtLeast returns the findings meeting threshold (Severity.AtLeast:
// unknown meets every threshold).
func AtLeast(fs []Finding, threshold Severity) []Finding {
	return slices.DeleteFunc(slices.Clone(fs), func(f Finding) bool { return !f.Severity.AtLeast(threshold) })
}

// Warning is what a build says of a release with a known high or
// critical advisory: "OpenSSL 4.0.2: known high advisory CVE-2026-84782
// (2026-09-29); fixed in 4.0.3". ok is false when there is none, or the
// version is no OpenSSL release number.
func Warning(version string) (msg string, ok bool) {
	t, err := Default()
	if err != nil {
		return "", false
	}
	return t.Warning(version)
}

// Warning is the package function on table t.
func (t *Table) Warning(version string) (msg string, ok bool) {
	m, err := t.Affecting(version)
	if err != nil {
		return "", false
	}
	severe := slices.DeleteFunc(m.Findings, func(f Finding) bool { return f.Severity != Critical && f.Severity != High })
	if len(severe) == 0 {
		return "", false
	}
	s := Summarize(severe)
	ids := make([]string, len(severe))
	for i, f := range severe {
		ids[i] = f.CVE + " (" + string(f.Severity) + ", " + f.Date + ")"
	}
	what := "known advisory"
	if len(severe) > 1 {
		what = fmt.Sprintf("%d known advisories", len(severe))
	}
	return fmt.Sprintf("OpenSSL %s: %s %s: %s", version, what, strings.Join(ids, ", "), s.Fixes()), true
}
