package check

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/lifecycle"
)

// SliceAdvisories is what OpenSSL's published advisories say of one
// slice's OpenSSL release.
type SliceAdvisories struct {
	Release string `json:"release"` // the release matched: "3.0.5" for "3.0.5+quic"
	// Total counts the advisories affecting it, suppressed ones left out;
	// Counts gives them by severity (critical, high, moderate, low,
	// unknown), Highest the most severe rated one.
	Total   int            `json:"total"`
	Counts  map[string]int `json:"counts"`
	Highest string         `json:"highest,omitempty"`
	// FixedBy is the release of the series fixing every counted advisory
	// that has a public fix; NoPublicFix counts those that have none
	// (fixed after the series' end of life, for premium support customers
	// only, or no fix named); Fix says both in words.
	FixedBy     string `json:"fixed_by,omitempty"`
	NoPublicFix int    `json:"no_public_fix"`
	Fix         string `json:"fix,omitempty"`
	Suppressed  int    `json:"suppressed"` // affecting it, but assessed as not applying (-vex)
	// Caveats say why matching by version may be wrong here: a
	// distribution's build, a suffixed release, a series past its end of
	// life.
	Caveats []string `json:"caveats,omitempty"`
	// Failing are the CVEs at or above -fail-on.
	Failing []string          `json:"failing,omitempty"`
	List    []AdvisoryFinding `json:"list"` // suppressed ones too, marked
}

// AdvisoryFinding is one advisory affecting a slice's release.
type AdvisoryFinding struct {
	CVE          string `json:"cve"`
	Date         string `json:"date"`
	Severity     string `json:"severity"`
	Series       string `json:"series"`
	Introduced   string `json:"introduced"`
	Fixed        string `json:"fixed,omitempty"`
	LastAffected string `json:"last_affected,omitempty"`
	PublicFix    bool   `json:"public_fix"`
	Fix          string `json:"fix"` // "3.0.8", "no public fix (3.0.23: premium support only)"
	URL          string `json:"url,omitempty"`
	// Suppressed is the assessment's reason and where it is, when the
	// -vex file says the CVE does not apply.
	Suppressed string `json:"suppressed,omitempty"`
}

// AdvisoryReport is the advisories over the whole input.
type AdvisoryReport struct {
	AsOf string `json:"as_of"` // the day the table is complete through
	// Table names the table in use (advisory.Table.Describe); Origin is
	// "embedded" or the -advisories file; Sources are the records it was
	// built from, each with its commit.
	Table   string            `json:"table"`
	Origin  string            `json:"origin"`
	Sources []advisory.Source `json:"sources"`
	Listed  int               `json:"listed"` // advisories in the table
	// Stale warns when the table is more than advisory.StaleAfterDays
	// old on the day of the check.
	Stale    string `json:"stale,omitempty"`
	FailOn   string `json:"fail_on,omitempty"`
	Assessed string `json:"assessed,omitempty"` // the -vex file
	Matched  int    `json:"matched"`            // slices whose release was matched against the table
	Affected int    `json:"affected"`           // of those, slices an unsuppressed advisory affects
	// CVEs counts the distinct advisories affecting them, Counts by
	// severity; Suppressed the distinct ones the -vex file suppressed
	// somewhere, SuppressedCVEs which.
	CVEs           int            `json:"cves"`
	Counts         map[string]int `json:"counts"`
	Suppressed     int            `json:"suppressed"`
	SuppressedCVEs []string       `json:"suppressed_cves"`
	// Unused are the -vex file's CVEs that affected nothing found.
	Unused []string `json:"unused,omitempty"`
}

// advisories matches a judged slice's OpenSSL release against the table,
// applies the assessments and, with -fail-on, fails it at or above the
// threshold. Forks are not OpenSSL releases and are not matched.
func (c *checker) advisories(b *Binary, s *Slice) {
	f, num := inspect.FamilyOf(s.Version)
	if f != inspect.FamilyOpenSSL || c.table == nil {
		return
	}
	m, err := c.table.Affecting(num)
	if err != nil {
		return
	}
	sa := &SliceAdvisories{Release: m.Release, Counts: map[string]int{}, List: []AdvisoryFinding{}}
	var counted []advisory.Finding
	for _, fd := range m.Findings {
		af := AdvisoryFinding{CVE: fd.CVE, Date: fd.Date, Severity: string(fd.Severity), Series: fd.Range.Series, Introduced: fd.Range.Introduced,
			Fixed: fd.Range.Fixed, LastAffected: fd.Range.LastAffected, PublicFix: fd.Range.PublicFix() != "", Fix: fd.Range.Fix(), URL: fd.URL}
		if e, ok := c.res.assessed.Lookup(fd.CVE, m.Release); ok {
			af.Suppressed = e.Reason + " (" + e.Where + ")"
			sa.Suppressed++
		} else {
			counted = append(counted, fd)
		}
		sa.List = append(sa.List, af)
	}
	sum := advisory.Summarize(counted)
	sa.Total, sa.Highest, sa.FixedBy, sa.NoPublicFix, sa.Fix = sum.Total, string(sum.Highest), sum.FixedBy, sum.NoPublicFix, sum.Fixes()
	for _, sev := range advisory.Severities {
		sa.Counts[string(sev)] = sum.Counts[sev]
	}
	sa.Caveats = caveats(b, s, m, c.table)
	s.Advisories = sa
	failing := advisory.AtLeast(counted, c.failOn)
	if c.failOn == "" || len(failing) == 0 {
		return
	}
	for _, fd := range failing {
		sa.Failing = append(sa.Failing, fd.CVE)
	}
	s.Problems = append(s.Problems, Problem{Rule: RuleAdvisory, Message: failMessage(num, c.failOn, failing)})
}

