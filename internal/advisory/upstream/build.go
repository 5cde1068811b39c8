package upstream

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/lifecycle"
	"github.com/osslbuild/osslbuild/internal/osslver"
)

// The collections of OpenSSL's records Build reads.
const (
	// ReleaseMetadata is OpenSSL's own: secjson/ records and secadv/
	// texts, every advisory since 1998.
	ReleaseMetadata = "openssl/release-metadata"
	// CVEList is the CVE Program's list of every CNA's records, where
	// OpenSSL (the CNA for its CVEs) publishes each record on the
	// advisory's day: the second place to read them, and the one to read
	// when release-metadata lags.
	CVEList = "CVEProject/cvelistV5"
)

// URLOf is the repository URL of a source named as above.
func URLOf(name string) string { return "https://github.com/" + name }

// ErrHole is matched (errors.Is) by Build's refusal of a table with a
// hole it can see: a CVE an advisory text or a release's notes name with
// no record, or a range of a record it cannot read.
var ErrHole = errors.New("advisory table would have a hole")

// Input is one source as read: where it is, the records and the texts.
type Input struct {
	Source  advisory.Source
	Records []*Record
	Texts   []*Text
}

// Options say what else Build holds the table to.
type Options struct {
	// Notes are releases' own lists of the CVEs they fix (CHANGES.md):
	// each CVE they name must have a record.
	Notes []ReleaseNotes
	// Gaps are holes accepted on purpose, each with why (gaps.txt); a
	// gap listed that is not found is an error too, so the list stays
	// true.
	Gaps Gaps
}

