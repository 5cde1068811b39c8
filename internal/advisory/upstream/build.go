package upstream

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/lifecycle"
)

// Source is the repository the records come from.
const Source = "https://github.com/openssl/release-metadata"

// Options say what Build states of the table.
type Options struct {
	AsOf   string // the day the records were read, YYYY-MM-DD
	Commit string // the commit they were read at, "" when unknown
	// EndOfLife gives a series' last day of public support; nil means
	// internal/lifecycle's table.
	EndOfLife func(series string) (string, bool)
}

// Build turns the records and advisory texts into the table. The records
// decide (one advisory per published record); the texts fill what a
// record lacks (a severity it leaves unknown, the fix of a range it
// gives only as lessThanOrEqual) and are held against the records. What
// cannot be used, and every disagreement, is a note, in the order found;
// a record the table cannot hold (no date anywhere, a severity no policy
// has) is an error naming it.
func Build(records []*Record, texts []*Text, o Options) (*advisory.Table, []string, error) {
	eol := o.EndOfLife
	if eol == nil {
		eol = func(series string) (string, bool) {
			s, ok := lifecycle.Of(series + ".0")
			if !ok {
				return "", false
			}
			return s.EndOfLife, true
		}
	}
	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }

	// What the texts say of each CVE, and the day of the text (its file
	// name is the date: secadv/20230207.txt).
	sections := map[string][]Section{}
	textDay := map[string]string{}
	for _, t := range texts {
		for _, s := range t.Sections {
			for _, c := range s.CVEs {
				sections[c] = append(sections[c], s)
				if d := dayOfName(t.Name); d != "" && textDay[c] == "" {
					textDay[c] = d
				}
			}
		}
	}

	t := &advisory.Table{Schema: advisory.Schema, AsOf: o.AsOf, Source: Source, SourceCommit: o.Commit, Advisories: []advisory.Advisory{}}
	seen := map[string]string{}
	for _, r := range records {
		if prev, dup := seen[r.CVE]; dup {
			return nil, notes, fmt.Errorf("%s: %w: %s is also %s", r.Name, ErrRecord, r.CVE, prev)
		}
		seen[r.CVE] = r.Name
		if r.State != "PUBLISHED" {
			note("%s: %s is %s, not published: left out", r.Name, r.CVE, r.State)
			continue
		}
		a := advisory.Advisory{CVE: r.CVE, Date: r.Date, URL: r.URL, Affected: []advisory.Range{}}
		if a.Date == "" {
			a.Date = textDay[r.CVE]
			if a.Date == "" {
				return nil, notes, fmt.Errorf("%s: %w: %s has no datePublic and no advisory text names it", r.Name, ErrRecord, r.CVE)
			}
			note("%s: no datePublic; dated %s by its advisory text", r.Name, a.Date)
		}
		sev, err := severity(r.Severity)
		if err != nil {
			return nil, notes, fmt.Errorf("%s: %w: %s: %v", r.Name, ErrRecord, r.CVE, err)
		}
		secs := sections[r.CVE]
		for _, s := range secs {
			if s.Severity == "" {
				continue
			}
			text := s.Severity
			if strings.EqualFold(text, "medium") {
				text = "moderate" // the 2014 texts' word for it
			}
			ts, err := advisory.ParseSeverity(text)
			switch {
			case err != nil:
				note("%s: its advisory text gives severity %q, which no policy has", r.Name, s.Severity)
			case sev == advisory.Unknown:
				note("%s: severity unknown in the record; %s by its advisory text", r.Name, ts)
				sev = ts
			case ts != sev:
				note("%s: severity %s in the record, %s in its advisory text: the record's kept", r.Name, sev, ts)
			}
			break
		}
		a.Severity = sev
		a.Affected = ranges(r, a.Date, secs, eol, note)
		if len(a.Affected) == 0 {
			note("%s: no range of an OpenSSL release: kept, matching nothing", r.Name)
		}
		t.Advisories = append(t.Advisories, a)
	}
	var orphans []string
	for c := range sections {
		if _, ok := seen[c]; !ok {
			orphans = append(orphans, c)
		}
	}
	slices.Sort(orphans)
	for _, c := range orphans {
		note("%s: an advisory text has a section for it but secjson/ has no record: not in the table", c)
	}
	if o.AsOf == "" {
		for _, a := range t.Advisories {
			if a.Date > t.AsOf {
				t.AsOf = a.Date
			}
		}
	}
	// The table's own rules hold the result (as Parse would read it).
	b, err := advisory.Encode(t)
	if err != nil {
		return nil, notes, err
	}
	if _, err := advisory.Parse("the built table", b); err != nil {
		return nil, notes, err
	}
	return t, notes, nil
}

