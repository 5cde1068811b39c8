package advisory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlainList(t *testing.T) {
	s, err := ReadSuppressions(filepath.Join("testdata", "assessed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Entries) != 2 {
		t.Fatalf("entries %+v", s.Entries)
	}
	e, ok := s.Lookup("CVE-2023-0286", "1.1.1t")
	if !ok || e.Reason != "not affected: no CRL checking (X509_V_FLAG_CRL_CHECK is never set)" || e.Where != "testdata/assessed.txt:2" {
		t.Errorf("CVE-2023-0286: %+v %v", e, ok)
	}
	if e, ok := s.Lookup("CVE-2026-84782", "4.0.2"); !ok || e.Reason != "not affected: DTLS is not used" || e.Where != "testdata/assessed.txt:4" {
		t.Errorf("tab-separated line: %+v %v", e, ok)
	}
	if _, ok := s.Lookup("CVE-2022-3602", "3.0.5"); ok {
		t.Error("an unlisted CVE suppressed")
	}
}

func TestCycloneDXVEX(t *testing.T) {
	s, err := ReadSuppressions(filepath.Join("testdata", "vex.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	// not_affected with a purl: that release only.
	if e, ok := s.Lookup("CVE-2023-0286", "3.0.5"); !ok || e.Reason != "not_affected: code_not_reachable: CRL checking is never enabled" {
		t.Errorf("CVE-2023-0286 for 3.0.5: %+v %v", e, ok)
	}
	if _, ok := s.Lookup("CVE-2023-0286", "1.1.1t"); ok {
		t.Error("CVE-2023-0286 suppressed for a release its purl does not name")
	}
	// resolved, affects a bom-ref: every OpenSSL.
	if e, ok := s.Lookup("CVE-2026-84782", "1.1.1t"); !ok || e.Reason != "resolved: response update: patched in our build" {
		t.Errorf("CVE-2026-84782: %+v %v", e, ok)
	}
	// in_triage suppresses nothing; another database's id is skipped.
	if _, ok := s.Lookup("CVE-2022-3602", "3.0.5"); ok {
		t.Error("an in_triage entry suppressed")
	}
	if len(s.Entries) != 2 {
		t.Errorf("entries %+v", s.Entries)
	}
}

func TestPurl(t *testing.T) {
	for in, want := range map[string]string{
		"pkg:generic/openssl@3.0.5":                  "3.0.5",
		"pkg:github/openssl/openssl@openssl-3.0.5":   "3.0.5",
		"pkg:generic/OpenSSL@1.1.1t?arch=arm64#lib":  "1.1.1t",
		"pkg:deb/debian/openssl@3.0.5%2Bquic":        "3.0.5",
		"pkg:generic/libressl@3.8.2":                 "",
		"pkg:generic/openssl":                        "",
		"urn:cdx:3e671687-395b-41f5-a30f/1#openssl":  "",
		"pkg:generic/openssl@not-a-version":          "",
		"pkg:generic/openssl@3.0.5@extra":            "",
		"pkg:rpm/fedora/openssl@1.0.2k-fips?distro=": "1.0.2k",
	} {
		got, ok := opensslPurl(in)
		if got != want || ok != (want != "") {
			t.Errorf("opensslPurl(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// Malformed files get an error naming the file, the line or entry, and
// what was expected.
func TestSuppressionsMalformed(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no CVE", "not-a-cve because\n", `x:1: malformed file of assessed CVEs: "not-a-cve because": want "CVE-YYYY-NNNN reason"`},
		{"no reason", "# c\nCVE-2023-0286\n", "x:2: malformed file of assessed CVEs: CVE-2023-0286: no reason given"},
		{"short id", "CVE-23-1 why\n", `x:1: malformed file of assessed CVEs: "CVE-23-1 why"`},
		{"binary", "\xff\xfe", "x: malformed file of assessed CVEs: not UTF-8 text"},
		{"JSON", `{"bomFormat":`, "x: malformed file of assessed CVEs: CycloneDX JSON: unexpected end of JSON input"},
		{"not CycloneDX", `{"spdxVersion":"SPDX-2.3"}`, `bomFormat is not "CycloneDX"`},
		{"no spec", `{"bomFormat":"CycloneDX"}`, "no specVersion"},
		{"no vulnerabilities", `{"bomFormat":"CycloneDX","specVersion":"1.6","components":[]}`, "no vulnerabilities section"},
		{"no id", `{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[{"analysis":{"state":"not_affected"}}]}`, "x: vulnerabilities[0]: malformed file of assessed CVEs: no id"},
		{"no analysis", `{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[{"id":"CVE-2023-0286"}]}`, "x: vulnerabilities[0] (CVE-2023-0286): malformed file of assessed CVEs: no analysis.state"},
		{"bad state", `{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[{"id":"CVE-2023-0286","analysis":{"state":"fine"}}]}`, `analysis.state "fine": want one of not_affected, false_positive, resolved, resolved_with_pedigree, exploitable, in_triage`},
		{"wrong type", `{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":{}}`, "CycloneDX JSON: json: cannot unmarshal object"},
	} {
		_, err := ParseSuppressions("x", []byte(tc.in))
		if !errors.Is(err, ErrSuppressions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrSuppressions saying %q", tc.name, err, tc.want)
		}
	}
	dir := t.TempDir()
	if _, err := ReadSuppressions(dir); !errors.Is(err, ErrSuppressions) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := ReadSuppressions(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSuppressions(empty); err != nil || len(s.Entries) != 0 {
		t.Errorf("an empty list: %+v %v", s, err)
	}
}
