package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
)

// artifactSBOM is sbom.json as osslbuild writes it for OpenSSL version.
func artifactSBOM(version string) string {
	return fmt.Sprintf(`{"bomFormat":"CycloneDX","specVersion":"1.5","version":1,
"metadata":{"component":{"type":"library","name":"openssl","version":%q,"purl":"pkg:generic/openssl@%s"},
"tools":{"components":[{"type":"application","name":"osslbuild","version":"test"}]}},
"components":[]}`, version, version)
}

// cdxSBOM is a CycloneDX SBOM listing the components given (JSON objects).
func cdxSBOM(components ...string) string {
	return `{"bomFormat":"CycloneDX","specVersion":"1.6","metadata":{"component":{"type":"library","name":"cryptography","version":"46.0.0"}},"components":[` +
		strings.Join(components, ",") + `]}`
}

const sbomDir = "cryptography-46.0.0.dist-info/sboms/"

// A wheel's PEP 770 SBOMs are held to the OpenSSL its module holds: one
// naming the same OpenSSL passes, however it names it (name, purl, CPE,
// nested, SPDX); one naming another fails (rule sbom-mismatch), naming
// the SBOM, both versions and the binary; one listing none while the
// module holds OpenSSL is a note, as is one listing OpenSSL beside no
// binary holding it; a malformed one fails by name (rule sbom-malformed).
func TestWheelSBOM(t *testing.T) {
	k := newKit(t)
	obj := versionObject(k, "cv.o", versionTxt, "linux-x86_64") // OpenSSL 4.0.2
	module := wheelMember{name: "cryptography/hazmat/bindings/_rust.abi3.so", file: obj}
	for _, tc := range []struct {
		name    string
		members []wheelMember
		fail    []string // substrings of failures (rule, text); none: it passes
		rules   []Rule
		note    string
	}{
		{name: "same version by name", members: []wheelMember{module, {name: sbomDir + "bom.cdx.json", data: cdxSBOM(`{"type":"library","name":"OpenSSL","version":"4.0.2"}`)}}},
		{name: "same version by purl, nested", members: []wheelMember{module, {name: sbomDir + "bom.cdx.json",
			data: cdxSBOM(`{"type":"library","name":"rust-openssl","version":"0.10.70","components":[{"type":"library","name":"vendored","purl":"pkg:github/openssl/openssl@openssl-4.0.2"}]}`)}}},
		{name: "same version by CPE", members: []wheelMember{module, {name: sbomDir + "bom.cdx.json",
			data: cdxSBOM(`{"type":"library","name":"libcrypto","cpe":"cpe:2.3:a:openssl:openssl:4.0.2:*:*:*:*:*:*:*"}`)}}},
		{name: "same version in SPDX", members: []wheelMember{module, {name: sbomDir + "bom.spdx.json",
			data: `{"spdxVersion":"SPDX-2.3","SPDXID":"SPDXRef-DOCUMENT","packages":[{"name":"openssl","versionInfo":"4.0.2"}]}`}}},
		{name: "another version", members: []wheelMember{module, {name: sbomDir + "bom.cdx.json", data: cdxSBOM(`{"type":"library","name":"openssl","version":"3.5.6","purl":"pkg:generic/openssl@3.5.6"}`)}},
			fail:  []string{"(" + sbomDir + "bom.cdx.json): lists OpenSSL 3.5.6, but ", "(cryptography/hazmat/bindings/_rust.abi3.so) x86_64 holds " + versionTxt},
			rules: []Rule{RuleSBOMMismatch}},
		{name: "another version in SPDX", members: []wheelMember{module, {name: sbomDir + "bom.spdx.json",
			data: `{"spdxVersion":"SPDX-2.3","packages":[{"name":"libssl","externalRefs":[{"referenceCategory":"PACKAGE-MANAGER","referenceType":"purl","referenceLocator":"pkg:generic/openssl@3.0.2"}]}]}`}},
			fail:  []string{"(" + sbomDir + "bom.spdx.json): lists OpenSSL 3.0.2, but "},
			rules: []Rule{RuleSBOMMismatch}},
		{name: "one of two versions held", members: []wheelMember{module, {name: sbomDir + "bom.cdx.json",
			data: cdxSBOM(`{"type":"library","name":"openssl","version":"4.0.2"}`, `{"type":"library","name":"openssl","version":"3.0.2"}`)}},
			fail:  []string{"(" + sbomDir + "bom.cdx.json): lists OpenSSL 3.0.2, which no binary beside it holds ("},
			rules: []Rule{RuleSBOMMismatch}},
		{name: "found, not listed", members: []wheelMember{module, {name: sbomDir + "bom.cdx.json", data: cdxSBOM(`{"type":"library","name":"pyo3","version":"0.23.0"}`)}},
			note: "(" + sbomDir + "bom.cdx.json): lists no OpenSSL, but "},
		{name: "listed, not found", members: []wheelMember{{name: "cryptography/__init__.py", data: ""}, {name: sbomDir + "bom.cdx.json", data: cdxSBOM(`{"type":"library","name":"openssl","version":"3.5.6"}`)}},
			fail: []string{"no OpenSSL build information"}, // nothing to judge fails the check anyway
			note: "(" + sbomDir + "bom.cdx.json): lists OpenSSL 3.5.6, but no binary beside it holds OpenSSL (listed, not found)"},
		{name: "malformed JSON", members: []wheelMember{module, {name: sbomDir + "bom.cdx.json", data: `{"bomFormat":"CycloneDX",`}},
			fail: []string{"(" + sbomDir + "bom.cdx.json): malformed JSON: "}, rules: []Rule{RuleSBOMMalformed}},
		{name: "components of the wrong type", members: []wheelMember{module, {name: sbomDir + "bom.cdx.json", data: `{"bomFormat":"CycloneDX","components":[{"name":7}]}`}},
			fail: []string{"(" + sbomDir + "bom.cdx.json): malformed CycloneDX: "}, rules: []Rule{RuleSBOMMalformed}},
		{name: "another format", members: []wheelMember{module, {name: sbomDir + "bom.xml", data: "<bom/>"}},
			note: "(" + sbomDir + "bom.xml): not read: format (not JSON)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whl := writeWheel(t, k.path(strings.ReplaceAll(tc.name, " ", "-")+"-46.0.0-cp311-abi3-linux_x86_64.whl"), tc.members...)
			res, err := Check(context.Background(), Options{Path: whl, Advisories: testAdvisories(t), Now: dec1})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.SBOMs) != 1 {
				t.Fatalf("sboms %+v", res.SBOMs)
			}
			s := res.SBOMs[0]
			if s.Path != whl || !strings.HasPrefix(s.Member, sbomDir) {
				t.Errorf("sbom %+v", s)
			}
			all := strings.Join(res.Failures, "\n")
			if len(tc.fail) == 0 && !res.OK {
				t.Errorf("failed: %s", all)
			}
			for _, f := range tc.fail {
				if !strings.Contains(all, f) {
					t.Errorf("failures lack %q:\n%s", f, all)
				}
			}
			if len(tc.fail) > 0 && res.OK {
				t.Error("passed")
			}
			var rules []Rule
			for _, p := range s.Problems {
				rules = append(rules, p.Rule)
			}
			if fmt.Sprint(rules) != fmt.Sprint(tc.rules) {
				t.Errorf("rules %v, want %v (%+v)", rules, tc.rules, s.Problems)
			}
			if s.OK != (len(tc.rules) == 0) {
				t.Errorf("ok %v", s.OK)
			}
			notes := strings.Join(res.Notes, "\n")
			if tc.note != "" && !strings.Contains(notes, tc.note) {
				t.Errorf("notes lack %q:\n%s", tc.note, notes)
			}
			// The text, JSON, SARIF and step summary carry a failing SBOM.
			if len(tc.rules) == 0 {
				return
			}
			var text, js, sarif bytes.Buffer
			summary := filepath.Join(t.TempDir(), "summary.md")
			env := func(k string) string { return map[string]string{"GITHUB_STEP_SUMMARY": summary}[k] }
			err = Run(context.Background(), Options{Path: whl, Stdout: &text, Env: env, Advisories: testAdvisories(t), Now: dec1})
			if !errors.Is(err, ErrFailed) {
				t.Fatalf("run: %v", err)
			}
			Run(context.Background(), Options{Path: whl, Format: "json", Stdout: &js, Env: noEnv, Advisories: testAdvisories(t), Now: dec1})
			Run(context.Background(), Options{Path: whl, Format: "sarif", Stdout: &sarif, Env: noEnv, Advisories: testAdvisories(t), Now: dec1})
			md, _ := os.ReadFile(summary)
			if !strings.Contains(text.String(), tc.fail[0]) || !strings.Contains(string(md), string(tc.rules[0])+": ") || !strings.Contains(string(md), tc.fail[0]) {
				t.Errorf("text:\n%s\nsummary:\n%s", text.String(), md)
			}
			var doc struct {
				SBOMs []SBOM `json:"sboms"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.SBOMs) != 1 || doc.SBOMs[0].OK || len(doc.SBOMs[0].Problems) == 0 {
				t.Errorf("json %v: %s", err, js.String())
			}
			var log struct {
				Runs []struct {
					Results []struct {
						RuleID  string `json:"ruleId"`
						Level   string `json:"level"`
						Message struct {
							Text string `json:"text"`
						} `json:"message"`
					} `json:"results"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range log.Runs[0].Results {
				if r.RuleID == string(tc.rules[0]) && r.Level == "error" && strings.Contains(r.Message.Text, tc.fail[0]) {
					found = true
				}
			}
			if !found {
				t.Errorf("sarif has no %s result: %s", tc.rules[0], sarif.String())
			}
		})
	}
}

