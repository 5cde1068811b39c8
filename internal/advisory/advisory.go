// Package advisory holds OpenSSL's published security advisories as one
// table (advisories.json, embedded): for every CVE its date, severity and,
// per release series, the affected range and the release that fixed it,
// and whether that release was public or went to premium support
// customers only (a series past its end of life, internal/lifecycle). The
// table is data, derived from OpenSSL's own records (the secjson/ and
// secadv/ directories of openssl/release-metadata) by
// internal/advisory/cmd/genadvisories, so an update changes no Go code.
//
// Matching is by version number only: a release that carries fixes its
// number does not show (a distribution's backports, a fork's) is reported
// as its number says; callers say so where it applies.
package advisory

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// Schema identifies the table's JSON form.
// v2 (2026-12): as_of is the day the table is complete through, and
// sources name every collection read with its commit.
const Schema = "https://github.com/osslbuild/osslbuild/advisory/v2"

// StaleAfterDays is how old (in days) the table may get before users are
// warned that advisories published since are missing from it.
const StaleAfterDays = 90

// Severity is OpenSSL's rating of an advisory (its security policy):
// critical, high, moderate or low; unknown where upstream gave none (every
// advisory before its policy, 2014, Heartbleed among them).
type Severity string

const (
	Critical Severity = "critical"
	High     Severity = "high"
	Moderate Severity = "moderate"
	Low      Severity = "low"
	Unknown  Severity = "unknown"
)

// Severities are every severity, most severe first, unknown last.
var Severities = []Severity{Critical, High, Moderate, Low, Unknown}