// failMessage names what -fail-on failed: "OpenSSL 1.1.1t: 3 known
// advisories at or above high (-fail-on=high): CVE-2023-0464 (high, fixed
// in 1.1.1u), ...", ten at most.
func failMessage(version string, threshold advisory.Severity, fs []advisory.Finding) string {
	var parts []string
	for i, f := range fs {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(fs)-i))
			break
		}
		parts = append(parts, cveText(f.CVE, string(f.Severity), f.Range.Fix(), f.Range.PublicFix() != ""))
	}
	what := plural(len(fs), "known advisory", "known advisories") // fs holds one or more
	msg := fmt.Sprintf("OpenSSL %s: %d %s at or above %s (-fail-on=%s): %s", version, len(fs), what, threshold, threshold, strings.Join(parts, ", "))
	if slices.ContainsFunc(fs, func(f advisory.Finding) bool { return f.Severity == advisory.Unknown }) {
		msg += "; upstream rated the unknown ones with no severity, and -fail-on fails them at every level"
	}
	return msg
}

// caveats say where matching by version number cannot be trusted for this
// slice.
func caveats(b *Binary, s *Slice, m *advisory.Match, t *advisory.Table) []string {
	var out []string
	if d := distribution(b, s); d != "" {
		out = append(out, d+": distributions backport fixes without changing the version, so advisories listed here may be fixed in it; check the distribution's security tracker and record what it fixed in a -vex file")
	}
	if m.Version.Suffixed() {
		out = append(out, fmt.Sprintf("%s is a suffixed build (a fork such as quictls's +quic, or a vendor's): matched as %s; fixes its maintainers backported, or changes of their own, are invisible to a version match", m.Version, m.Release))
	}
	if ser, ok := lifecycle.Of(m.Release); ok && ser.EndOfLife < t.AsOf {
		out = append(out, fmt.Sprintf("the %s series ended on %s: advisories published since name only premium support releases for it, or leave it out as no longer analysed, so more may affect it than are listed", ser.Name, ser.EndOfLife))
	}
	return out
}

// distribution names a Linux distribution's build of OpenSSL, whose
// version number does not tell what was backported into it: Debian's
// and Ubuntu's Configure targets (debian-amd64), an RPM build's compiler
// line, a library in the system's library directories.
func distribution(b *Binary, s *Slice) string {
	switch {
	case strings.HasPrefix(s.Platform, "debian-"):
		return "a Debian or Ubuntu build (platform: " + s.Platform + ")"
	case strings.Contains(s.Compiler, "-specs=/usr/lib/rpm/"):
		return "an RPM distribution's build (its compiler line names /usr/lib/rpm)"
	}
	p := filepath.ToSlash(b.Path)
	systemDirs := []string{"/usr/lib/", "/usr/lib64/", "/lib/", "/lib64/", "/usr/lib32/"}
	if b.Member == "" && slices.ContainsFunc(systemDirs, func(dir string) bool { return strings.HasPrefix(p, dir) }) {
		return "a system library (" + b.Path + ")"
	}
	return ""
}

// summarize counts every slice of res, those not judged and those past
// their end of life, and the advisories over them.
func summarize(res *Result) {
	a := res.Advisories
	res.Slices, res.NotJudged, res.Ended = 0, 0, 0
	a.Matched, a.Affected, a.CVEs, a.Suppressed = 0, 0, 0, 0
	a.Counts, a.Unused = map[string]int{}, nil
	for _, sev := range advisory.Severities {
		a.Counts[string(sev)] = 0
	}
	affecting := map[string]string{} // CVE -> severity
	suppressed := map[string]bool{}
	for _, b := range res.Binaries {
		for _, s := range b.Slices {
			res.Slices++
			if s.Status == StatusNotJudged {
				res.NotJudged++
			}
			if s.Series != nil && s.Series.Ended {
				res.Ended++
			}
			sa := s.Advisories
			if sa == nil {
				continue
			}
			a.Matched++
			if sa.Total > 0 {
				a.Affected++
			}
			for _, f := range sa.List {
				if f.Suppressed != "" {
					suppressed[f.CVE] = true
				} else {
					affecting[f.CVE] = f.Severity
				}
			}
		}
	}
	for _, sev := range affecting {
		a.Counts[sev]++
	}
	a.CVEs = len(affecting)
	a.SuppressedCVEs = append([]string{}, slices.Sorted(maps.Keys(suppressed))...)
	a.Suppressed = len(a.SuppressedCVEs)
	if res.assessed != nil {
		for _, e := range res.assessed.Entries {
			if !suppressed[e.CVE] && !slices.Contains(a.Unused, e.CVE) {
				a.Unused = append(a.Unused, e.CVE)
			}
		}
	}
}

