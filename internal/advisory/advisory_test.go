package advisory

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/lifecycle"
)

// The embedded table parses, is in its canonical form (what the
// generator writes), and every range's public flag is the end-of-life
// rule: a fix published after its series ended went to premium support
// customers only.
func TestEmbedded(t *testing.T) {
	tab, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := Encode(tab)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, embedded) {
		t.Error("advisories.json is not in Encode's canonical form: regenerate it with internal/advisory/cmd/genadvisories")
	}
	if len(tab.Advisories) < 250 {
		t.Errorf("%d advisories: OpenSSL has published more than 250", len(tab.Advisories))
	}
	sev := map[Severity]int{}
	for _, a := range tab.Advisories {
		sev[a.Severity]++
		for _, r := range a.Affected {
			if r.Fixed == "" {
				continue
			}
			s, ok := lifecycle.Of(r.Fixed)
			if !ok {
				continue
			}
			if want := a.Date <= s.EndOfLife; r.Public != want {
				t.Errorf("%s: %s fixed in %s on %s, series ended %s: public %v, want %v", a.CVE, r.Series, r.Fixed, a.Date, s.EndOfLife, r.Public, want)
			}
		}
	}
	// About a third of OpenSSL's records give no severity (everything
	// before its 2014 policy).
	if sev[Unknown] < 50 || sev[Critical] < 1 || sev[High] < 10 {
		t.Errorf("severities %v", sev)
	}
}

func TestAffecting(t *testing.T) {
	tab, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version, release string
		has              map[string]string // CVE -> its Fix in the version's series
		hasNot           []string
	}{
		{"1.1.1t", "1.1.1t", map[string]string{
			"CVE-2023-0464":  "1.1.1u",                                        // fixed after 1.1.1t, before the series ended
			"CVE-2026-84782": "no public fix (1.1.1zj: premium support only)", // after 2023-09-11
		}, []string{"CVE-2023-0286" /* fixed in 1.1.1t itself */, "CVE-2022-3602" /* 3.0 only */}},
		{"3.0.5+quic", "3.0.5", map[string]string{
			"CVE-2022-3602":  "3.0.7",
			"CVE-2023-0286":  "3.0.8",
			"CVE-2026-84782": "no public fix (3.0.23: premium support only)", // 3.0 ended 2026-09-07
		}, nil},
		{"3.0.7", "3.0.7", map[string]string{"CVE-2022-3996": "3.0.8"}, nil}, // the record gives lessThanOrEqual 3.0.7
		{"3.0.8", "3.0.8", nil, []string{"CVE-2022-3996", "CVE-2022-3602"}},
		{"3.1.0", "3.1.0", map[string]string{"CVE-2023-2650": "3.1.1"}, nil}, // the record's empty range, repaired from its text
		{"4.0.3", "4.0.3", nil, []string{"CVE-2026-84782", "CVE-2026-84783"}},
	} {
		m, err := tab.Affecting(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if m.Release != tc.release {
			t.Errorf("%s: release %s", tc.version, m.Release)
		}
		got := map[string]string{}
		for _, f := range m.Findings {
			if f.Range.Series != m.Series {
				t.Errorf("%s: %s matched by series %s", tc.version, f.CVE, f.Range.Series)
			}
			got[f.CVE] = f.Range.Fix()
		}
		for cve, fix := range tc.has {
			if got[cve] != fix {
				t.Errorf("%s: %s: fix %q, want %q", tc.version, cve, got[cve], fix)
			}
		}
		for _, cve := range tc.hasNot {
			if _, ok := got[cve]; ok {
				t.Errorf("%s: %s listed", tc.version, cve)
			}
		}
	}
	if _, err := tab.Affecting("OpenSSL 1.1.1 (compatible; BoringSSL)"); err == nil {
		t.Error("a fork's version string matched")
	}
}

func TestSummarize(t *testing.T) {
	fs := []Finding{
		{Advisory{CVE: "CVE-1", Severity: High}, Range{Fixed: "3.0.8", Public: true}},
		{Advisory{CVE: "CVE-2", Severity: Low}, Range{Fixed: "3.0.20", Public: true}},
		{Advisory{CVE: "CVE-3", Severity: Unknown}, Range{Fixed: "3.0.23"}},
		{Advisory{CVE: "CVE-4", Severity: Moderate}, Range{Fixed: "3.0.22"}},
	}
	s := Summarize(fs)
	if s.Total != 4 || s.Highest != High || s.FixedBy != "3.0.20" || s.NoPublicFix != 2 || s.PremiumFix != "3.0.23" {
		t.Errorf("summary %+v", s)
	}
	if got := s.Fixes(); got != "3.0.20 fixes 2; 2 have no public fix (3.0.23: premium support only)" {
		t.Errorf("Fixes = %q", got)
	}
	if got := Summarize(fs[:2]).Fixes(); got != "fixed in 3.0.20" {
		t.Errorf("Fixes = %q", got)
	}
	if got := Summarize(fs[2:]).Fixes(); got != "no public fix (3.0.23: premium support only)" {
		t.Errorf("Fixes = %q", got)
	}
	if s := Summarize(fs[2:3]); s.Highest != Unknown {
		t.Errorf("only unknown: highest %q", s.Highest)
	}
	if s := Summarize(nil); s.Highest != "" || s.Fixes() != "" || s.Counts[Low] != 0 {
		t.Errorf("none: %+v", s)
	}
}

