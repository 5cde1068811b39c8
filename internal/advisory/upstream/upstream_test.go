package upstream

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/osslver"
)

// testSource is the test records' source as the table names it.
var testSource = advisory.Source{Name: ReleaseMetadata, URL: URLOf(ReleaseMetadata), Commit: "c0ffee1", Through: "2026-10-01"}

// testGaps accepts the test records' two holes: a text's section with no
// record, and an empty range.
func testGaps(t *testing.T) Gaps {
	t.Helper()
	g, err := ParseGaps("test gaps", "# the made-up text's orphan\nCVE-2099-0003 a text's section only\nCVE-2004-0975 0.9.6 to before 0.9.6-cvs\n")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func build(t *testing.T) (*advisory.Table, []string) {
	t.Helper()
	recs, texts, err := ReadDir(filepath.Join("testdata", "src"))
	if err != nil {
		t.Fatal(err)
	}
	tab, notes, err := Build([]Input{{Source: testSource, Records: recs, Texts: texts}}, Options{Gaps: testGaps(t)})
	if err != nil {
		t.Fatal(err)
	}
	return tab, notes
}

func find(tab *advisory.Table, cve string) *advisory.Advisory {
	for i := range tab.Advisories {
		if tab.Advisories[i].CVE == cve {
			return &tab.Advisories[i]
		}
	}
	return nil
}

// Build on records with OpenSSL's uneven cases: each gets the range,
// severity and public flag it should, and what was left out or filled in
// is a note.
func TestBuild(t *testing.T) {
	tab, notes := build(t)
	if tab.AsOf != "2026-10-01" || !slices.Equal(tab.Sources, []advisory.Source{testSource}) {
		t.Errorf("header %+v", tab)
	}
	for _, a := range tab.Advisories {
		if a.Source != ReleaseMetadata {
			t.Errorf("%s: source %q, want %s", a.CVE, a.Source, ReleaseMetadata)
		}
	}
	for _, tc := range []struct {
		cve, date string
		sev       advisory.Severity
		affected  []advisory.Range
	}{
		// 1.0.2's fix is after the series ended (2019-12-31): premium only.
		{"CVE-2023-0286", "2023-02-07", advisory.High, []advisory.Range{
			{Series: "3.0", Introduced: "3.0.0", Fixed: "3.0.8", Public: true},
			{Series: "1.1.1", Introduced: "1.1.1", Fixed: "1.1.1t", Public: true},
			{Series: "1.0.2", Introduced: "1.0.2", Fixed: "1.0.2zg"}}},
		// lessThanOrEqual; the fix from the text.
		{"CVE-2022-3996", "2022-12-13", advisory.Low, []advisory.Range{{Series: "3.0", Introduced: "3.0.0", Fixed: "3.0.8", LastAffected: "3.0.7", Public: true}}},
		// "MODERATE".
		{"CVE-2023-5363", "2023-10-24", advisory.Moderate, []advisory.Range{
			{Series: "3.1", Introduced: "3.1.0", Fixed: "3.1.4", Public: true},
			{Series: "3.0", Introduced: "3.0.0", Fixed: "3.0.12", Public: true}}},
		// The FIPS module's numbers: no range of an OpenSSL release.
		{"CVE-2007-5502", "2007-11-29", advisory.Unknown, []advisory.Range{}},
		// An "unaffected" entry is no range.
		{"CVE-2016-2183", "2016-08-24", advisory.Low, []advisory.Range{{Series: "1.0.2", Introduced: "1.0.2", Fixed: "1.0.2i", Public: true}}},
		// "3.1.1 to before 3.1.1", repaired by the text's upgrade line.
		{"CVE-2023-2650", "2023-05-30", advisory.Moderate, []advisory.Range{
			{Series: "3.1", Introduced: "3.1.0", Fixed: "3.1.1", Public: true},
			{Series: "3.0", Introduced: "3.0.0", Fixed: "3.0.9", Public: true},
			{Series: "1.1.1", Introduced: "1.1.1", Fixed: "1.1.1u", Public: true},
			{Series: "1.0.2", Introduced: "1.0.2", Fixed: "1.0.2zh"}}},
		// "0.9.6 to before 0.9.6-cvs" is empty: left out.
		{"CVE-2004-0975", "2004-09-30", advisory.Unknown, []advisory.Range{{Series: "0.9.7", Introduced: "0.9.7", Fixed: "0.9.7f", Public: true}}},
		{"CVE-2014-0224", "2014-06-05", advisory.Unknown, []advisory.Range{
			{Series: "1.0.1", Introduced: "1.0.1", Fixed: "1.0.1h", Public: true},
			{Series: "1.0.0", Introduced: "1.0.0", Fixed: "1.0.0m", Public: true},
			{Series: "0.9.8", Introduced: "0.9.8", Fixed: "0.9.8za", Public: true}}},
		// The day of "2026-09-29T16:21:57+02:00"; 3.0 ended 2026-09-07.
		{"CVE-2026-84782", "2026-09-29", advisory.High, []advisory.Range{
			{Series: "4.0", Introduced: "4.0.0", Fixed: "4.0.3", Public: true},
			{Series: "3.0", Introduced: "3.0.0", Fixed: "3.0.23"},
			{Series: "1.1.1", Introduced: "1.1.1", Fixed: "1.1.1zj"}}},
		// Dated by its text; rated by its text.
		{"CVE-2099-0002", "2026-01-28", advisory.Low, []advisory.Range{{Series: "3.6", Introduced: "3.6.0", Fixed: "3.6.1", Public: true}}},
		{"CVE-2099-0004", "2026-01-28", advisory.High, []advisory.Range{{Series: "3.5", Introduced: "3.5.0", Fixed: "3.5.5", Public: true}}},
		{"CVE-2099-0005", "2026-01-28", advisory.Moderate, []advisory.Range{{Series: "3.4", Introduced: "3.4.0", Fixed: "3.4.4", Public: true}}},
	} {
		a := find(tab, tc.cve)
		if a == nil {
			t.Errorf("%s: not in the table", tc.cve)
			continue
		}
		if a.Date != tc.date || a.Severity != tc.sev || !slices.Equal(a.Affected, tc.affected) {
			t.Errorf("%s: %s %s %+v\nwant %s %s %+v", tc.cve, a.Date, a.Severity, a.Affected, tc.date, tc.sev, tc.affected)
		}
	}
	if find(tab, "CVE-2099-0001") != nil {
		t.Error("a rejected record is in the table")
	}
	if len(tab.Advisories) != 12 {
		t.Errorf("%d advisories", len(tab.Advisories))
	}
	for _, want := range []string{
		"secjson/CVE-2099-0001.json: CVE-2099-0001 is REJECTED, not published: left out",
		"secjson/CVE-2099-0002.json: no datePublic; dated 2026-01-28 by its advisory text",
		"secjson/CVE-2099-0004.json: severity unknown in the record; high by its advisory text",
		"secjson/CVE-2007-5502.json: version \"fips-1.1.1\" is the FIPS module's own number, no OpenSSL release: left out",
		"secjson/CVE-2007-5502.json: no range of an OpenSSL release: kept, matching nothing",
		"secjson/CVE-2022-3996.json: series 3.0 affected up to 3.0.7; fixed in 3.0.8 by its advisory text",
		"secjson/CVE-2023-2650.json: range 3.1.1 to before 3.1.1 is empty; its advisory text fixes series 3.1 in 3.1.1: 3.1.0 to before 3.1.1",
		"secjson/CVE-2004-0975.json: range 0.9.6 to before 0.9.6-cvs is empty or crosses series: left out (an accepted gap: 0.9.6 to before 0.9.6-cvs)",
		"CVE-2099-0003: an advisory text has a section for it, and no source has its record (an accepted gap: a text's section only)",
	} {
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("no note %q in:\n%s", want, strings.Join(notes, "\n"))
		}
	}
	// The texts' premium markers agree with the end-of-life rule, and
	// "Medium" is moderate: no disagreement noted.
	for _, n := range notes {
		if strings.Contains(n, "says otherwise") || strings.Contains(n, "in its advisory text: the record's kept") || strings.Contains(n, "which no policy has") {
			t.Errorf("note %q", n)
		}
	}
	// What Build makes, Parse accepts.
	b, err := advisory.Encode(tab)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := advisory.Parse("built", b); err != nil {
		t.Fatal(err)
	}
}

