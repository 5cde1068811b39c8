package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/advisory"
)

// The August 2026 advisories (2026-08-05, -13 and -25), as OpenSSL's
// records state them and 4.0.2's CHANGES.md cites them: each CVE's fix
// per series. CVE-2026-54876 does not affect 3.5.
var august = map[string]map[string]string{
	"CVE-2026-54876": {"4.0": "4.0.2", "3.6": "3.6.4"},
	"CVE-2026-14456": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-18798": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-14457": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-54874": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-63072": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-63073": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-63074": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-63075": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-63076": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
	"CVE-2026-75803": {"4.0": "4.0.2", "3.6": "3.6.4", "3.5": "3.5.8"},
}

// jsonFindings runs check -format=json over path and returns, from the
// JSON alone, each slice's advisories as CVE -> fix, and the document's
// advisories object.
func jsonFindings(t *testing.T, o Options) (map[string]string, map[string]any) {
	t.Helper()
	var out bytes.Buffer
	o.Format, o.Stdout, o.Env, o.Now = "json", &out, noEnv, dec1
	if err := Run(context.Background(), o); err != nil && !errors.Is(err, ErrFailed) {
		t.Fatal(err)
	}
	var doc struct {
		Binaries []struct {
			Slices []struct {
				Advisories *struct {
					List []struct{ CVE, Fix string }
				}
			}
		}
		Advisories map[string]any
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := map[string]string{}
	for _, b := range doc.Binaries {
		for _, s := range b.Slices {
			if s.Advisories == nil {
				continue
			}
			for _, f := range s.Advisories.List {
				got[f.CVE] = f.Fix
			}
		}
	}
	return got, doc.Advisories
}

// check -json on OpenSSL 3.5.7 and 3.6.3 (both pinned in osslbuild's own
// recipe) and 4.0.1 (pyca's last pin) lists the August 2026 CVEs that
// affect each series with the series' fix; on 4.0.2 none of them. The
// binaries carry libcrypto's real build information for each version.
func TestAugust2026Advisories(t *testing.T) {
	k := newKit(t)
	for _, tc := range []struct{ version, series string }{
		{"3.5.7", "3.5"}, {"3.6.3", "3.6"}, {"4.0.1", "4.0"}, {"4.0.2", "4.0"},
	} {
		obj := versionObject(k, "v"+tc.version+".o", "OpenSSL "+tc.version+" 9 Jun 2026", "darwin64-arm64-cc")
		got, _ := jsonFindings(t, Options{Path: obj})
		for _, cve := range slices.Sorted(maps.Keys(august)) {
			fix, affects := august[cve][tc.series]
			if affects && fix == tc.version {
				affects = false // the release that fixes it
			}
			switch g, listed := got[cve]; {
			case affects && g != fix:
				t.Errorf("%s: %s listed %v with fix %q, want %s", tc.version, cve, listed, g, fix)
			case !affects && listed:
				t.Errorf("%s: %s listed (fix %q); it does not affect %s", tc.version, cve, g, tc.version)
			}
		}
	}
}

// -advisories=FILE: a table that adds one CVE is used and reported, in
// every format named as the file; the embedded table is named so too.
// A malformed, wrong-schema, older or shrunken file is refused, naming
// the flag and the file, before any file is checked.
func TestAdvisoriesFile(t *testing.T) {
	k := newKit(t)
	obj := versionObject(k, "v402.o", "OpenSSL 4.0.2 25 Aug 2026", "darwin64-arm64-cc")
	base, err := advisory.Default()
	if err != nil {
		t.Fatal(err)
	}
	next := *base
	next.Advisories = append([]advisory.Advisory{{CVE: "CVE-2026-99001", Date: base.AsOf, Severity: advisory.High, Source: base.Sources[0].Name,
		Affected: []advisory.Range{{Series: "4.0", Introduced: "4.0.0", Fixed: "4.0.3", Public: true}}}}, base.Advisories...)
	b, err := advisory.Encode(&next)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "advisories.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}

	got, adv := jsonFindings(t, Options{Path: obj})
	if _, ok := got["CVE-2026-99001"]; ok || adv["origin"] != "embedded" || !strings.Contains(adv["table"].(string), "(embedded table, ") {
		t.Errorf("embedded: %v %v", got, adv)
	}
	got, adv = jsonFindings(t, Options{Path: obj, AdvisoriesFile: file})
	if got["CVE-2026-99001"] != "4.0.3" || adv["origin"] != file || !strings.Contains(adv["table"].(string), "("+file+" table, ") {
		t.Errorf("-advisories: %v %v", got, adv)
	}
	for _, format := range []string{"text", "sarif", "cyclonedx"} {
		var out bytes.Buffer
		err := Run(context.Background(), Options{Path: obj, AdvisoriesFile: file, Format: format, Stdout: &out, Env: noEnv, Now: dec1})
		if err != nil && !errors.Is(err, ErrFailed) {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), file+" table, ") {
			t.Errorf("-format=%s does not name the table:\n%s", format, out.String())
		}
	}
	summary := filepath.Join(dir, "summary.md")
	env := func(k string) string {
		return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary}[k]
	}
	var out, errw bytes.Buffer
	if err := Run(context.Background(), Options{Path: obj, AdvisoriesFile: file, Stdout: &out, Stderr: &errw, Env: env, Now: dec1}); err != nil && !errors.Is(err, ErrFailed) {
		t.Fatal(err)
	}
	if s, _ := os.ReadFile(summary); !strings.Contains(string(s), file+" table, ") {
		t.Errorf("step summary does not name the table:\n%s", s)
	}

	older := *base
	older.Advisories = base.Advisories[1:]
	ob, _ := advisory.Encode(&older)
	shrunk := filepath.Join(dir, "shrunk.json")
	os.WriteFile(shrunk, ob, 0o644)
	malformed := filepath.Join(dir, "malformed.json")
	os.WriteFile(malformed, b[:100], 0o644)
	v1 := filepath.Join(dir, "v1.json")
	os.WriteFile(v1, bytes.Replace(b, []byte("/advisory/v2"), []byte("/advisory/v1"), 1), 0o644)
	for _, bad := range []struct {
		path string
		is   error
	}{{shrunk, advisory.ErrOlder}, {malformed, advisory.ErrMalformed}, {v1, advisory.ErrMalformed}} {
		var out bytes.Buffer
		err := Run(context.Background(), Options{Path: obj, AdvisoriesFile: bad.path, Stdout: &out, Env: noEnv, Now: dec1})
		if !errors.Is(err, bad.is) || !strings.Contains(err.Error(), "-advisories="+bad.path) || out.Len() != 0 {
			t.Errorf("%s: err = %v, output %q", bad.path, err, out.String())
		}
	}
}
