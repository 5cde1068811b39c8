package cyclonedx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestReadOtherVersions: documents of 1.4, 1.5 and 1.6 are read, each
// version's own shapes of tools (1.4's array) and evidence (1.4's
// copyright, 1.6's identity array) tolerated.
func TestReadOtherVersions(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		tools     int // tool entries, legacy or components
	}{
		{"1.4", `{"bomFormat":"CycloneDX","specVersion":"1.4","version":1,
			"metadata":{"timestamp":"2024-01-01T00:00:00Z","tools":[{"vendor":"pyca","name":"generate_sbom","version":"1"}],
				"component":{"type":"application","name":"cryptography","version":"44.0.0"}},
			"components":[{"type":"library","bom-ref":"ossl","name":"openssl","version":"3.4.0","purl":"pkg:generic/openssl@3.4.0",
				"hashes":[{"alg":"SHA-256","content":"00"}],"licenses":[{"expression":"Apache-2.0"}],
				"evidence":{"copyright":[{"text":"OpenSSL"}]}}],
			"vulnerabilities":[{"id":"CVE-2024-0001","ratings":[{"score":5.3,"severity":"medium","method":"CVSSv31"}],
				"analysis":{"state":"not_affected","justification":"code_not_reachable","response":["will_not_fix"]},
				"affects":[{"ref":"ossl","versions":[{"version":"3.4.0","status":"unaffected"}]}]}]}`, 1},
		{"1.5", `{"$schema":"http://cyclonedx.org/schema/bom-1.5.schema.json","bomFormat":"CycloneDX","specVersion":"1.5","version":1,
			"metadata":{"tools":{"components":[{"type":"application","name":"osslbuild"}],"services":[{"name":"x"}]},"lifecycles":[{"phase":"build"}]},
			"components":[{"type":"library","bom-ref":"ossl","name":"openssl","version":"3.4.0","purl":"pkg:generic/openssl@3.4.0",
				"evidence":{"identity":{"field":"version","confidence":1,"methods":[{"technique":"binary-analysis","confidence":1,"value":"OpenSSL 3.4.0"}]},
					"occurrences":[{"location":"lib/libcrypto.a"}]}}],
			"vulnerabilities":[{"id":"CVE-2024-0001","analysis":{"state":"resolved"},"affects":[{"ref":"ossl","versions":[{"range":"vers:generic/<3.4.1","status":"unaffected"}]}]}]}`, 1},
		{"1.6", `{"bomFormat":"CycloneDX","specVersion":"1.6","version":1,
			"metadata":{"tools":{"components":[{"type":"application","name":"a"},{"type":"application","name":"b"}]},"manufacturer":{"name":"m"}},
			"components":[{"type":"library","bom-ref":"ossl","name":"openssl","version":"3.4.0","purl":"pkg:generic/openssl@3.4.0","omniborId":["gitoid:blob:sha1:00"],
				"evidence":{"identity":[{"field":"purl","concludedValue":"pkg:generic/openssl@3.4.0","methods":[{"technique":"manifest-analysis","confidence":1}]}]},
				"components":[{"type":"file","name":"libcrypto.a"}]}],
			"vulnerabilities":[{"id":"CVE-2024-0001","rejected":"2024-02-01T00:00:00Z","analysis":{"state":"false_positive","detail":"no"},"affects":[{"ref":"ossl"}]}]}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bom BOM
			if err := json.Unmarshal([]byte(tc.doc), &bom); err != nil {
				t.Fatal(err)
			}
			if bom.BOMFormat != "CycloneDX" || bom.SpecVersion != tc.name {
				t.Errorf("header %q %q", bom.BOMFormat, bom.SpecVersion)
			}
			if tools := bom.Metadata.Tools; tools == nil || len(tools.Components)+len(tools.Legacy) != tc.tools {
				t.Errorf("tools %+v, want %d", tools, tc.tools)
			}
			if len(bom.Components) != 1 || bom.Components[0].PackageURL != "pkg:generic/openssl@3.4.0" || bom.Components[0].BOMRef != "ossl" {
				t.Errorf("components %+v", bom.Components)
			}
			if len(bom.Vulnerabilities) != 1 || bom.Vulnerabilities[0].Analysis == nil || bom.Vulnerabilities[0].Affects[0].Ref != "ossl" {
				t.Errorf("vulnerabilities %+v", bom.Vulnerabilities)
			}
		})
	}
}

// TestDecodeStrict: a known field of the wrong JSON type is refused, the
// error naming it; a document with none or an empty vulnerabilities
// section is told apart.
func TestDecodeStrict(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"bomFormat":"CycloneDX","components":{}}`, "components"},
		{`{"bomFormat":"CycloneDX","components":[{"name":"openssl","version":3}]}`, "components.version"},
		{`{"bomFormat":"CycloneDX","components":[{"name":"a","components":[{"purl":1}]}]}`, "components.components.purl"},
		{`{"bomFormat":"CycloneDX","metadata":{"component":{"cpe":true}}}`, "metadata.component.cpe"},
		{`{"bomFormat":"CycloneDX","metadata":{"tools":[{"name":7}]}}`, "metadata.tools"},
		{`{"bomFormat":"CycloneDX","metadata":{"tools":"osslbuild"}}`, "metadata.tools"},
		{`{"bomFormat":"CycloneDX","vulnerabilities":[{"id":"CVE-2024-0001","analysis":{"response":"update"}}]}`, "vulnerabilities.analysis.response"},
		{`{"bomFormat":"CycloneDX","vulnerabilities":[{"affects":[{"versions":[{"range":1}]}]}]}`, "vulnerabilities.affects.versions.range"},
		{`{"bomFormat":"CycloneDX"} x`, "invalid character"},
		{`[]`, "cannot unmarshal array"},
	} {
		if err := json.Unmarshal([]byte(tc.doc), new(BOM)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("reading %s: %v, want an error naming %s", tc.doc, err, tc.want)
		}
	}
	var none, empty BOM
	errNone := json.Unmarshal([]byte(`{"bomFormat":"CycloneDX"}`), &none)
	errEmpty := json.Unmarshal([]byte(`{"bomFormat":"CycloneDX","vulnerabilities":[]}`), &empty)
	if errNone != nil || errEmpty != nil || none.Vulnerabilities != nil || empty.Vulnerabilities == nil {
		t.Errorf("no section %v, empty section %v: want nil and empty", none, empty)
	}
}