// An artifact's sbom.json is held to its libraries, on disk and in its
// tarball: the one osslbuild writes passes; one edited to another
// version (and the manifest rewritten to match, so only the SBOM tells)
// fails naming both.
func TestArtifactSBOM(t *testing.T) {
	a := newArtifactKit(t)
	d := a.dir(t, false)
	for _, p := range []string{d, tarball(t, d)} {
		res, err := Check(context.Background(), Options{Path: p, Advisories: testAdvisories(t), Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK || len(res.SBOMs) != 1 || !res.SBOMs[0].OK || res.SBOMs[0].Format != "CycloneDX 1.5" || len(res.SBOMs[0].OpenSSL) != 1 {
			t.Fatalf("%s: %v %+v", p, res.Failures, res.SBOMs)
		}
	}
	os.WriteFile(filepath.Join(d, artifact.SBOMName), []byte(artifactSBOM("4.0.1")), 0o644)
	writeManifest(t, d, "openssl-macos-arm64", "arm64", "11.0")
	for _, p := range []string{d, tarball(t, d)} {
		res, err := Check(context.Background(), Options{Path: p, Advisories: testAdvisories(t), Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(res.Failures, "\n")
		if res.OK || !strings.Contains(all, "sbom.json): lists OpenSSL 4.0.1, but ") && !strings.Contains(all, "sbom.json: lists OpenSSL 4.0.1, but ") ||
			!strings.Contains(all, "libcrypto.a") || !strings.Contains(all, "holds "+versionTxt) {
			t.Errorf("%s: %s", p, all)
		}
	}
}

// ParseSBOM is strict about what it reads and names what is wrong.
func TestParseSBOM(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{``, "malformed JSON: empty document"},
		{`[]`, "malformed JSON: not an object"},
		{`null`, "malformed JSON: null"},
		{`{"a":1} {}`, "malformed JSON: data after the JSON document"},
		{`{"bomFormat":"SPDX"}`, `malformed CycloneDX: bomFormat is not "CycloneDX"`},
		{`{"bomFormat":"CycloneDX","components":{}}`, "malformed CycloneDX: json: cannot unmarshal object"},
		{`{"spdxVersion":"2.3"}`, `malformed SPDX: spdxVersion is not "SPDX-..."`},
		{`{"spdxVersion":"SPDX-2.3","packages":[{"versionInfo":3}]}`, "malformed SPDX: json: cannot unmarshal number"},
		{`{"name":"x"}`, "not read: format"},
	} {
		_, _, err := ParseSBOM([]byte(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%q: %v, want %s", tc.in, err, tc.err)
		}
	}
	if _, _, err := ParseSBOM([]byte(`{"name":"x"}`)); !errors.Is(err, ErrSBOMFormat) {
		t.Errorf("not ErrSBOMFormat: %v", err)
	}
	for _, tc := range []struct {
		listed, found string
		same          bool
	}{
		{"3.5.7", "3.5.7", true}, {"v3.5.7", "3.5.7", true}, {"openssl-3.5.7", "3.5.7", true}, {"OpenSSL_1_1_1w", "1.1.1w", true},
		{"3.5.7", "3.5.6", false}, {"", "3.5.7", false}, {"3.5", "3.5.7", false},
	} {
		if got := sameVersion(tc.listed, tc.found); got != tc.same {
			t.Errorf("sameVersion(%q, %q) = %v", tc.listed, tc.found, got)
		}
	}
}

// FuzzParseSBOM: no input panics the parser; what it accepts it accepts
// again, and an OpenSSL component's version is what Listed says.
func FuzzParseSBOM(f *testing.F) {
	f.Add([]byte(artifactSBOM("3.5.7")))
	f.Add([]byte(cdxSBOM(`{"name":"x","components":[{"name":"openssl","purl":"pkg:generic/openssl@3.0.2?x=1","cpe":"cpe:2.3:a:openssl:openssl:3.0.2"}]}`)))
	f.Add([]byte(`{"spdxVersion":"SPDX-2.3","packages":[{"name":"openssl","versionInfo":"1.1.1w","externalRefs":[{"referenceType":"cpe23Type","referenceLocator":"cpe:2.3:a:openssl:openssl:1.1.1w"}]}]}`))
	f.Add([]byte(`{"bomFormat":"CycloneDX",`))
	f.Add([]byte(`<bom/>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		format, comps, err := ParseSBOM(b)
		if err != nil {
			if format != "" || comps != nil {
				t.Fatalf("error %v with results", err)
			}
			return
		}
		if format == "" {
			t.Fatal("no format")
		}
		f2, c2, err := ParseSBOM(b)
		if err != nil || f2 != format || len(c2) != len(comps) {
			t.Fatal("not deterministic")
		}
		for _, c := range comps {
			if IsOpenSSL(c) {
				sameVersion(c.Listed(), "3.5.7")
			}
		}
		sbomOf("x.whl", "x.json", b)
	})
}
