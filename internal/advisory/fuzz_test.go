package advisory

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// FuzzParse: the table parser never panics, and what it accepts Encode
// writes back in a form it reads to the same table. The seeds are the
// real table and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add(embedded)
	f.Add([]byte(`{"schema":"` + Schema + `","as_of":"2026-09-29","sources":[{"name":"s","url":"https://example/s","commit":"abc1234","through":"2026-09-29"}],"advisories":[{"cve":"CVE-2022-3996","source":"s","date":"2022-12-13","severity":"low","affected":[{"series":"3.0","introduced":"3.0.0","fixed":"3.0.8","last_affected":"3.0.7","public":true}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := Parse("fuzz", data)
		if err != nil {
			return
		}
		b, err := Encode(tab)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("encoded", b)
		if err != nil {
			t.Fatalf("Encode wrote what Parse refuses: %v\n%s", err, b)
		}
		b2, _ := Encode(again)
		if !bytes.Equal(b, b2) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
		// Every range Parse accepts holds its own first release.
		for _, a := range tab.Advisories {
			for _, r := range a.Affected {
				if v, _ := osslver.Parse(r.Introduced); !r.Contains(v) {
					t.Fatalf("%s: range %+v does not contain its introduced release", a.CVE, r)
				}
			}
		}
	})
}

// FuzzParseSuppressions: the VEX and plain-list reader never panics, and
// every entry it accepts is a CVE with a reason.
func FuzzParseSuppressions(f *testing.F) {
	for _, name := range []string{"assessed.txt", "vex.cdx.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("CVE-2023-0286\n"))
	f.Add([]byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":[{"id":"CVE-2023-0286","analysis":{"state":"not_affected"},"affects":[{"ref":"pkg:generic/openssl@3.0.5"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSuppressions("fuzz", data)
		if err != nil {
			return
		}
		for _, e := range s.Entries {
			if !IsCVE(e.CVE) || e.Reason == "" || e.Where == "" {
				t.Fatalf("entry %+v", e)
			}
			for _, r := range e.Releases {
				if _, err := osslver.Parse(r); err != nil {
					t.Fatalf("release %q: %v", r, err)
				}
			}
		}
	})
}