// advisoryCell is the table's ADVISORIES cell: "none", "12 (high), fix
// 3.0.21", "45 (high), fix 3.0.20 + 9 no public fix", "33 (high), no
// public fix", with ", 2 suppressed"; "" for a slice not matched.
func advisoryCell(s Slice) string {
	sa := s.Advisories
	if sa == nil {
		return ""
	}
	var cell string
	switch {
	case sa.Total == 0:
		cell = "none"
	case sa.NoPublicFix == 0:
		cell = fmt.Sprintf("%d (%s), fix %s", sa.Total, sa.Highest, sa.FixedBy)
	case sa.NoPublicFix == sa.Total:
		cell = fmt.Sprintf("%d (%s), no public fix", sa.Total, sa.Highest)
	default:
		cell = fmt.Sprintf("%d (%s), fix %s + %d no public fix", sa.Total, sa.Highest, sa.FixedBy, sa.NoPublicFix)
	}
	if sa.Suppressed > 0 {
		cell += fmt.Sprintf(", %d suppressed", sa.Suppressed)
	}
	return cell
}

// advisoryLines are a slice's advisories in full, for the text report:
// the counts and fixes, the high and critical ones by name, then each
// caveat.
func advisoryLines(b Binary, s Slice) []string {
	sa := s.Advisories
	if sa == nil || sa.Total == 0 && sa.Suppressed == 0 {
		return nil
	}
	where := b.Name() + " " + s.Arch
	_, num := inspect.FamilyOf(s.Version)
	what := "OpenSSL " + num
	if num != sa.Release {
		what += " (matched as " + sa.Release + ")"
	}
	// The counted ones of high and critical severity by name; the
	// suppressed ones (sa.Suppressed of them) by CVE.
	var severe, ids []string
	for _, f := range sa.List {
		switch {
		case f.Suppressed != "":
			ids = append(ids, f.CVE)
		case f.Severity == string(advisory.Critical) || f.Severity == string(advisory.High):
			severe = append(severe, cveText(f.CVE, f.Severity, f.Fix, f.PublicFix))
		}
	}
	line := fmt.Sprintf("%s: %s: no known advisory left", where, what)
	if sa.Total > 0 {
		line = fmt.Sprintf("%s: %s: %d known %s (%s), highest %s; %s", where, what, sa.Total, plural(sa.Total, "advisory", "advisories"),
			countsText(sa.Counts), sa.Highest, sa.Fix)
	}
	if len(severe) > 0 {
		line += "; high and critical: " + strings.Join(severe, ", ")
	}
	if len(ids) > 0 {
		line += fmt.Sprintf("; %d suppressed as assessed (%s)", len(ids), strings.Join(ids, ", "))
	}
	out := []string{line}
	for _, cv := range sa.Caveats {
		out = append(out, where+": matching by version: "+cv)
	}
	return out
}

// cveText is "CVE-2023-0464 (high, fixed in 1.1.1u)", or the fix's own
// words when there is no public one.
func cveText(cve, severity, fix string, public bool) string {
	if public {
		fix = "fixed in " + fix
	}
	return fmt.Sprintf("%s (%s, %s)", cve, severity, fix)
}

// countsText is "2 high, 10 moderate, 30 low", zero counts left out.
func countsText(counts map[string]int) string {
	var parts []string
	for _, sev := range advisory.Severities {
		if n := counts[string(sev)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, sev))
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// AdvisorySummary is the advisories over the whole input in one line, for
// the text report and the step summary: the table's date, what is
// affected, what the -vex file suppressed; "" when nothing was matched.
func AdvisorySummary(res *Result) string {
	a := res.Advisories
	if a == nil {
		return ""
	}
	if a.Matched == 0 {
		return "advisories: " + a.Table + ": no OpenSSL release matched"
	}
	msg := fmt.Sprintf("advisories: %s: %d of %d OpenSSL slices affected", a.Table, a.Affected, a.Matched)
	if a.CVEs > 0 {
		msg += fmt.Sprintf(" (%d %s: %s)", a.CVEs, plural(a.CVEs, "CVE", "CVEs"), countsText(a.Counts))
	}
	if a.Assessed != "" {
		msg += fmt.Sprintf("; %d suppressed by %s", a.Suppressed, a.Assessed)
		if a.Suppressed > 0 {
			msg += " (" + strings.Join(a.SuppressedCVEs, ", ") + ")"
		}
		if len(a.Unused) > 0 {
			msg += fmt.Sprintf("; %d assessed CVEs affect nothing found (%s)", len(a.Unused), strings.Join(a.Unused, ", "))
		}
	}
	if a.FailOn != "" {
		return msg + "; -fail-on=" + a.FailOn
	}
	return msg + "; reported, not failed (-fail-on=SEVERITY fails them)"
}