// ParseSeverity reads a severity in any case ("High", "MODERATE").
func ParseSeverity(s string) (Severity, error) {
	v := Severity(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(Severities, v) {
		return "", fmt.Errorf("severity %q: want critical, high, moderate, low or unknown", s)
	}
	return v, nil
}

// Rank orders the rated severities: low 1 to critical 4; unknown is 0,
// since it is not rated at all (AtLeast decides what to make of it).
func (s Severity) Rank() int {
	if i := slices.Index(Severities, s); i >= 0 {
		return len(Severities) - 1 - i // Severities run from critical down to unknown, last
	}
	return 0
}

// AtLeast reports whether an advisory of severity s meets a threshold
// (-fail-on). An unknown severity meets every threshold: upstream did not
// rate it, and what a scanner cannot rate it must not pass.
func (s Severity) AtLeast(threshold Severity) bool {
	return s == Unknown || s.Rank() >= threshold.Rank()
}

// Table is the whole table.
type Table struct {
	Schema string `json:"schema"`
	// AsOf is the day through which the table is complete: every advisory
	// OpenSSL published up to and including it is in the table. It is the
	// newest day a source was read through (OpenSSL, the CNA for its
	// CVEs, publishes each record in both sources on the advisory's day).
	AsOf string `json:"as_of"`
	// Sources are the collections of OpenSSL's records read, each at a
	// commit: every advisory names the one its record came from.
	Sources    []Source   `json:"sources"`
	Advisories []Advisory `json:"advisories"`
	// Origin is where the table was read: "embedded" or a file's path
	// (-advisories=FILE). It is not part of the table's bytes.
	Origin string `json:"-"`
}

// Source is one collection of OpenSSL's advisory records, as read.
type Source struct {
	Name    string `json:"name"` // "openssl/release-metadata", "CVEProject/cvelistV5"
	URL     string `json:"url"`
	Commit  string `json:"commit"`  // the commit read, hex
	Through string `json:"through"` // the day it was read: complete through it, YYYY-MM-DD
}

// Embedded is the Origin of the table built into osslbuild.
const Embedded = "embedded"

// Describe names the table for a report: its as-of date, where it was
// read and its sources with their commits.
func (t *Table) Describe() string {
	origin := ""
	if t.Origin != "" {
		origin = t.Origin + " table, "
	}
	var srcs []string
	for _, s := range t.Sources {
		srcs = append(srcs, fmt.Sprintf("%s@%s through %s", s.Name, s.Commit[:min(len(s.Commit), 12)], s.Through))
	}
	return fmt.Sprintf("OpenSSL's advisories through %s (%s%d advisories; from %s)", t.AsOf, origin, len(t.Advisories), strings.Join(srcs, ", "))
}

// Advisory is one CVE.
type Advisory struct {
	CVE      string   `json:"cve"`
	Date     string   `json:"date"` // published, YYYY-MM-DD
	Severity Severity `json:"severity"`
	URL      string   `json:"url,omitempty"` // OpenSSL's advisory text
	// Source is the Name of the table's source whose record this is;
	// Commit, when set, the commit its record was read at, where that is
	// not the source's (a record read on its own, not in a checkout).
	Source string `json:"source"`
	Commit string `json:"commit,omitempty"`
	// Affected is one range per series the advisory names, newest series
	// first. An advisory naming none (no range in the record) matches
	// nothing.
	Affected []Range `json:"affected"`
}

// Range is the releases of one series an advisory affects.
type Range struct {
	Series     string `json:"series"`     // "3.0", "1.1.1"
	Introduced string `json:"introduced"` // the first affected release
	// Fixed is the first release of the series not affected, as the
	// record's lessThan gives it (or its advisory text, where the record
	// gives only the last affected release); "" when none is named.
	Fixed string `json:"fixed,omitempty"`
	// LastAffected is the record's lessThanOrEqual, where it gives that
	// instead of a fix.
	LastAffected string `json:"last_affected,omitempty"`
	// Public is false for a fix that went to premium support customers
	// only: released after the series' end of life.
	Public bool `json:"public"`
}

// Fix says how the range is fixed, for a person: "3.0.8", "no public
// fix (1.1.1zj: premium support only)", "no fix named".
func (r Range) Fix() string {
	switch {
	case r.Fixed == "":
		return "no fix named"
	case !r.Public:
		return "no public fix (" + r.Fixed + ": premium support only)"
	}
	return r.Fixed
}

// PublicFix is the release fixing the range that anyone can have, "" when
// there is none (premium support only, or no fix named).
func (r Range) PublicFix() string {
	if r.Public {
		return r.Fixed
	}
	return ""
}

// Contains reports whether v is in the range.
func (r Range) Contains(v osslver.Version) bool {
	lo, err := osslver.Parse(r.Introduced)
	if err != nil || osslver.Compare(v, lo) < 0 {
		return false
	}
	if r.Fixed != "" {
		hi, err := osslver.Parse(r.Fixed)
		return err == nil && osslver.Compare(v, hi) < 0
	}
	if r.LastAffected != "" {
		hi, err := osslver.Parse(r.LastAffected)
		return err == nil && osslver.Compare(v, hi) <= 0
	}
	return true // no end named: every later release of the series
}

// ErrMalformed is matched (errors.Is) by every error Parse returns.
var ErrMalformed = errors.New("malformed advisory table")

var (
	cveRe    = regexp.MustCompile(`^CVE-[0-9]{4}-[0-9]{4,9}$`)
	commitRe = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
)

// IsCommit reports whether s is a git commit as the table names one: 7
// to 40 lowercase hex digits.
func IsCommit(s string) bool { return commitRe.MatchString(s) }

// IsCVE reports whether s is a CVE identifier: CVE-YYYY-NNNN.
func IsCVE(s string) bool { return cveRe.MatchString(s) }

// Parse reads a table and holds it to its form: the schema, dates, CVE
// identifiers (each once), severities, and ranges whose versions parse,
// belong to the range's series and do not run backwards. name names the
// input in errors.
func Parse(name string, data []byte) (*Table, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", name, ErrMalformed, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t Table
	if err := dec.Decode(&t); err != nil {
		return nil, bad("%v", err)
	}
	if dec.More() {
		return nil, bad("data after the table")
	}
	if t.Schema != Schema {
		return nil, bad("schema %q, want %q", t.Schema, Schema)
	}
	if !validDate(t.AsOf) {
		return nil, bad("as_of %q: want YYYY-MM-DD", t.AsOf)
	}
	if len(t.Sources) == 0 {
		return nil, bad("no sources: a table names the records it was built from")
	}
	through, names := "", map[string]bool{}
	for i, src := range t.Sources {
		switch {
		case src.Name == "" || src.URL == "":
			return nil, bad("source %d: a name and a url are required", i)
		case names[src.Name]:
			return nil, bad("source %s listed twice", src.Name)
		case !commitRe.MatchString(src.Commit):
			return nil, bad("source %s: commit %q: want 7 to 40 hex digits", src.Name, src.Commit)
		case !validDate(src.Through):
			return nil, bad("source %s: through %q: want YYYY-MM-DD", src.Name, src.Through)
		}
		names[src.Name] = true
		through = max(through, src.Through)
	}
	if t.AsOf != through {
		return nil, bad("as_of %s: want %s, the newest day a source was read through", t.AsOf, through)
	}
	if t.Advisories == nil {
		return nil, bad("no advisories list")
	}
	seen := map[string]bool{}
	for i, a := range t.Advisories {
		where := fmt.Sprintf("advisory %d (%s)", i, a.CVE)
		_, sevErr := ParseSeverity(string(a.Severity))
		switch {
		case !IsCVE(a.CVE):
			return nil, bad("%s: cve %q: want CVE-YYYY-NNNN", where, a.CVE)
		case seen[a.CVE]:
			return nil, bad("%s: listed twice", where)
		case !validDate(a.Date):
			return nil, bad("%s: date %q: want YYYY-MM-DD", where, a.Date)
		case a.Date > t.AsOf:
			return nil, bad("%s: date %s is after the table's as_of %s", where, a.Date, t.AsOf)
		case !names[a.Source]:
			return nil, bad("%s: source %q is none of the table's sources", where, a.Source)
		case a.Commit != "" && !commitRe.MatchString(a.Commit):
			return nil, bad("%s: commit %q: want 7 to 40 hex digits", where, a.Commit)
		case sevErr != nil || string(a.Severity) != strings.ToLower(string(a.Severity)):
			return nil, bad("%s: severity %q: want critical, high, moderate, low or unknown", where, a.Severity)
		case a.Affected == nil:
			return nil, bad("%s: no affected list", where)
		}
		seen[a.CVE] = true
		series := map[string]bool{}
		for _, r := range a.Affected {
			if err := r.check(); err != nil {
				return nil, bad("%s: %v", where, err)
			}
			if series[r.Series] {
				return nil, bad("%s: series %s has two ranges", where, r.Series)
			}
			series[r.Series] = true
		}
	}
	return &t, nil
}

// check holds a range to its form.
func (r Range) check() error {
	lo, err := osslver.Parse(r.Introduced)
	if err != nil {
		return fmt.Errorf("series %s: introduced: %w", r.Series, err)
	}
	if lo.Series() != r.Series {
		return fmt.Errorf("series %s: introduced %s belongs to series %s", r.Series, r.Introduced, lo.Series())
	}
	for _, end := range []struct{ name, v string }{{"fixed", r.Fixed}, {"last_affected", r.LastAffected}} {
		if end.v == "" {
			continue
		}
		hi, err := osslver.Parse(end.v)
		if err != nil {
			return fmt.Errorf("series %s: %s: %w", r.Series, end.name, err)
		}
		if hi.Series() != r.Series {
			return fmt.Errorf("series %s: %s %s belongs to series %s", r.Series, end.name, end.v, hi.Series())
		}
		if c := osslver.Compare(hi, lo); c < 0 || c == 0 && end.name == "fixed" {
			return fmt.Errorf("series %s: %s %s is not after introduced %s", r.Series, end.name, end.v, r.Introduced)
		}
	}
	if r.Fixed == "" && r.Public {
		return fmt.Errorf("series %s: public with no fixed release", r.Series)
	}
	return nil
}

// validDate reports whether s is a day, YYYY-MM-DD: time.Parse takes
// exactly two digits for the month and the day, four for the year.
func validDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// Encode writes the table in its one canonical form: the header fields,
// then one advisory per line, newest first (by date, then CVE), so that an
// update's diff is one line per advisory added or changed.
func Encode(t *Table) ([]byte, error) {
	advs := slices.Clone(t.Advisories)
	slices.SortStableFunc(advs, func(a, b Advisory) int {
		if c := strings.Compare(b.Date, a.Date); c != 0 {
			return c
		}
		return compareCVE(b.CVE, a.CVE)
	})
	var buf bytes.Buffer
	field := func(k, v string) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(&buf, "  %q: %s,\n", k, b)
	}
	buf.WriteString("{\n")
	field("schema", t.Schema)
	field("as_of", t.AsOf)
	buf.WriteString("  \"sources\": [")
	for i, src := range t.Sources {
		b, err := json.Marshal(src)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n    ")
		buf.Write(b)
	}
	buf.WriteString("\n  ],\n")
	buf.WriteString("  \"advisories\": [")
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, a := range advs {
		if a.Affected == nil {
			a.Affected = []Range{}
		}
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n    ")
		if err := enc.Encode(a); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	if len(advs) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("]\n}\n")
	return buf.Bytes(), nil
}

// compareCVE orders CVE identifiers by year, then number as a number.
func compareCVE(a, b string) int {
	pa, pb := strings.Split(a, "-"), strings.Split(b, "-")
	if len(pa) != 3 || len(pb) != 3 {
		return strings.Compare(a, b)
	}
	num := func(i int) int { return cmp.Or(len(pa[i])-len(pb[i]), strings.Compare(pa[i], pb[i])) }
	return cmp.Or(num(1), num(2))
}

//go:embed advisories.json
var embedded []byte

// Default is the embedded table, parsed once.
var Default = sync.OnceValues(func() (*Table, error) {
	t, err := Parse("internal/advisory/advisories.json", embedded)
	if t != nil {
		t.Origin = Embedded
	}
	return t, err
})

// AgeDays is how many days old the table is at now: 0 on its as-of day
// (in UTC).
func (t *Table) AgeDays(now time.Time) int {
	asOf, err := time.Parse(time.DateOnly, t.AsOf)
	if err != nil {
		return 0
	}
	y, m, d := now.UTC().Date()
	return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Sub(asOf).Hours() / 24)
}

// Stale says, when the table is more than StaleAfterDays old at now, that
// advisories published since are missing: "OpenSSL's advisories are known
// here as of 2026-09-29, 120 days before this check ...". ok is false for
// a table young enough.
func (t *Table) Stale(now time.Time) (msg string, ok bool) {
	age := t.AgeDays(now)
	if age <= StaleAfterDays {
		return "", false
	}
	return fmt.Sprintf("OpenSSL's advisories are known here as of %s, %d days before this check (more than %d): advisories published since are missing; use a newer osslbuild, whose table a weekly workflow keeps current, or a current table with -advisories=FILE",
		t.AsOf, age, StaleAfterDays), true
}
