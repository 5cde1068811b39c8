package advisory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
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
	// resolved, affects a BOM-Link to this document's OpenSSL component,
	// named by CPE: that release only.
	if e, ok := s.Lookup("CVE-2026-84782", "1.1.1t"); !ok || e.Reason != "resolved: response update: patched in our build" {
		t.Errorf("CVE-2026-84782: %+v %v", e, ok)
	}
	if _, ok := s.Lookup("CVE-2026-84782", "3.0.5"); ok {
		t.Error("CVE-2026-84782 suppressed for a release its component is not")
	}
	// in_triage suppresses nothing; another database's id is skipped; an
	// entry about curl suppresses nothing, and a note says so.
	if _, ok := s.Lookup("CVE-2022-3602", "3.0.5"); ok {
		t.Error("an in_triage entry suppressed")
	}
	if _, ok := s.Lookup("CVE-2023-0464", "1.1.1t"); ok {
		t.Error("an entry about curl suppressed an OpenSSL CVE")
	}
	if len(s.Entries) != 3 {
		t.Errorf("entries %+v", s.Entries)
	}
	want := []string{"testdata/vex.cdx.json: vulnerabilities[4] (CVE-2023-0464): affects curl: no OpenSSL release named, so it suppresses nothing"}
	if len(s.Notes) != 1 || !strings.HasPrefix(s.Notes[0], want[0]) {
		t.Errorf("notes %q, want %q", s.Notes, want)
	}
}

