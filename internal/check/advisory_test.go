package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// libcryptoOf is a C file holding libcrypto's build information for an
// OpenSSL version string (cversion's, with another version).
func libcryptoOf(version, platform string) string {
	return strings.Replace(cversion(lineGccO2, platform), fmt.Sprintf("%q", versionTxt), fmt.Sprintf("%q", version), 1)
}

// versionObject is an ELF object carrying OpenSSL's build information for
// version.
func versionObject(k *kit, name, version, platform string) string {
	k.t.Helper()
	return k.elf(name, libcryptoOf(version, platform), "-c")
}

func sliceOf(t *testing.T, res *Result) Slice {
	t.Helper()
	if len(res.Binaries) != 1 || len(res.Binaries[0].Slices) != 1 {
		t.Fatalf("binaries %+v", res.Binaries)
	}
	return res.Binaries[0].Slices[0]
}

func cves(sa *SliceAdvisories) map[string]AdvisoryFinding {
	out := map[string]AdvisoryFinding{}
	for _, f := range sa.List {
		out[f.CVE] = f
	}
	return out
}

// Every judged OpenSSL slice is matched by its version: the advisories
// affecting its release, their fixes in its series (or none public), and
// why a version match may be wrong for it; forks are not matched.
func TestAdvisoriesMatched(t *testing.T) {
	k := newKit(t)
	tab := testAdvisories(t)
	for _, tc := range []struct {
		name, version, platform string
		release                 string
		cves                    map[string]string // CVE -> fix in the slice's series
		cell, highest           string
		caveats                 []string
	}{
		{"1.1.1t", "OpenSSL 1.1.1t  7 Feb 2023", "linux-x86_64", "1.1.1t",
			map[string]string{"CVE-2026-84782": "no public fix (1.1.1zj: premium support only)"}, // CVE-2023-0286 is fixed in 1.1.1t
			"1 (high), no public fix", "high", []string{"the 1.1.1 series ended on 2023-09-11: advisories published since name only premium support releases"}},
		{"quic", "OpenSSL 3.0.5+quic 5 Jul 2022", "darwin64-arm64-cc", "3.0.5",
			map[string]string{"CVE-2023-0286": "3.0.8", "CVE-2026-84782": "no public fix (3.0.23: premium support only)", "CVE-2026-35189": "no public fix (3.0.23: premium support only)"},
			"3 (high), fix 3.0.8 + 2 no public fix", "high", []string{"3.0.5+quic is a suffixed build (a fork such as quictls's +quic, or a vendor's): matched as 3.0.5", "the 3.0 series ended on 2026-09-07"}},
		{"debian", "OpenSSL 3.0.19 27 Jan 2026", "debian-amd64", "3.0.19",
			map[string]string{"CVE-2026-84782": "no public fix (3.0.23: premium support only)", "CVE-2026-35189": "no public fix (3.0.23: premium support only)"},
			"2 (high), no public fix", "high", []string{"a Debian or Ubuntu build (platform: debian-amd64): distributions backport fixes without changing the version", "the 3.0 series ended on 2026-09-07"}},
		{"4.0.2", versionTxt, "linux-x86_64", "4.0.2",
			map[string]string{"CVE-2026-84782": "4.0.3", "CVE-2026-35189": "4.0.3"}, "2 (high), fix 4.0.3", "high", nil},
		{"4.0.3", "OpenSSL 4.0.3 29 Sep 2026", "linux-x86_64", "4.0.3", map[string]string{}, "none", "", nil},
		{"heartbleed", "OpenSSL 1.0.1f 6 Jan 2014", "linux-x86_64", "1.0.1f",
			map[string]string{"CVE-2014-0160": "1.0.1g"}, "1 (unknown), fix 1.0.1g", "unknown", []string{"the 1.0.1 series ended on 2016-12-31"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := versionObject(k, tc.name+".o", tc.version, tc.platform)
			res, err := Check(context.Background(), Options{Path: obj, Advisories: tab, Now: dec1})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK {
				t.Errorf("failed without -fail-on: %q", res.Failures)
			}
			s := sliceOf(t, res)
			sa := s.Advisories
			if sa == nil {
				t.Fatalf("no advisories for %s", tc.version)
			}
			got := map[string]string{}
			for cve, f := range cves(sa) {
				got[cve] = f.Fix
			}
			if sa.Release != tc.release || fmt.Sprint(got) != fmt.Sprint(tc.cves) || sa.Total != len(tc.cves) || sa.Highest != tc.highest {
				t.Errorf("release %s, total %d, highest %q, fixes %v; want %s, %v, %q", sa.Release, sa.Total, sa.Highest, got, tc.release, tc.cves, tc.highest)
			}
			if c := advisoryCell(s); c != tc.cell {
				t.Errorf("cell %q, want %q", c, tc.cell)
			}
			if len(sa.Caveats) != len(tc.caveats) {
				t.Errorf("caveats %q, want %q", sa.Caveats, tc.caveats)
			}
			for i, w := range tc.caveats {
				if i < len(sa.Caveats) && !strings.HasPrefix(sa.Caveats[i], w) {
					t.Errorf("caveat %q, want it to start %q", sa.Caveats[i], w)
				}
			}
			if a := res.Advisories; a.Matched != 1 || a.Affected != min(1, len(tc.cves)) || a.CVEs != len(tc.cves) || a.AsOf != "2026-09-29" || a.Listed != 4 {
				t.Errorf("whole-input advisories %+v", a)
			}
		})
	}
	// A fork's version string names no OpenSSL release: not matched, even
	// by -fail-on.
	obj := versionObject(k, "boring.o", "OpenSSL 1.1.1 (compatible; BoringSSL)", "linux-x86_64")
	res, err := Check(context.Background(), Options{Path: obj, Advisories: tab, FailOn: "low", Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	if s := sliceOf(t, res); s.Family != "BoringSSL" || s.Advisories != nil || advisoryCell(s) != "" || !res.OK || res.Advisories.Matched != 0 {
		t.Errorf("BoringSSL: family %q, advisories %+v, ok %v", s.Family, s.Advisories, res.OK)
	}
}

// -fail-on fails at or above its severity; an unrated advisory fails at
// every level; a wrong value is a usage error.
func TestFailOn(t *testing.T) {
	k := newKit(t)
	tab := testAdvisories(t)
	old := versionObject(k, "old.o", "OpenSSL 1.1.1t  7 Feb 2023", "linux-x86_64")
	bleed := versionObject(k, "bleed.o", "OpenSSL 1.0.1f 6 Jan 2014", "linux-x86_64")
	for _, tc := range []struct {
		path, failOn string
		fail         string // "" for ok
	}{
		{old, "high", "old.o x86_64: OpenSSL 1.1.1t: 1 known advisory at or above high (-fail-on=high): CVE-2026-84782 (high, no public fix (1.1.1zj: premium support only))"},
		{old, "HIGH", "at or above high (-fail-on=high)"},
		{old, "low", "at or above low (-fail-on=low): CVE-2026-84782"},
		{old, "critical", ""},
		{old, "none", ""},
		{old, "", ""},
		{bleed, "critical", "OpenSSL 1.0.1f: 1 known advisory at or above critical (-fail-on=critical): CVE-2014-0160 (unknown, fixed in 1.0.1g); upstream rated the unknown ones with no severity, and -fail-on fails them at every level"},
	} {
		res, err := Check(context.Background(), Options{Path: tc.path, Advisories: tab, FailOn: tc.failOn, Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		if tc.fail == "" {
			if !res.OK {
				t.Errorf("%s -fail-on=%s: failed: %q", filepath.Base(tc.path), tc.failOn, res.Failures)
			}
			continue
		}
		if res.OK || !slices.ContainsFunc(res.Failures, func(f string) bool { return strings.Contains(f, tc.fail) }) {
			t.Errorf("%s -fail-on=%s: failures %q, want one saying %q", filepath.Base(tc.path), tc.failOn, res.Failures, tc.fail)
		}
		s := sliceOf(t, res)
		if len(s.Problems) != 1 || s.Problems[0].Rule != RuleAdvisory || s.Status != StatusFailed || len(s.Advisories.Failing) != 1 {
			t.Errorf("problems %+v, status %s, failing %v", s.Problems, s.Status, s.Advisories.Failing)
		}
		if rows := Rows(res); rows[0].Status != "FAIL (advisory)" {
			t.Errorf("status cell %q", rows[0].Status)
		}
	}
	for _, bad := range []string{"severe", "unknown", "medium", "high,low"} {
		_, err := Check(context.Background(), Options{Path: old, Advisories: tab, FailOn: bad})
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "-fail-on="+bad+": want low, moderate, high or critical (or none)") {
			t.Errorf("-fail-on=%s: err = %v, want a usage error", bad, err)
		}
	}
}

// A file of assessed CVEs suppresses them: listed as assessed, neither
// counted nor failed, and the report counts them.
func TestAssessed(t *testing.T) {
	k := newKit(t)
	tab := testAdvisories(t)
	dir := filepath.Join(k.dir, "in")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := versionObject(k, "old.o", "OpenSSL 1.1.1t  7 Feb 2023", "linux-x86_64")
	quic := versionObject(k, "quic.o", "OpenSSL 3.0.5+quic 5 Jul 2022", "linux-x86_64")
	testfixture.CopyFile(t, old, filepath.Join(dir, "old.o"))
	testfixture.CopyFile(t, quic, filepath.Join(dir, "quic.o"))

	list := filepath.Join(k.dir, "assessed.txt")
	if err := os.WriteFile(list, []byte("# ours\nCVE-2026-84782 not affected: no DTLS\nCVE-2099-0001 a typo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Check(context.Background(), Options{Path: old, Advisories: tab, FailOn: "high", Assessed: list, Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	sa := sliceOf(t, res).Advisories
	f := cves(sa)["CVE-2026-84782"]
	if !res.OK || sa.Total != 0 || sa.Suppressed != 1 || f.Suppressed != "not affected: no DTLS ("+list+":2)" || advisoryCell(sliceOf(t, res)) != "none, 1 suppressed" {
		t.Errorf("ok %v, failures %q, advisories %+v", res.OK, res.Failures, sa)
	}
	a := res.Advisories
	if a.Suppressed != 1 || !slices.Equal(a.SuppressedCVEs, []string{"CVE-2026-84782"}) || !slices.Equal(a.Unused, []string{"CVE-2099-0001"}) || a.Assessed != list {
		t.Errorf("whole-input advisories %+v", a)
	}
	if got, want := AdvisorySummary(res), "advisories: OpenSSL's advisories through 2026-09-29 (4 advisories; from test@abc1234 through 2026-09-29): 0 of 1 OpenSSL slices affected; 1 suppressed by "+list+" (CVE-2026-84782); 1 assessed CVEs affect nothing found (CVE-2099-0001); -fail-on=high"; got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}

	// CycloneDX VEX naming OpenSSL 3.0.5 by purl: suppressed there only.
	vex := filepath.Join(k.dir, "vex.json")
	if err := os.WriteFile(vex, []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[
{"id":"CVE-2026-84782","analysis":{"state":"not_affected","justification":"code_not_reachable","detail":"no DTLS"},"affects":[{"ref":"pkg:generic/openssl@3.0.5"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Check(context.Background(), Options{Path: dir, Advisories: tab, FailOn: "high", Assessed: vex, Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*SliceAdvisories{}
	for _, b := range res.Binaries {
		by[filepath.Base(b.Path)] = b.Slices[0].Advisories
	}
	if by["quic.o"].Suppressed != 1 || cves(by["quic.o"])["CVE-2026-84782"].Suppressed != "not_affected: code_not_reachable: no DTLS ("+vex+": vulnerabilities[0])" {
		t.Errorf("3.0.5: %+v", by["quic.o"])
	}
	if by["old.o"].Suppressed != 0 || res.OK || len(res.Failures) != 2 {
		// 1.1.1t still fails on CVE-2026-84782; 3.0.5 on CVE-2023-0286.
		t.Errorf("1.1.1t: %+v; failures %q", by["old.o"], res.Failures)
	}
	var text bytes.Buffer
	if err := Text(&text, res, 0); err != nil {
		t.Fatal(err)
	}
	if w := "quic.o x86_64: OpenSSL 3.0.5+quic (matched as 3.0.5): 2 known advisories (1 high, 1 low), highest high; 3.0.8 fixes 1; 1 has no public fix (3.0.23: premium support only); high and critical: CVE-2023-0286 (high, fixed in 3.0.8); 1 suppressed as assessed (CVE-2026-84782)"; !strings.Contains(text.String(), w) {
		t.Errorf("text lacks %q:\n%s", w, text.String())
	}
	if !strings.Contains(text.String(), "2 of 2 OpenSSL slices affected (3 CVEs: 2 high, 1 low); 1 suppressed by "+vex+" (CVE-2026-84782); -fail-on=high") {
		t.Errorf("text:\n%s", text.String())
	}

	// A VEX entry about curl is about curl: it suppresses the CVE for no
	// OpenSSL found, and a note says why. (It suppressed it for every
	// OpenSSL found.)
	curl := filepath.Join(k.dir, "curl.json")
	if err := os.WriteFile(curl, []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[
{"id":"CVE-2026-84782","analysis":{"state":"not_affected","justification":"code_not_present"},"affects":[{"ref":"pkg:generic/curl@8.0.0"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Check(context.Background(), Options{Path: dir, Advisories: tab, Assessed: curl, Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range res.Binaries {
		if sa := b.Slices[0].Advisories; sa.Suppressed != 0 || cves(sa)["CVE-2026-84782"].Suppressed != "" {
			t.Errorf("%s: the curl entry suppressed %+v", b.Path, sa)
		}
	}
	note := curl + ": vulnerabilities[0] (CVE-2026-84782): affects pkg:generic/curl@8.0.0: no OpenSSL release named, so it suppresses nothing"
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, note) }) || !slices.Equal(res.Advisories.Unused, []string{"CVE-2026-84782"}) {
		t.Errorf("notes %q (want %q), unused %q", res.Notes, note, res.Advisories.Unused)
	}

	// A malformed file is a named error: neither a usage error nor a
	// broken rule.
	bad := filepath.Join(k.dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("CVE-2026-84782 ok\nCVE-2023-0286\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		bad:                            "check: -vex=" + bad + ": " + bad + ":2: malformed file of assessed CVEs: CVE-2023-0286: no reason given",
		filepath.Join(k.dir, "absent"): "check: -vex=" + filepath.Join(k.dir, "absent") + ": file of assessed CVEs: open ",
	} {
		err := Run(context.Background(), Options{Path: old, Advisories: tab, Assessed: path, Stdout: &bytes.Buffer{}, Env: noEnv})
		if err == nil || errors.Is(err, ErrUsage) || errors.Is(err, ErrFailed) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("-vex=%s: err = %v, want %q", path, err, want)
		}
	}
}

// The advisories in every format: the table's column and lines, the JSON,
// SARIF's rule of its own, annotations and the step summary.
func TestAdvisoryFormats(t *testing.T) {
	k := newKit(t)
	tab := testAdvisories(t)
	old := versionObject(k, "old.o", "OpenSSL 1.1.1t  7 Feb 2023", "linux-x86_64")
	run := func(o Options) (string, error) {
		var out bytes.Buffer
		o.Path, o.Advisories, o.Now, o.Stdout, o.Stderr = old, tab, dec1, &out, &out
		if o.Env == nil {
			o.Env = noEnv
		}
		err := Run(context.Background(), o)
		return out.String(), err
	}
	line := old + " x86_64: OpenSSL 1.1.1t: 1 known advisory (1 high), highest high; no public fix (1.1.1zj: premium support only); high and critical: CVE-2026-84782 (high, no public fix (1.1.1zj: premium support only))"

	out, err := run(Options{Width: 200}) // the column fits
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"STATUS  ADVISORIES", "1 (high), no public fix", "advisory: " + line + "\n",
		"advisory: " + old + " x86_64: matching by version: the 1.1.1 series ended on 2023-09-11",
		"\nadvisories: OpenSSL's advisories through 2026-09-29 (4 advisories; from test@abc1234 through 2026-09-29): 1 of 1 OpenSSL slices affected (1 CVE: 1 high); reported, not failed (-fail-on=SEVERITY fails them)\n",
		"1 slices (1 past end of life, 1 with known advisories)"} {
		if !strings.Contains(out, w) {
			t.Errorf("text lacks %q:\n%s", w, out)
		}
	}

	out, err = run(Options{Format: "json", FailOn: "high"})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("err = %v", err)
	}
	var doc Result
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	sa := doc.Binaries[0].Slices[0].Advisories
	if sa == nil || len(sa.List) != 1 || sa.List[0] != (AdvisoryFinding{CVE: "CVE-2026-84782", Date: "2026-09-29", Severity: "high", Series: "1.1.1", Introduced: "1.1.1",
		Fixed: "1.1.1zj", Fix: "no public fix (1.1.1zj: premium support only)", URL: "https://openssl-library.org/news/secadv/20260929.txt"}) ||
		!slices.Equal(sa.Failing, []string{"CVE-2026-84782"}) || doc.Advisories.FailOn != "high" || doc.Advisories.CVEs != 1 || doc.Advisories.Counts["high"] != 1 {
		t.Errorf("JSON advisories %+v; whole input %+v", sa, doc.Advisories)
	}

	for _, tc := range []struct {
		failOn, level string
	}{{"high", "error"}, {"", "warning"}} {
		out, _ = run(Options{Format: "sarif", FailOn: tc.failOn})
		var log sarifLog
		if err := json.Unmarshal([]byte(out), &log); err != nil {
			t.Fatal(err)
		}
		var got []sarifResult
		for _, r := range log.Runs[0].Results {
			if r.RuleID == string(RuleAdvisory) {
				got = append(got, r)
			}
		}
		if len(got) != 1 || got[0].Level != tc.level || !strings.Contains(got[0].Message.Text, line) || got[0].Locations[0].Physical.Artifact.URI != sarifURI(old) {
			t.Errorf("-fail-on=%q: advisory results %+v", tc.failOn, got)
		}
		if len(log.Runs[0].Results) != 1 {
			t.Errorf("-fail-on=%q: results %+v: the advisory is a result of its own, the only one", tc.failOn, log.Runs[0].Results)
		}
		if tc.failOn != "" && !strings.HasPrefix(got[0].Message.Text, old+" x86_64: OpenSSL 1.1.1t: 1 known advisory at or above high (-fail-on=high)") {
			t.Errorf("message %q", got[0].Message.Text)
		}
		if !slices.ContainsFunc(log.Runs[0].Tool.Driver.Rules, func(r sarifRule) bool {
			return r.ID == string(RuleAdvisory) && strings.HasPrefix(r.ShortDescription.Text, "the OpenSSL release has published security advisories")
		}) {
			t.Error("no advisory rule")
		}
	}

	summary := filepath.Join(k.dir, "summary.md")
	env := func(k string) string {
		return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary}[k]
	}
	out, _ = run(Options{Env: env})
	if !strings.Contains(out, "::warning file="+old+",title=osslbuild check%3A known advisories x86_64::"+line) {
		t.Errorf("no warning annotation:\n%s", out)
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| status | advisories | compiler |", "| ok | 1 (high), no public fix | ` ",
		"\n\nadvisories: OpenSSL's advisories through 2026-09-29 (4 advisories; from test@abc1234 through 2026-09-29): 1 of 1 OpenSSL slices affected (1 CVE: 1 high); reported, not failed (-fail-on=SEVERITY fails them)\n"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("step summary lacks %q:\n%s", w, md)
		}
	}
	// With -fail-on, the error annotation names the advisory; no warning
	// repeats it.
	out, _ = run(Options{Env: env, FailOn: "high"})
	if !strings.Contains(out, "::error file="+old+",title=osslbuild check%3A old.o x86_64::"+old+" x86_64: OpenSSL 1.1.1t: 1 known advisory at or above high") || strings.Contains(out, "::warning file="+old+",title=osslbuild check%3A known advisories") {
		t.Errorf("annotations with -fail-on:\n%s", out)
	}
}

// A table older than 90 days is said to be, in every form, and fails
// nothing.
func TestStaleTable(t *testing.T) {
	k := newKit(t)
	obj := versionObject(k, "new.o", "OpenSSL 4.0.3 29 Sep 2026", "linux-x86_64")
	later := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) // 94 days after 2026-09-29
	var out bytes.Buffer
	env := func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }
	if err := Run(context.Background(), Options{Path: obj, Advisories: testAdvisories(t), Now: later, Stdout: &out, Env: env}); err != nil {
		t.Fatal(err)
	}
	want := "OpenSSL's advisories are known here as of 2026-09-29, 94 days before this check (more than 90): advisories published since are missing"
	if !strings.Contains(out.String(), "\nwarning: "+want) || !strings.Contains(out.String(), "::warning title=osslbuild check%3A advisory table::"+want) {
		t.Errorf("output:\n%s", out.String())
	}
	res, err := Check(context.Background(), Options{Path: obj, Advisories: testAdvisories(t), Now: later})
	if err != nil || !res.OK || !strings.HasPrefix(res.Advisories.Stale, want) || len(res.Notes) != 0 {
		t.Errorf("%v %+v", err, res.Advisories)
	}
	res, err = Check(context.Background(), Options{Path: obj, Advisories: testAdvisories(t), Now: dec1})
	if err != nil || res.Advisories.Stale != "" {
		t.Errorf("63 days: %v %+v", err, res.Advisories)
	}
}

// The embedded table is the default, and its as-of date says what it is.
func TestEmbeddedTableUsed(t *testing.T) {
	k := newKit(t)
	obj := versionObject(k, "old.o", "OpenSSL 1.1.1t  7 Feb 2023", "linux-x86_64")
	res, err := Check(context.Background(), Options{Path: obj, Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := advisory.Default()
	if err != nil {
		t.Fatal(err)
	}
	m, err := tab.Affecting("1.1.1t")
	if err != nil {
		t.Fatal(err)
	}
	sa := sliceOf(t, res).Advisories
	if res.Advisories.AsOf != tab.AsOf || res.Advisories.Listed != len(tab.Advisories) || sa.Total != len(m.Findings) ||
		cves(sa)["CVE-2023-0464"].Fix != "1.1.1u" || sa.FixedBy != "1.1.1w" {
		t.Errorf("advisories %+v; slice total %d fixed by %s", res.Advisories, sa.Total, sa.FixedBy)
	}
}

func TestAdvisoryCell(t *testing.T) {
	for _, tc := range []struct {
		sa   *SliceAdvisories
		want string
	}{
		{nil, ""},
		{&SliceAdvisories{}, "none"},
		{&SliceAdvisories{Suppressed: 2}, "none, 2 suppressed"},
		{&SliceAdvisories{Total: 12, Highest: "high", FixedBy: "3.0.21"}, "12 (high), fix 3.0.21"},
		{&SliceAdvisories{Total: 45, Highest: "high", FixedBy: "3.0.20", NoPublicFix: 9, Suppressed: 1}, "45 (high), fix 3.0.20 + 9 no public fix, 1 suppressed"},
		{&SliceAdvisories{Total: 3, Highest: "moderate", NoPublicFix: 3}, "3 (moderate), no public fix"},
	} {
		if got := advisoryCell(Slice{Advisories: tc.sa}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.sa, got, tc.want)
		}
	}
}

func TestDistribution(t *testing.T) {
	for _, tc := range []struct {
		path, member, platform, compiler, want string
	}{
		{"/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "", "debian-amd64", "gcc -O2", "a Debian or Ubuntu build (platform: debian-amd64)"},
		{"/home/me/lib.so", "", "linux-x86_64", "gcc -O2 -specs=/usr/lib/rpm/redhat/redhat-hardened-cc1", "an RPM distribution's build (its compiler line names /usr/lib/rpm)"},
		{"/usr/lib64/libcrypto.so.3", "", "linux-x86_64", "gcc -O2", "a system library (/usr/lib64/libcrypto.so.3)"},
		{"/usr/lib/python3/dist-packages/x.whl", "pkg/_rust.so", "linux-x86_64", "gcc", ""}, // inside an archive: whoever made it
		{"wheelhouse/a.whl", "pkg/_rust.so", "darwin64-arm64-cc", "cc -O3", ""},
		{"/opt/homebrew/lib/libcrypto.3.dylib", "", "darwin64-arm64-cc", "cc -O3", ""},
	} {
		got := distribution(&Binary{Path: tc.path, Member: tc.member}, &Slice{Platform: tc.platform, Compiler: tc.compiler})
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestFailMessageBounded(t *testing.T) {
	var fs []advisory.Finding
	for i := range 13 {
		fs = append(fs, advisory.Finding{Advisory: advisory.Advisory{CVE: fmt.Sprintf("CVE-2026-%04d", i), Severity: advisory.Low}, Range: advisory.Range{Fixed: "3.0.8", Public: true}})
	}
	msg := failMessage("3.0.5", advisory.Low, fs)
	if !strings.HasPrefix(msg, "OpenSSL 3.0.5: 13 known advisories at or above low (-fail-on=low): CVE-2026-0000 (low, fixed in 3.0.8), ") || !strings.HasSuffix(msg, "CVE-2026-0009 (low, fixed in 3.0.8), and 3 more") {
		t.Errorf("%q", msg)
	}
}
