package upstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/osslver"
)

// ReleaseNotes is what one release's section of OpenSSL's CHANGES.md
// ("### Changes between 4.0.1 and 4.0.2 [25 Aug 2026]") says it fixes:
// the CVEs its entries cite. A release tarball is signed and pinned by
// sha256, so its notes are a second source for the table, independent of
// the advisory records.
type ReleaseNotes struct {
	File    string // where it was read, for messages
	Line    int    // of the section's heading
	Release string // "4.0.2"
	Date    string // YYYY-MM-DD; "" where the section says [xx XXX xxxx]
	CVEs    []string
}

var (
	// The heading of a release's section: "### Changes between 4.0.1 and
	// 4.0.2 [25 Aug 2026]" (CHANGES.md), " Changes between 1.1.1s and
	// 1.1.1t [7 Feb 2023]" (the older CHANGES).
	changesHeading = regexp.MustCompile(`^\s*(?:#+\s*)?Changes between (\S+) and (\S+)\s+\[([^\]]*)\]`)
	// A citation ends an entry's line: "([CVE-2026-18798])",
	// "(CVE-2022-2068)", "... IV length ([CVE-2023-5363]).". A CVE named in
	// the prose ("when fixing CVE-2023-3446 it was discovered", "introduced
	// by the fix for Lucky 13 ([CVE-2013-0169]). The padding check ...")
	// is not one.
	citation = regexp.MustCompile(`\(\s*\[?CVE-[0-9]{4}-[0-9]{4,9}\]?(?:\s*(?:,|and)\s*\[?CVE-[0-9]{4}-[0-9]{4,9}\]?)*\s*\)\.?\s*$`)
)

// ParseChanges reads the sections of a CHANGES.md; name names it in
// messages. A file with no section is an error: it is no OpenSSL
// CHANGES.md.
func ParseChanges(name string, data []byte) ([]ReleaseNotes, error) {
	var out []ReleaseNotes
	var cur *ReleaseNotes
	for i, line := range strings.Split(string(data), "\n") {
		if m := changesHeading.FindStringSubmatch(line); m != nil {
			if _, err := osslver.Parse(m[2]); err != nil {
				return nil, fmt.Errorf("%s:%d: %q: %w", name, i+1, strings.TrimSpace(line), err)
			}
			out = append(out, ReleaseNotes{File: name, Line: i + 1, Release: m[2]})
			cur = &out[len(out)-1]
			if d, err := time.Parse("2 Jan 2006", strings.TrimSpace(m[3])); err == nil {
				cur.Date = d.Format(time.DateOnly)
			}
			continue
		}
		if cur == nil {
			continue
		}
		for _, c := range citation.FindAllString(line, -1) {
			cur.CVEs = append(cur.CVEs, anyCVE.FindAllString(c, -1)...)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no \"Changes between X and Y [date]\" section: not OpenSSL's CHANGES.md", name)
	}
	return out, nil
}

// ReadNotes reads the release notes in path: an OpenSSL release tarball
// (its top directory's CHANGES.md, read from the stream without
// unpacking) or a CHANGES.md itself.
func ReadNotes(ctx context.Context, file string) ([]ReleaseNotes, error) {
	if !strings.HasSuffix(file, ".tar.gz") && !strings.HasSuffix(file, ".tgz") {
		b, err := ctxio.ReadFile(ctx, file, true, maxFile)
		if err != nil {
			return nil, err
		}
		return ParseChanges(file, b)
	}
	f, _, err := ctxio.OpenRegular(file, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var found []byte
	var member string
	errFound := errors.New("found")
	err = inspect.WalkTarGz(ctx, file, f, inspect.Limits{}, func(m inspect.Member, r io.Reader) error {
		if dir, base := path.Split(m.Name); base != "CHANGES.md" || strings.Count(strings.Trim(dir, "/"), "/") != 0 || dir == "" {
			return nil
		}
		b, err := ctxio.ReadAll(ctx, r, file+"("+m.Name+")", maxFile)
		found, member = b, m.Name
		return cmp.Or(err, errFound)
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no CHANGES.md in its top directory: not an OpenSSL release tarball", file)
	}
	return ParseChanges(file+"("+member+")", found)
}

// CompareNotes holds a table to releases' notes and returns every
// disagreement, each starting "CVE-YYYY-NNNN RELEASE: " (the key of
// a reviewed exception). Forward, for every section: each CVE it cites is
// in the table, fixed in that release for its series (for a series'
// first release: not affecting it). Backward, for own (the release
// whose tarball the notes are, "" for none): every CVE the table says a
// release of own's series up to own fixes publicly is cited by that
// release's section.
func CompareNotes(t *advisory.Table, notes []ReleaseNotes, own string) []string {
	var out []string
	byCVE := map[string]*advisory.Advisory{}
	for i := range t.Advisories {
		byCVE[t.Advisories[i].CVE] = &t.Advisories[i]
	}
	sections := map[string]*ReleaseNotes{}
	for i, n := range notes {
		rel, err := osslver.Parse(n.Release)
		if err != nil {
			continue // ParseChanges read only versions
		}
		series := rel.Series()
		if _, dup := sections[n.Release]; !dup {
			sections[n.Release] = &notes[i]
		}
		first := osslver.Compare(seriesStart(rel), rel) == 0
		for _, c := range n.CVEs {
			a := byCVE[c]
			if a == nil {
				out = append(out, fmt.Sprintf("%s %s: %s:%d cites it, and the table has no such CVE", c, n.Release, n.File, n.Line))
				continue
			}
			var rg *advisory.Range // a table holds one range a series
			if i := slices.IndexFunc(a.Affected, func(r advisory.Range) bool { return r.Series == series }); i >= 0 {
				rg = &a.Affected[i]
			}
			switch {
			case rg != nil && rg.Fixed == n.Release:
			case first && (rg == nil || !rg.Contains(rel)):
			case rg == nil:
				out = append(out, fmt.Sprintf("%s %s: %s:%d says %s fixes it; the table has no range of series %s", c, n.Release, n.File, n.Line, n.Release, series))
			default:
				out = append(out, fmt.Sprintf("%s %s: %s:%d says %s fixes it; the table says series %s is fixed in %s", c, n.Release, n.File, n.Line, n.Release, series, rg.Fix()))
			}
		}
	}
	if own == "" {
		return out
	}
	ov, err := osslver.Parse(own)
	if err != nil {
		return append(out, fmt.Sprintf("- %s: %v", own, err))
	}
	for _, a := range t.Advisories {
		for _, rg := range a.Affected {
			if rg.Series != ov.Series() || !rg.Public {
				continue
			}
			fv, err := osslver.Parse(rg.Fixed)
			if err != nil || osslver.Compare(fv, ov) > 0 {
				continue
			}
			s := sections[rg.Fixed]
			switch {
			case s == nil:
				out = append(out, fmt.Sprintf("%s %s: the table says %s fixes it; %s's notes have no section for %s", a.CVE, rg.Fixed, rg.Fixed, own, rg.Fixed))
			case !slices.Contains(s.CVEs, a.CVE):
				out = append(out, fmt.Sprintf("%s %s: the table says %s fixes it; %s:%d does not cite it", a.CVE, rg.Fixed, rg.Fixed, s.File, s.Line))
			}
		}
	}
	return out
}