// -fail-on: a threshold and everything above it; unknown at every one.
func TestAtLeast(t *testing.T) {
	fs := []Finding{{Advisory: Advisory{CVE: "a", Severity: Critical}}, {Advisory: Advisory{CVE: "b", Severity: High}},
		{Advisory: Advisory{CVE: "c", Severity: Moderate}}, {Advisory: Advisory{CVE: "d", Severity: Low}}, {Advisory: Advisory{CVE: "e", Severity: Unknown}}}
	for _, tc := range []struct {
		threshold Severity
		want      string
	}{{Critical, "ae"}, {High, "abe"}, {Moderate, "abce"}, {Low, "abcde"}} {
		var got string
		for _, f := range AtLeast(fs, tc.threshold) {
			got += f.CVE
		}
		if got != tc.want {
			t.Errorf("AtLeast(%s) = %s, want %s", tc.threshold, got, tc.want)
		}
	}
}

func TestStale(t *testing.T) {
	tab := &Table{AsOf: "2026-09-29"}
	for _, tc := range []struct {
		now   string
		stale bool
	}{{"2026-09-29T23:00:00Z", false}, {"2026-12-28T23:59:59Z", false}, {"2026-12-29T00:00:00Z", true}} {
		now, _ := time.Parse(time.RFC3339, tc.now)
		msg, stale := tab.Stale(now)
		if stale != tc.stale {
			t.Errorf("%s: stale %v (%s)", tc.now, stale, msg)
		}
		if stale && !strings.Contains(msg, "as of 2026-09-29, 91 days before this check (more than 90)") {
			t.Errorf("message %q", msg)
		}
	}
}

