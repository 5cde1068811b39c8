package check

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/advisory"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/cyclonedx.golden.json")

// TestCycloneDXGolden pins -format=cyclonedx's bytes for a fixed result:
// every field the writer fills (supplier, CPE, evidence, an unversioned
// library, a fork, affecting and assessed vulnerabilities) and HTML
// characters written as they are, not escaped.
func TestCycloneDXGolden(t *testing.T) {
	sa := &SliceAdvisories{Release: "3.0.5", Total: 1, Highest: "high", Fix: "upgrade to 3.0.8", Suppressed: 1,
		Caveats: []string{"a suffixed release <3.0.5+quic> & more"},
		List: []AdvisoryFinding{
			{CVE: "CVE-2023-0286", Date: "2023-02-07", Severity: "high", Series: "3.0", Fix: "3.0.8", PublicFix: true, URL: "https://openssl-library.org/news/secadv/20230207.txt"},
			{CVE: "CVE-2022-4304", Date: "2023-02-07", Severity: "moderate", Series: "3.0", Fix: "3.0.8", PublicFix: true, Suppressed: "not_affected: code_not_reachable: vex.json: vulnerabilities[0]"},
			{CVE: "CVE-2022-4203", Severity: "low", Series: "3.0", Fix: "no public fix"},
		}}
	res := &Result{Path: "dist/<a&b>", OK: false, MinOpt: "2",
		Advisories: &AdvisoryReport{AsOf: "2026-11-01", Table: "embedded table", Origin: "embedded",
			Sources: []advisory.Source{{Name: "openssl/release-metadata", URL: "https://github.com/openssl/release-metadata", Commit: "abc123", Through: "2026-11-01"}},
			FailOn:  "high", Assessed: "vex.json", Suppressed: 1},
		Binaries: []Binary{
			{Path: "dist/libcrypto.so.3", Links: []string{"dist/libcrypto.so"}, Format: "elf", SHA256: "00ff",
				Slices: []Slice{{Arch: "x86_64", Family: "OpenSSL", Version: "OpenSSL 3.0.5+quic 5 Jul 2022", Status: StatusFailed, Opt: "-O2", OptStatus: "ok", OptSource: "compiler-line",
					ISA: &ISA{Level: "x86-64-v2"}, MinOS: "", Platform: "linux-x86_64",
					Series: &Series{Name: "3.0", EndOfLife: "2026-09-07", LTS: true, Ended: true}, Advisories: sa}}},
			{Path: "dist/app.whl", Member: "pkg/_rust.abi3.so", Format: "universal",
				Slices: []Slice{
					{Arch: "x86_64", Family: "BoringSSL", Version: "BoringSSL", Status: StatusOK, Opt: "-O3", OptStatus: "ok"},
					{Arch: "arm64", Family: "OpenSSL", Status: StatusOK, Opt: "-O3", OptStatus: "ok", MinOS: "11.0", Signature: &Signature{Kind: "ad hoc"}},
				}},
		},
	}
	var b bytes.Buffer
	if err := CycloneDX(&b, res, "v1.2.3", "2026-08-25T11:39:28Z"); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "cyclonedx.golden.json")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("-format=cyclonedx bytes differ from %s:\n%s", golden, b.Bytes())
	}
}