// ranges turns a record's versions into one range per series of OpenSSL
// releases, newest series first.
func ranges(r *Record, date string, secs []Section, eol func(string) (string, bool), note func(string, ...any)) []advisory.Range {
	var out []advisory.Range
	for _, e := range r.Versions {
		if e.Status != "affected" {
			continue // "unaffected": a statement about a series, no range
		}
		if !strings.EqualFold(e.Product, "OpenSSL") {
			note("%s: a range of product %q left out", r.Name, e.Product)
			continue
		}
		lo, err := advisory.ParseVersion(e.Version)
		if err != nil {
			note("%s: version %q is no OpenSSL release (the FIPS module's own numbers): left out", r.Name, e.Version)
			continue
		}
		rg := advisory.Range{Series: lo.Series(), Introduced: e.Version}
		switch {
		case e.LessThan != "":
			hi, err := advisory.ParseVersion(e.LessThan)
			if err != nil {
				note("%s: lessThan %q is no OpenSSL release: range %s left out", r.Name, e.LessThan, e.Version)
				continue
			}
			if fix, ok := textFix(secs, rg.Series); ok && advisory.Compare(hi, lo) == 0 && fix.Release == e.LessThan {
				// "3.1.1 to before 3.1.1" (CVE-2023-2650), where the text says
				// the series' users should upgrade to 3.1.1: the series up
				// to its fix.
				first := seriesStart(lo)
				if advisory.Compare(first, hi) < 0 {
					note("%s: range %s to before %s is empty; its advisory text fixes series %s in %s: %s to before %s", r.Name, e.Version, e.LessThan, rg.Series, fix.Release, first, e.LessThan)
					lo, rg.Introduced = first, first.String()
				}
			}
			if advisory.Compare(hi, lo) <= 0 || hi.Series() != rg.Series {
				note("%s: range %s to before %s is empty or crosses series: left out", r.Name, e.Version, e.LessThan)
				continue
			}
			rg.Fixed = e.LessThan
		case e.LessThanOrEqual != "":
			hi, err := advisory.ParseVersion(e.LessThanOrEqual)
			if err != nil || advisory.Compare(hi, lo) < 0 || hi.Series() != rg.Series {
				note("%s: lessThanOrEqual %q does not end range %s: left out", r.Name, e.LessThanOrEqual, e.Version)
				continue
			}
			rg.LastAffected = e.LessThanOrEqual
			if fix, ok := textFix(secs, rg.Series); ok {
				if fv, err := advisory.ParseVersion(fix.Release); err == nil && advisory.Compare(fv, hi) > 0 {
					rg.Fixed = fix.Release
					note("%s: series %s affected up to %s; fixed in %s by its advisory text", r.Name, rg.Series, rg.LastAffected, rg.Fixed)
				}
			}
			if rg.Fixed == "" {
				note("%s: series %s affected up to %s, and no fix named", r.Name, rg.Series, rg.LastAffected)
			}
		default:
			if fix, ok := textFix(secs, rg.Series); ok {
				rg.Fixed = fix.Release
				note("%s: series %s has no upper bound; fixed in %s by its advisory text", r.Name, rg.Series, rg.Fixed)
			} else {
				note("%s: series %s has no upper bound and no fix named: every release from %s", r.Name, rg.Series, rg.Introduced)
			}
		}
		if slices.ContainsFunc(out, func(x advisory.Range) bool { return x.Series == rg.Series }) {
			note("%s: a second range for series %s left out", r.Name, rg.Series)
			continue
		}
		if rg.Fixed != "" {
			rg.Public = true
			if end, ok := eol(rg.Series); ok && date > end {
				rg.Public = false // after the series' end of life: premium support customers only
			}
			if fix, ok := textFix(secs, rg.Series); ok && fix.Release == rg.Fixed && fix.Premium == rg.Public {
				what := "premium support only"
				if !fix.Premium {
					what = "public"
				}
				note("%s: %s is %s by its advisory text, but the series' end of life says otherwise: the end of life's kept", r.Name, rg.Fixed, what)
			}
		}
		if fix, ok := textFix(secs, rg.Series); ok && rg.Fixed != "" && fix.Release != rg.Fixed {
			note("%s: series %s fixed in %s by the record, %s by its advisory text: the record's kept", r.Name, rg.Series, rg.Fixed, fix.Release)
		}
		out = append(out, rg)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := advisory.ParseVersion(out[i].Introduced)
		b, _ := advisory.ParseVersion(out[j].Introduced)
		return advisory.Compare(a, b) > 0
	})
	return out
}

// seriesStart is the first release of v's series: X.Y.0 from 3.0, the
// letterless X.Y.Z before.
func seriesStart(v advisory.Version) advisory.Version {
	first := advisory.Version{Major: v.Major, Minor: v.Minor, Patch: v.Patch}
	if v.Major >= 3 {
		first.Patch = 0
	}
	return first
}

// textFix is the first upgrade line for series in a CVE's sections.
func textFix(secs []Section, series string) (Fix, bool) {
	for _, s := range secs {
		for _, f := range s.Fixes {
			if f.Series == series {
				return f, true
			}
		}
	}
	return Fix{}, false
}

// dayOfName is the date a secadv file name gives: "secadv/20230207.txt"
// is 2023-02-07; "" for another name.
func dayOfName(name string) string {
	base := name[strings.LastIndex(name, "/")+1:]
	if len(base) < 8 {
		return ""
	}
	d, err := time.Parse("20060102", base[:8])
	if err != nil {
		return ""
	}
	return d.Format(time.DateOnly)
}