// TestVEXAffects: a CycloneDX entry suppresses its CVE only for the
// OpenSSL releases its affects name (a purl, a CPE, the versions and vers
// ranges CycloneDX lists); naming nothing OpenSSL, it suppresses nothing
// and a note says so. Before, an entry whose only affects was
// pkg:generic/curl@8.0.0 suppressed the CVE for every OpenSSL found.
func TestVEXAffects(t *testing.T) {
	const cve = "CVE-2026-84782"
	doc := func(affects string) string {
		return `{"bomFormat":"CycloneDX","specVersion":"1.5","vulnerabilities":[{"id":"` + cve + `","analysis":{"state":"not_affected","justification":"code_not_reachable"}` + affects + `}]}`
	}
	for _, tc := range []struct {
		name, affects string
		in, out       []string // releases it suppresses for, and not
		note          bool
	}{
		{"curl only", `,"affects":[{"ref":"pkg:generic/curl@8.0.0"}]`, nil, []string{"4.0.2", "3.5.7", "1.1.1t"}, true},
		{"no affects", ``, nil, []string{"4.0.2"}, true},
		{"a bom-ref elsewhere", `,"affects":[{"ref":"urn:cdx:00000000-0000-0000-0000-000000000000/1#openssl"}]`, nil, []string{"4.0.2"}, true},
		{"OpenSSL without a release", `,"affects":[{"ref":"pkg:generic/openssl"}]`, nil, []string{"4.0.2"}, true},
		{"Debian's version", `,"affects":[{"ref":"pkg:deb/debian/openssl@3.0.11-1~deb12u2"}]`, nil, []string{"3.0.11"}, true},
		{"purl 4.0.2", `,"affects":[{"ref":"pkg:generic/openssl@4.0.2"}]`, []string{"4.0.2"}, []string{"3.5.7", "4.0.3"}, false},
		{"purl and curl", `,"affects":[{"ref":"pkg:generic/curl@8.0.0"},{"ref":"pkg:github/openssl/openssl@openssl-3.5.7"}]`, []string{"3.5.7"}, []string{"4.0.2"}, false},
		{"CPE", `,"affects":[{"ref":"cpe:2.3:a:openssl:openssl:4.0.2:*:*:*:*:*:*:*"}]`, []string{"4.0.2"}, []string{"3.5.7"}, false},
		{"CPE 2.2", `,"affects":[{"ref":"cpe:/a:openssl:openssl:3.5.7"}]`, []string{"3.5.7"}, []string{"4.0.2"}, false},
		{"another vendor's CPE", `,"affects":[{"ref":"cpe:2.3:a:haxx:curl:8.0.0:*:*:*:*:*:*:*"}]`, nil, []string{"4.0.2"}, true},
		{"a range", `,"affects":[{"ref":"pkg:generic/openssl","versions":[{"range":"vers:generic/>=4.0.0|<4.0.3","status":"unaffected"}]}]`,
			[]string{"4.0.0", "4.0.2"}, []string{"4.0.3", "3.5.7", "4.1.0"}, false},
		{"ranges either side", `,"affects":[{"ref":"pkg:generic/openssl","versions":[{"range":"vers:generic/<3.0.0|>=3.5.0|<3.5.7|>=4.0.2"}]}]`,
			[]string{"1.1.1t", "3.5.0", "3.5.6", "4.0.2", "4.1.0"}, []string{"3.0.5", "3.5.7", "4.0.1"}, false},
		{"a range with an exception", `,"affects":[{"ref":"pkg:generic/openssl","versions":[{"range":"vers:generic/>=4.0.0|!=4.0.1|<4.1.0"}]}]`,
			[]string{"4.0.0", "4.0.2"}, []string{"4.0.1", "4.1.0"}, false},
		{"every release", `,"affects":[{"ref":"pkg:generic/openssl","versions":[{"range":"vers:generic/*"}]}]`, []string{"4.0.2", "1.1.1t"}, nil, false},
		{"versions, one affected", `,"affects":[{"ref":"pkg:generic/openssl","versions":[{"version":"4.0.1","status":"unaffected"},{"version":"4.0.2","status":"affected"},{"range":"vers:generic/>=3.5.0|<3.6.0","status":"unknown"}]}]`,
			[]string{"4.0.1"}, []string{"4.0.2", "3.5.7"}, false},
		{"a range of curl's", `,"affects":[{"ref":"pkg:generic/curl","versions":[{"range":"vers:generic/*"}]}]`, nil, []string{"4.0.2"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSuppressions("v.json", []byte(doc(tc.affects)))
			if err != nil {
				t.Fatal(err)
			}
			for _, rel := range tc.in {
				if _, ok := s.Lookup(cve, rel); !ok {
					t.Errorf("not suppressed for %s", rel)
				}
			}
			for _, rel := range tc.out {
				if e, ok := s.Lookup(cve, rel); ok {
					t.Errorf("suppressed for %s: %+v", rel, e)
				}
			}
			if got := len(s.Notes) == 1 && strings.Contains(s.Notes[0], "v.json: vulnerabilities[0] ("+cve+"): ") && strings.Contains(s.Notes[0], "so it suppresses nothing"); got != tc.note || len(s.Notes) > 1 {
				t.Errorf("notes %q, want a note: %v", s.Notes, tc.note)
			}
		})
	}
	// A plain list names no product: every OpenSSL.
	s, err := ParseSuppressions("a.txt", []byte(cve+" not affected: no DTLS\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"4.0.2", "3.5.7", "1.1.1t"} {
		if _, ok := s.Lookup(cve, rel); !ok || len(s.Notes) > 0 {
			t.Errorf("plain list: not suppressed for %s (notes %q)", rel, s.Notes)
		}
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
		named := strings.Contains(strings.ToLower(in), "/openssl")
		ok, got := opensslPurl(in)
		if got != want || ok != named {
			t.Errorf("opensslPurl(%q) = %v, %q; want %v, %q", in, ok, got, named, want)
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
		{"bad range", `{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[{"id":"CVE-2023-0286","analysis":{"state":"not_affected"},"affects":[{"ref":"pkg:generic/openssl","versions":[{"range":">=4.0.0"}]}]}]}`, `x: vulnerabilities[0] (CVE-2023-0286): malformed file of assessed CVEs: affects pkg:generic/openssl: range ">=4.0.0": want vers:SCHEME/CONSTRAINTS`},
		{"bad range version", `{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[{"id":"CVE-2023-0286","analysis":{"state":"not_affected"},"affects":[{"ref":"pkg:generic/openssl","versions":[{"range":"vers:generic/>=four"}]}]}]}`, `range "vers:generic/>=four": OpenSSL version "four"`},
		{"bad status", `{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[{"id":"CVE-2023-0286","analysis":{"state":"not_affected"},"affects":[{"ref":"pkg:generic/openssl","versions":[{"version":"4.0.2","status":"fine"}]}]}]}`, `versions status "fine": want affected, unaffected or unknown`},
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
	// A named pipe is refused by name, not opened: with nothing writing
	// to it, a blocking open would hold check for ever (testfixture.FIFO
	// keeps a blocking reader from hanging here: it reads an empty file,
	// and the error does not name the pipe).
	fifo := filepath.Join(dir, "vex.json")
	testfixture.FIFO(t, fifo)
	if _, err := ReadSuppressions(fifo); !errors.Is(err, ErrSuppressions) || !strings.Contains(err.Error(), "named pipe (FIFO)") {
		t.Errorf("a named pipe: %v", err)
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