// TestEncode: escapeHTML decides how <, > and & are written; Marshal's
// serial number follows the content.
func TestEncode(t *testing.T) {
	bom := func(name string) *BOM {
		return &BOM{BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1, Components: []Component{{Type: "library", Name: name}}}
	}
	for _, tc := range []struct {
		escape bool
		want   string
	}{{true, `"name": "a\u003cb\u0026c\u003e"`}, {false, `"name": "a<b&c>"`}} {
		b, err := Marshal(bom("a<b&c>"), tc.escape)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.want) {
			t.Errorf("escapeHTML %v:\n%s\nwant %s", tc.escape, b, tc.want)
		}
	}
	a1, _ := Marshal(bom("a"), false)
	a2, _ := Marshal(bom("a"), false)
	b1, _ := Marshal(bom("b"), false)
	var ba, bb BOM
	json.Unmarshal(a1, &ba)
	json.Unmarshal(b1, &bb)
	if !bytes.Equal(a1, a2) || !strings.HasPrefix(ba.SerialNumber, "urn:uuid:") || ba.SerialNumber == bb.SerialNumber {
		t.Errorf("serials %q %q; same content same bytes: %v", ba.SerialNumber, bb.SerialNumber, bytes.Equal(a1, a2))
	}
	if !strings.HasSuffix(string(a1), "}\n") || !strings.Contains(string(a1), `"components": [`) {
		t.Errorf("layout:\n%s", a1)
	}
}