// Builds warn of a release with a known high or critical advisory, naming
// the release that fixes it or saying none did publicly.
func TestWarning(t *testing.T) {
	// A table of a few of OpenSSL's advisories, for the exact words.
	tab, err := Parse("test", []byte(`{"schema":"`+Schema+`","as_of":"2026-09-29","sources":[{"name":"s","url":"https://example/s","commit":"abc1234","through":"2026-09-29"}],"advisories":[
{"cve":"CVE-2026-84782","source":"s","date":"2026-09-29","severity":"high","affected":[{"series":"4.0","introduced":"4.0.0","fixed":"4.0.3","public":true},{"series":"3.0","introduced":"3.0.0","fixed":"3.0.23","public":false}]},
{"cve":"CVE-2026-35189","source":"s","date":"2026-09-29","severity":"low","affected":[{"series":"4.0","introduced":"4.0.0","fixed":"4.0.3","public":true}]},
{"cve":"CVE-2026-45447","source":"s","date":"2026-06-09","severity":"high","affected":[{"series":"3.0","introduced":"3.0.0","fixed":"3.0.21","public":true}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ version, want string }{
		{"4.0.2", "OpenSSL 4.0.2: known advisory CVE-2026-84782 (high, 2026-09-29): fixed in 4.0.3"},
		{"3.0.19", "OpenSSL 3.0.19: 2 known advisories CVE-2026-84782 (high, 2026-09-29), CVE-2026-45447 (high, 2026-06-09): 3.0.21 fixes 1; 1 has no public fix (3.0.23: premium support only)"},
		{"3.0.22", "OpenSSL 3.0.22: known advisory CVE-2026-84782 (high, 2026-09-29): no public fix (3.0.23: premium support only)"},
		{"4.0.3", ""},
		{"BoringSSL", ""},
	} {
		msg, ok := tab.Warning(tc.version)
		if msg != tc.want || ok != (tc.want != "") {
			t.Errorf("%s:\n got %q, %v\nwant %q", tc.version, msg, ok, tc.want)
		}
	}
	// The embedded table: what stays true as OpenSSL publishes more.
	if msg, ok := Warning("4.0.2"); !ok || !strings.HasPrefix(msg, "OpenSSL 4.0.2: ") || !strings.Contains(msg, "CVE-2026-84782 (high, 2026-09-29)") {
		t.Errorf("embedded 4.0.2: %q %v", msg, ok)
	}
}

// Malformed tables get an error naming the input and what is wrong.
func TestParseMalformed(t *testing.T) {
	head := `{"schema":"` + Schema + `","as_of":"2026-09-29","sources":[{"name":"s","url":"https://example/s","commit":"abc1234","through":"2026-09-29"}],"advisories":[`
	adv := func(s string) string { return head + s + `]}` }
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `{`, "unexpected EOF"},
		{"unknown field", `{"schema":"` + Schema + `","as_of":"2026-09-29","sources":[{"name":"s","url":"https://example/s","commit":"abc1234","through":"2026-09-29"}],"advisories":[],"extra":1}`, `unknown field "extra"`},
		{"schema", `{"schema":"x","as_of":"2026-09-29","sources":[{"name":"s","url":"https://example/s","commit":"abc1234","through":"2026-09-29"}],"advisories":[]}`, `schema "x"`},
		{"as_of", `{"schema":"` + Schema + `","as_of":"2026-13-01","sources":[{"name":"s","url":"https://example/s","commit":"abc1234","through":"2026-13-01"}],"advisories":[]}`, `as_of "2026-13-01"`},
		{"no list", `{"schema":"` + Schema + `","as_of":"2026-09-29","sources":[{"name":"s","url":"https://example/s","commit":"abc1234","through":"2026-09-29"}]}`, "no advisories list"},
		{"cve", adv(`{"cve":"CVE-1","source":"s","date":"2026-01-01","severity":"low","affected":[]}`), `cve "CVE-1"`},
		{"twice", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"low","affected":[]},{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"low","affected":[]}`), "listed twice"},
		{"date", adv(`{"cve":"CVE-2026-0001","source":"s","date":"01/01/2026","severity":"low","affected":[]}`), `date "01/01/2026"`},
		{"after as_of", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-10-01","severity":"low","affected":[]}`), "after the table's as_of"},
		{"severity", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"High","affected":[]}`), `severity "High"`},
		{"no affected", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"low"}`), "no affected list"},
		{"bad version", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"low","affected":[{"series":"3.0","introduced":"fips-3.0","fixed":"3.0.8","public":true}]}`), "introduced"},
		{"other series", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"low","affected":[{"series":"3.0","introduced":"3.0.0","fixed":"3.1.1","public":true}]}`), "fixed 3.1.1 belongs to series 3.1"},
		{"backwards", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"low","affected":[{"series":"1.1.1","introduced":"1.1.1zj","fixed":"1.1.1t","public":true}]}`), "fixed 1.1.1t is not after introduced 1.1.1zj"},
		{"two ranges", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"low","affected":[{"series":"3.0","introduced":"3.0.0","fixed":"3.0.8","public":true},{"series":"3.0","introduced":"3.0.1","fixed":"3.0.9","public":true}]}`), "series 3.0 has two ranges"},
		{"public no fix", adv(`{"cve":"CVE-2026-0001","source":"s","date":"2026-01-01","severity":"low","affected":[{"series":"3.0","introduced":"3.0.0","public":true}]}`), "public with no fixed release"},
		{"trailing", head + `]}{}`, "data after the table"},
	} {
		_, err := Parse("table.json", []byte(tc.in))
		if !errors.Is(err, ErrMalformed) || !strings.HasPrefix(err.Error(), "table.json: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrMalformed saying %q", tc.name, err, tc.want)
		}
	}
}

// Encode's output is what Parse reads back, newest first.
func TestEncodeRoundTrip(t *testing.T) {
	in := &Table{Schema: Schema, AsOf: "2026-09-29", Sources: []Source{{Name: "s", URL: "https://example/s", Commit: "abc1234", Through: "2026-09-29"}}, Advisories: []Advisory{
		{CVE: "CVE-2022-9999", Date: "2022-01-01", Severity: Low, Source: "s", Affected: []Range{}},
		{CVE: "CVE-2026-10000", Date: "2026-09-29", Severity: High, Source: "s", URL: "https://example/<a>&", Affected: []Range{{Series: "4.0", Introduced: "4.0.0", Fixed: "4.0.3", Public: true}}},
		{CVE: "CVE-2026-9000", Date: "2026-09-29", Severity: Moderate, Source: "s", Affected: []Range{}},
	}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Parse("x", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	var ids []string
	for _, a := range out.Advisories {
		ids = append(ids, a.CVE)
	}
	if !slices.Equal(ids, []string{"CVE-2026-10000", "CVE-2026-9000", "CVE-2022-9999"}) || out.Sources[0].Commit != "abc1234" || out.Advisories[0].URL != "https://example/<a>&" {
		t.Errorf("round trip: %v %+v", ids, out)
	}
	if n := bytes.Count(b, []byte("\n")); n != 12 {
		t.Errorf("%d lines, want one per advisory and the header:\n%s", n, b)
	}
}