// The texts' premium markers, in their layouts.
func TestParseText(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "src", "secadv", "20260929.txt"))
	if err != nil {
		t.Fatal(err)
	}
	txt, err := ParseText("secadv/20260929.txt", b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Fix{{"4.0", "4.0.3", false}, {"3.0", "3.0.23", true}, {"1.1.1", "1.1.1zj", true}}
	if len(txt.Sections) != 1 || !slices.Equal(txt.Sections[0].CVEs, []string{"CVE-2026-84782"}) || txt.Sections[0].Severity != "High" || !slices.Equal(txt.Sections[0].Fixes, want) {
		t.Errorf("sections %+v", txt.Sections)
	}
	for in, want := range map[string][]Fix{
		"T (CVE-2023-0001)\n=================\n\nOpenSSL 1.0.2 users should upgrade to OpenSSL 1.0.2zg (premium support customers\nonly).\n":          {{"1.0.2", "1.0.2zg", true}},
		"T (CVE-2023-0001)\n=================\n\nOpenSSL 1.1.1 users should upgrade to OpenSSL 1.1.1zd.\n(premium support customers only)\n":          {{"1.1.1", "1.1.1zd", true}},
		"T (CVE-2023-0001)\n=================\n\nPremium support customers of OpenSSL 1.0.2 should upgrade to 1.0.2w.\n":                              {{"1.0.2", "1.0.2w", true}},
		"T (CVE-2023-0001)\n=================\n\nOpenSSL 3.0 users should upgrade to OpenSSL 3.0.8.\nOpenSSL 1.1.1 users should upgrade to 1.1.1t.\n": {{"3.0", "3.0.8", false}, {"1.1.1", "1.1.1t", false}},
		"T (CVE-2023-0001)\n=================\n\nOpenSSL 3.0 users should upgrade to OpenSSL 3.1.1.\n":                                                nil, // another series' release
	} {
		txt, err := ParseText("x", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if len(txt.Sections) != 1 || !slices.Equal(txt.Sections[0].Fixes, want) {
			t.Errorf("%q: %+v, want %+v", in, txt.Sections, want)
		}
	}
	if _, err := ParseText("x", nil); !errors.Is(err, ErrText) {
		t.Errorf("empty text: %v", err)
	}
}

// Malformed records get an error naming the file and what is wrong.
func TestParseRecordMalformed(t *testing.T) {
	cna := func(s string) string {
		return `{"dataType":"CVE_RECORD","cveMetadata":{"cveId":"CVE-2023-0286","state":"PUBLISHED"},"containers":{"cna":` + s + `}}`
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `{"dataType":`, "not a CVE JSON record"},
		{"dataType", `{"dataType":"CVE_LIST"}`, `dataType "CVE_LIST", want CVE_RECORD`},
		{"no id", `{"dataType":"CVE_RECORD","cveMetadata":{"state":"PUBLISHED"}}`, `cveMetadata.cveId "": want CVE-YYYY-NNNN`},
		{"no metadata", `{"dataType":"CVE_RECORD"}`, `cveMetadata.cveId ""`},
		{"no state", `{"dataType":"CVE_RECORD","cveMetadata":{"cveId":"CVE-2023-0286"}}`, "CVE-2023-0286: no cveMetadata.state"},
		{"no cna", `{"dataType":"CVE_RECORD","cveMetadata":{"cveId":"CVE-2023-0286","state":"PUBLISHED"},"containers":{}}`, "no containers.cna"},
		{"date", cna(`{"datePublic":"7 Feb 2023"}`), `datePublic "7 Feb 2023": want an RFC 3339 timestamp`},
		{"version", cna(`{"affected":[{"product":"OpenSSL","versions":[{"lessThan":"3.0.8","status":"affected"}]}]}`), "an affected version of OpenSSL with no version"},
		{"both ends", cna(`{"affected":[{"product":"OpenSSL","versions":[{"version":"3.0.0","lessThan":"3.0.8","lessThanOrEqual":"3.0.7","status":"affected"}]}]}`), "gives both lessThan and lessThanOrEqual"},
		{"wrong type", cna(`{"affected":{}}`), "not a CVE JSON record: json: cannot unmarshal object"},
		{"trailing", cna(`{}`) + `{}`, "data after the record"},
	} {
		_, err := ParseRecord("secjson/CVE-2023-0286.json", []byte(tc.in))
		if !errors.Is(err, ErrRecord) || !strings.HasPrefix(err.Error(), "secjson/CVE-2023-0286.json: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrRecord saying %q", tc.name, err, tc.want)
		}
	}
}