// Build turns the sources' records and advisory texts into the table. The
// records decide (one advisory per published record; of two copies of
// one CVE's record, the later-updated); the texts fill what a record
// lacks (a severity it leaves unknown, the fix of a range it gives only
// as lessThanOrEqual) and are held against the records. What cannot be
// used, and every disagreement, is a note, in the order found; a record
// the table cannot hold (no date anywhere, a severity no policy has) is
// an error naming it, and so is every hole (ErrHole) not in o.Gaps. The
// table's as-of date is the newest day a source was read through.
func Build(inputs []Input, o Options) (*advisory.Table, []string, error) {
	var notes, holes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	hole := func(cve, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if why, ok := o.Gaps.accept(cve); ok {
			note("%s (an accepted gap: %s)", msg, why)
			return
		}
		holes = append(holes, msg)
	}

	// What the texts say of each CVE, and the day of the text (its file
	// name is the date: secadv/20230207.txt).
	sections := map[string][]Section{}
	textDay := map[string]string{}
	t := &advisory.Table{Schema: advisory.Schema, Advisories: []advisory.Advisory{}}
	// The records of each CVE: the later-updated copy, and where it is.
	type held struct {
		r   *Record
		src string
	}
	chosen := map[string]held{}
	var order []string
	for _, in := range inputs {
		t.Sources = append(t.Sources, in.Source)
		t.AsOf = max(t.AsOf, in.Source.Through)
		for _, tx := range in.Texts {
			for _, s := range tx.Sections {
				for _, c := range s.CVEs {
					sections[c] = append(sections[c], s)
					if d := dayOfName(tx.Name); d != "" && textDay[c] == "" {
						textDay[c] = d
					}
				}
			}
		}
		seen := map[string]string{}
		for _, r := range in.Records {
			if prev, dup := seen[r.CVE]; dup {
				return nil, notes, fmt.Errorf("%s: %s: %w: %s is also %s", in.Source.Name, r.Name, ErrRecord, r.CVE, prev)
			}
			seen[r.CVE] = r.Name
			prev, ok := chosen[r.CVE]
			switch {
			case !ok:
				order = append(order, r.CVE)
				chosen[r.CVE] = held{r, in.Source.Name}
			case r.Updated > prev.r.Updated:
				note("%s: %s's record (updated %s) is read, not %s's (updated %s)", r.CVE, in.Source.Name, r.Updated, prev.src, prev.r.Updated)
				chosen[r.CVE] = held{r, in.Source.Name}
			}
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return strings.Compare(chosen[a].r.Name, chosen[b].r.Name) })
	for _, cve := range order {
		r, src := chosen[cve].r, chosen[cve].src
		if r.State != "PUBLISHED" {
			note("%s: %s is %s, not published: left out", r.Name, r.CVE, r.State)
			continue
		}
		a := advisory.Advisory{CVE: r.CVE, Date: r.Date, URL: r.URL, Source: src, Commit: r.Commit, Affected: []advisory.Range{}}
		if a.Date == "" {
			a.Date = textDay[r.CVE]
			if a.Date == "" {
				return nil, notes, fmt.Errorf("%s: %w: %s has no datePublic and no advisory text names it", r.Name, ErrRecord, r.CVE)
			}
			note("%s: no datePublic; dated %s by its advisory text", r.Name, a.Date)
		}
		sev := advisory.Unknown // where the record gives none
		if strings.TrimSpace(r.Severity) != "" {
			var err error
			if sev, err = advisory.ParseSeverity(r.Severity); err != nil {
				return nil, notes, fmt.Errorf("%s: %w: %s: %v", r.Name, ErrRecord, r.CVE, err)
			}
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
		a.Affected = ranges(r, a.Date, secs, note, func(format string, args ...any) { hole(r.CVE, format, args...) })
		a.Affected = append(a.Affected, textRanges(r, a.Date, secs, note)...)
		// Newest series first.
		slices.SortStableFunc(a.Affected, func(x, y advisory.Range) int {
			vx, _ := osslver.Parse(x.Introduced)
			vy, _ := osslver.Parse(y.Introduced)
			return osslver.Compare(vy, vx)
		})
		if len(a.Affected) == 0 {
			note("%s: no range of an OpenSSL release: kept, matching nothing", r.Name)
		}
		t.Advisories = append(t.Advisories, a)
	}
	for _, c := range slices.Sorted(maps.Keys(sections)) {
		if _, ok := chosen[c]; !ok {
			hole(c, "%s: an advisory text has a section for it, and no source has its record", c)
		}
	}
	for _, n := range o.Notes {
		for _, c := range n.CVEs {
			if _, ok := chosen[c]; !ok {
				hole(c, "%s: %s:%d says %s fixes it, and no source has its record", c, n.File, n.Line, n.Release)
			}
		}
	}
	if unused := o.Gaps.unused(); len(unused) > 0 {
		holes = append(holes, fmt.Sprintf("gaps listed for %s, and no such hole was found: take them off the list", strings.Join(unused, ", ")))
	}
	if len(holes) > 0 {
		return nil, notes, fmt.Errorf("%w: %d found:\n  %s", ErrHole, len(holes), strings.Join(holes, "\n  "))
	}
	for _, a := range t.Advisories {
		if a.Date > t.AsOf {
			return nil, notes, fmt.Errorf("%s: published %s, after every source's day (%s): give each source the day it was read through", a.CVE, a.Date, t.AsOf)
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
// A range that cannot be read is a hole; a version of the FIPS module's
// own numbering ("fips-1.1.1") is another product's, left out with a note.
func ranges(r *Record, date string, secs []Section, note, hole func(string, ...any)) []advisory.Range {
	var out []advisory.Range
	for _, e := range r.Versions {
		if e.Status != "affected" {
			continue // "unaffected": a statement about a series, no range
		}
		if !strings.EqualFold(e.Product, "OpenSSL") {
			note("%s: a range of product %q left out", r.Name, e.Product)
			continue
		}
		lo, err := osslver.Parse(e.Version)
		if err != nil {
			if strings.HasPrefix(e.Version, "fips-") {
				note("%s: version %q is the FIPS module's own number, no OpenSSL release: left out", r.Name, e.Version)
			} else {
				hole("%s: version %q is no OpenSSL release: range left out", r.Name, e.Version)
			}
			continue
		}
		rg := advisory.Range{Series: lo.Series(), Introduced: e.Version}
		switch {
		case e.LessThan != "":
			hi, err := osslver.Parse(e.LessThan)
			if err != nil {
				hole("%s: lessThan %q is no OpenSSL release: range %s left out", r.Name, e.LessThan, e.Version)
				continue
			}
			if fix, ok := textFix(secs, rg.Series); ok && osslver.Compare(hi, lo) == 0 && fix.Release == e.LessThan {
				// "3.1.1 to before 3.1.1" (CVE-2023-2650), where the text says
				// the series' users should upgrade to 3.1.1: the series up
				// to its fix.
				first := seriesStart(lo)
				if osslver.Compare(first, hi) < 0 {
					note("%s: range %s to before %s is empty; its advisory text fixes series %s in %s: %s to before %s", r.Name, e.Version, e.LessThan, rg.Series, fix.Release, first, e.LessThan)
					lo, rg.Introduced = first, first.String()
				}
			}
			if osslver.Compare(hi, lo) <= 0 || hi.Series() != rg.Series {
				hole("%s: range %s to before %s is empty or crosses series: left out", r.Name, e.Version, e.LessThan)
				continue
			}
			rg.Fixed = e.LessThan
		case e.LessThanOrEqual != "":
			hi, err := osslver.Parse(e.LessThanOrEqual)
			if err != nil || osslver.Compare(hi, lo) < 0 || hi.Series() != rg.Series {
				hole("%s: lessThanOrEqual %q does not end range %s: left out", r.Name, e.LessThanOrEqual, e.Version)
				continue
			}
			rg.LastAffected = e.LessThanOrEqual
			if fix, ok := textFix(secs, rg.Series); ok {
				if fv, err := osslver.Parse(fix.Release); err == nil && osslver.Compare(fv, hi) > 0 {
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
			hole("%s: a second range for series %s left out (the table holds one a series)", r.Name, rg.Series)
			continue
		}
		rg.Public = rg.Fixed != "" && public(rg.Series, date)
		if fix, ok := textFix(secs, rg.Series); ok && rg.Fixed != "" {
			switch {
			case fix.Release != rg.Fixed:
				note("%s: series %s fixed in %s by the record, %s by its advisory text: the record's kept", r.Name, rg.Series, rg.Fixed, fix.Release)
			case fix.Premium == rg.Public:
				what := "premium support only"
				if !fix.Premium {
					what = "public"
				}
				note("%s: %s is %s by its advisory text, but the series' end of life says otherwise: the end of life's kept", r.Name, rg.Fixed, what)
			}
		}
		out = append(out, rg)
	}
	return out
}

// textRanges are the ranges of series the advisory text tells to upgrade
// ("OpenSSL 1.0.1 users should upgrade to 1.0.1u") that the record names
// neither affected nor unaffected: the series from its first release to
// that fix (CVE-2016-2183's record names 1.0.2 alone).
func textRanges(r *Record, date string, secs []Section, note func(string, ...any)) []advisory.Range {
	named := map[string]bool{} // the record's series: every range ranges() made is of one
	for _, e := range r.Versions {
		if v, err := osslver.Parse(e.Version); err == nil {
			named[v.Series()] = true
		}
	}
	var out []advisory.Range
	for _, s := range secs {
		for _, f := range s.Fixes {
			fv, err := osslver.Parse(f.Release)
			if err != nil || named[f.Series] {
				continue
			}
			named[f.Series] = true
			first := seriesStart(fv)
			if osslver.Compare(first, fv) >= 0 {
				continue // a series' first release: nothing before it to fix
			}
			rg := advisory.Range{Series: f.Series, Introduced: first.String(), Fixed: f.Release, Public: public(f.Series, date)}
			note("%s: the record names no range of series %s; its advisory text fixes it in %s: %s to before %s", r.Name, rg.Series, rg.Fixed, rg.Introduced, rg.Fixed)
			out = append(out, rg)
		}
	}
	return out
}

// public reports whether a fix of series released on date went to
// everyone: not after the series' end of life (internal/lifecycle); after
// it, to premium support customers only.
func public(series, date string) bool {
	s, ok := lifecycle.Named(series)
	return !ok || date <= s.EndOfLife
}

// seriesStart is the first release of v's series: X.Y.0 from 3.0, the
// letterless X.Y.Z before.
func seriesStart(v osslver.Version) osslver.Version {
	first := osslver.Version{Major: v.Major, Minor: v.Minor, Patch: v.Patch}
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
	if d, err := time.Parse("20060102", base[:min(len(base), 8)]); err == nil {
		return d.Format(time.DateOnly)
	}
	return ""
}