// Records the table cannot hold stop Build with an error naming them.
func TestBuildRefuses(t *testing.T) {
	rec := func(cve, date, sev string) *Record {
		return &Record{Name: "secjson/" + cve + ".json", CVE: cve, State: "PUBLISHED", Date: date, Severity: sev,
			Versions: []VersionEntry{{Product: "OpenSSL", Version: "3.0.0", LessThan: "3.0.8", Status: "affected"}}}
	}
	for _, tc := range []struct {
		name string
		recs []*Record
		want string
	}{
		{"severity", []*Record{rec("CVE-2023-0286", "2023-02-07", "Severe")}, `secjson/CVE-2023-0286.json: malformed advisory record: CVE-2023-0286: severity "Severe"`},
		{"no date", []*Record{rec("CVE-2023-0286", "", "High")}, "CVE-2023-0286 has no datePublic and no advisory text names it"},
		{"twice", []*Record{rec("CVE-2023-0286", "2023-02-07", "High"), rec("CVE-2023-0286", "2023-02-07", "High")}, "CVE-2023-0286 is also secjson/CVE-2023-0286.json"},
	} {
		_, _, err := Build([]Input{{Source: testSource, Records: tc.recs}}, Options{})
		if !errors.Is(err, ErrRecord) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// A record dated after every source's day: the sources' days are wrong.
	if _, _, err := Build([]Input{{Source: testSource, Records: []*Record{rec("CVE-2023-0286", "2027-01-01", "High")}}}, Options{}); err == nil || !strings.Contains(err.Error(), "after every source's day") {
		t.Errorf("after as-of: %v", err)
	}
}

// A hole Build can see refuses the table, naming each: a CVE a text or a
// release's notes name with no record, a range it cannot read; and a gap
// listed that it does not meet. The same records with their holes
// accepted build.
func TestBuildRefusesHoles(t *testing.T) {
	recs, texts, err := ReadDir(filepath.Join("testdata", "src"))
	if err != nil {
		t.Fatal(err)
	}
	in := []Input{{Source: testSource, Records: recs, Texts: texts}}
	notes := []ReleaseNotes{{File: "CHANGES.md", Line: 7, Release: "3.0.8", CVEs: []string{"CVE-2023-0286", "CVE-2022-3996"}}}
	without := func(cve string) []Input {
		return []Input{{Source: testSource, Texts: texts, Records: slices.DeleteFunc(slices.Clone(recs), func(r *Record) bool { return r.CVE == cve })}}
	}
	unreadable := func(in []Input) []Input {
		out := slices.Clone(in[0].Records)
		for i, r := range out {
			if r.CVE == "CVE-2023-5363" {
				c := *r
				c.Versions = slices.Clone(c.Versions)
				c.Versions[0].LessThan = "3.1.x"
				out[i] = &c
			}
		}
		return []Input{{Source: testSource, Texts: texts, Records: out}}
	}
	for _, tc := range []struct {
		name string
		in   []Input
		o    Options
		want []string
	}{
		{"no gaps accepted", in, Options{}, []string{
			"secjson/CVE-2004-0975.json: range 0.9.6 to before 0.9.6-cvs is empty or crosses series",
			"CVE-2099-0003: an advisory text has a section for it, and no source has its record"}},
		{"a release's CVE with no record", without("CVE-2022-3996"), Options{Gaps: testGaps(t), Notes: notes}, []string{
			"CVE-2022-3996: CHANGES.md:7 says 3.0.8 fixes it, and no source has its record"}},
		{"a range unreadable", unreadable(in), Options{Gaps: testGaps(t)}, []string{
			`secjson/CVE-2023-5363.json: lessThan "3.1.x" is no OpenSSL release: range 3.1.0 left out`}},
		{"a gap not met", without("CVE-2004-0975"), Options{Gaps: testGaps(t)}, []string{
			"gaps listed for CVE-2004-0975, and no such hole was found"}},
	} {
		_, _, err := Build(tc.in, tc.o)
		if !errors.Is(err, ErrHole) {
			t.Errorf("%s: err = %v, want ErrHole", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to say %q", tc.name, err, w)
			}
		}
	}
	if _, _, err := Build(in, Options{Gaps: testGaps(t), Notes: notes}); err != nil {
		t.Errorf("every hole accepted, every release's CVE recorded: %v", err)
	}
}

// Two sources: the later-updated copy of a record is read and the
// advisory names its source; the table is as of the newest source's day.
func TestBuildTwoSources(t *testing.T) {
	rec := func(updated, fixed string) *Record {
		return &Record{Name: "CVE-2026-54876.json", CVE: "CVE-2026-54876", State: "PUBLISHED", Date: "2026-08-05", Severity: "Low", Updated: updated, Assigner: OpenSSL,
			Versions: []VersionEntry{{Product: "OpenSSL", Version: "3.6.0", LessThan: fixed, Status: "affected"}}}
	}
	cl := advisory.Source{Name: CVEList, URL: URLOf(CVEList), Commit: "8798e9cd", Through: "2026-11-30"}
	old := testSource
	old.Through = "2026-06-10"
	for _, tc := range []struct {
		name       string
		rm, cves   *Record
		src, fixed string
	}{
		{"newer in the CVE list", rec("2026-08-05T10:00:00Z", "3.6.3"), rec("2026-08-06T10:00:00Z", "3.6.4"), CVEList, "3.6.4"},
		{"newer in release-metadata", rec("2026-08-07T10:00:00Z", "3.6.4"), rec("2026-08-06T10:00:00Z", "3.6.3"), ReleaseMetadata, "3.6.4"},
	} {
		tab, notes, err := Build([]Input{{Source: old, Records: []*Record{tc.rm}}, {Source: cl, Records: []*Record{tc.cves}}}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tab.AsOf != "2026-11-30" || len(tab.Sources) != 2 || len(tab.Advisories) != 1 {
			t.Fatalf("%s: %+v", tc.name, tab)
		}
		a := tab.Advisories[0]
		if a.Source != tc.src || a.Affected[0].Fixed != tc.fixed {
			t.Errorf("%s: source %s, fixed %s; want %s, %s", tc.name, a.Source, a.Affected[0].Fixed, tc.src, tc.fixed)
		}
		if tc.src == CVEList && !slices.ContainsFunc(notes, func(n string) bool {
			return strings.Contains(n, "CVEProject/cvelistV5's record (updated 2026-08-06T10:00:00Z) is read")
		}) {
			t.Errorf("%s: notes %q", tc.name, notes)
		}
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "not a checkout of openssl/release-metadata") {
		t.Errorf("empty dir: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "secjson"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "src", "secjson", "CVE-2023-0286.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secjson", "CVE-2023-0464.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadDir(dir); !errors.Is(err, ErrRecord) || !strings.Contains(err.Error(), "secjson/CVE-2023-0464.json: malformed advisory record: the record is of CVE-2023-0286") {
		t.Errorf("misnamed record: %v", err)
	}
}

// FuzzParseRecord: the record reader never panics; what it accepts Build
// either turns into a table Parse accepts or refuses with a named error.
func FuzzParseRecord(f *testing.F) {
	ents, err := os.ReadDir(filepath.Join("testdata", "src", "secjson"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata", "src", "secjson", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRecord("fuzz.json", data)
		if err != nil {
			if !errors.Is(err, ErrRecord) {
				t.Fatalf("unnamed error %v", err)
			}
			return
		}
		src := testSource
		src.Through = "2100-01-01"
		tab, _, err := Build([]Input{{Source: src, Records: []*Record{r}}}, Options{})
		if err != nil {
			if !errors.Is(err, ErrRecord) && !errors.Is(err, advisory.ErrMalformed) && !errors.Is(err, ErrHole) {
				t.Fatalf("Build: unnamed error %v", err)
			}
			return
		}
		b, err := advisory.Encode(tab)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := advisory.Parse("built", b); err != nil {
			t.Fatalf("Build made a table Parse refuses: %v", err)
		}
	})
}

// FuzzParseText: the advisory text reader never panics, and every fix it
// reads is a release of the series it names.
func FuzzParseText(f *testing.F) {
	ents, err := os.ReadDir(filepath.Join("testdata", "src", "secadv"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata", "src", "secadv", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		txt, err := ParseText("fuzz.txt", data)
		if err != nil {
			return
		}
		for _, s := range txt.Sections {
			for _, c := range s.CVEs {
				if !advisory.IsCVE(c) {
					t.Fatalf("section CVE %q", c)
				}
			}
			for _, fx := range s.Fixes {
				v, err := osslver.Parse(fx.Release)
				if err != nil || v.Series() != fx.Series {
					t.Fatalf("fix %+v", fx)
				}
			}
		}
	})
}

// A series the advisory text tells to upgrade, which the record names
// neither affected nor unaffected, is a range from the series' first
// release to that fix (CVE-2016-2183's record names 1.0.2 alone; its text
// fixes 1.0.1 in 1.0.1u): a scanner must not call 1.0.1t clean.
func TestBuildRangeFromText(t *testing.T) {
	r := &Record{Name: "secjson/CVE-2016-2183.json", CVE: "CVE-2016-2183", State: "PUBLISHED", Date: "2016-08-24", Severity: "Low",
		Versions: []VersionEntry{{Product: "OpenSSL", Version: "1.0.2", LessThan: "1.0.2i", Status: "affected"}, {Product: "OpenSSL", Version: "1.1.0", Status: "unaffected"}}}
	tx := &Text{Name: "secadv/20160922.txt", Sections: []Section{{CVEs: []string{"CVE-2016-2183"}, Fixes: []Fix{
		{Series: "1.0.2", Release: "1.0.2i"}, {Series: "1.0.1", Release: "1.0.1u"}, {Series: "1.1.0", Release: "1.1.0a"}}}}}
	tab, notes, err := Build([]Input{{Source: testSource, Records: []*Record{r}, Texts: []*Text{tx}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []advisory.Range{
		{Series: "1.0.2", Introduced: "1.0.2", Fixed: "1.0.2i", Public: true},
		{Series: "1.0.1", Introduced: "1.0.1", Fixed: "1.0.1u", Public: true}}
	if got := tab.Advisories[0].Affected; !slices.Equal(got, want) {
		t.Errorf("ranges %+v\nwant %+v", got, want)
	}
	if !slices.Contains(notes, "secjson/CVE-2016-2183.json: the record names no range of series 1.0.1; its advisory text fixes it in 1.0.1u: 1.0.1 to before 1.0.1u") {
		t.Errorf("notes %q", notes)
	}
}

// Where a record's fix and its advisory text disagree, the note says so
// and the record is kept; where the text's premium marker contradicts the
// series' end of life, the note says so and the end of life is kept.
func TestBuildTextDisagrees(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rg     VersionEntry
		fix    Fix
		public bool
		note   string // "" for none
	}{
		{"another fix", VersionEntry{Product: "OpenSSL", Version: "3.0.0", LessThan: "3.0.8", Status: "affected"}, Fix{Series: "3.0", Release: "3.0.9"}, true,
			"secjson/CVE-2023-0286.json: series 3.0 fixed in 3.0.8 by the record, 3.0.9 by its advisory text: the record's kept"},
		{"premium before the end of life", VersionEntry{Product: "OpenSSL", Version: "3.0.0", LessThan: "3.0.8", Status: "affected"}, Fix{Series: "3.0", Release: "3.0.8", Premium: true}, true,
			"secjson/CVE-2023-0286.json: 3.0.8 is premium support only by its advisory text, but the series' end of life says otherwise: the end of life's kept"},
		{"public after the end of life", VersionEntry{Product: "OpenSSL", Version: "1.0.2", LessThan: "1.0.2zg", Status: "affected"}, Fix{Series: "1.0.2", Release: "1.0.2zg"}, false,
			"secjson/CVE-2023-0286.json: 1.0.2zg is public by its advisory text, but the series' end of life says otherwise: the end of life's kept"},
		{"agreeing", VersionEntry{Product: "OpenSSL", Version: "3.0.0", LessThan: "3.0.8", Status: "affected"}, Fix{Series: "3.0", Release: "3.0.8"}, true, ""},
	} {
		r := &Record{Name: "secjson/CVE-2023-0286.json", CVE: "CVE-2023-0286", State: "PUBLISHED", Date: "2023-02-07", Severity: "High", Versions: []VersionEntry{tc.rg}}
		tx := &Text{Name: "secadv/20230207.txt", Sections: []Section{{CVEs: []string{r.CVE}, Fixes: []Fix{tc.fix}}}}
		tab, notes, err := Build([]Input{{Source: testSource, Records: []*Record{r}, Texts: []*Text{tx}}}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := tab.Advisories[0].Affected[0]; got.Fixed != tc.rg.LessThan || got.Public != tc.public {
			t.Errorf("%s: range %+v", tc.name, got)
		}
		disagree := slices.DeleteFunc(notes, func(n string) bool { return !strings.Contains(n, "'s kept") })
		if want := []string{tc.note}; tc.note == "" && len(disagree) > 0 || tc.note != "" && !slices.Equal(disagree, want) {
			t.Errorf("%s: notes %q, want %q", tc.name, disagree, tc.note)
		}
	}
}
