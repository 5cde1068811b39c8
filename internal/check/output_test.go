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

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// pycaFixture is a universal static library with an -O0 arm64 slice
// (pyca's compiler line) and a good x86_64 slice.
func pycaFixture(t *testing.T) (*kit, string) {
	k := newKit(t)
	bad := k.ar("libbad.a", true, k.macho("bad.o", "arm64-apple-macos11", cversion(lineArmO0, "darwin64-arm64-cc")))
	good := k.ar("libx.a", true, k.macho("x.o", "x86_64-apple-macos10.12", cversion(lineX86O3, "darwin64-x86_64-cc")))
	return k, k.lipo("libcrypto.a", bad, good)
}

// The JSON schema is an interface: these keys and types must not change.
func TestJSONSchema(t *testing.T) {
	_, lib := pycaFixture(t)
	var out bytes.Buffer
	err := Run(context.Background(), Options{Path: lib, JSON: true, Archs: []string{"arm64"}, Stdout: &out, Env: noEnv, Advisories: testAdvisories(t), Now: dec1})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("err = %v", err)
	}
	var doc map[string]any
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v", err)
	}
	if dec.More() {
		t.Fatal("more than one JSON document on stdout")
	}
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	wantTop := []string{"advisories", "archs", "artifacts", "binaries", "end_of_life", "failures", "min_opt", "not_judged", "notes", "ok", "path", "sboms", "schema", "skipped", "slices", "strict"}
	if got := keys(doc); !slices.Equal(got, wantTop) {
		t.Errorf("top-level keys %v, want %v", got, wantTop)
	}
	if doc["schema"] != Schema || doc["ok"] != false || doc["min_opt"] != "-O2" || doc["path"] != lib {
		t.Errorf("top level: %v", doc)
	}
	bins := doc["binaries"].([]any)
	b := bins[0].(map[string]any)
	wantBin := []string{"format", "path", "sha256", "size", "slices"}
	if got := keys(b); !slices.Equal(got, wantBin) {
		t.Errorf("binary keys %v, want %v", got, wantBin)
	}
	sl := b["slices"].([]any)
	arm := sl[1].(map[string]any)
	wantSlice := []string{"advisories", "arch", "built_on", "candidates", "code", "compiler", "compilers", "evidence", "family", "format", "isa", "libcrypto", "minos", "minos_counts",
		"minos_mixed", "objects", "ok", "opt", "opt_source", "opt_status", "platform", "problems", "series", "status", "version"}
	if got := keys(arm); !slices.Equal(got, wantSlice) {
		t.Errorf("slice keys %v, want %v", got, wantSlice)
	}
	// OpenSSL's advisories: the whole input's, a slice's, one finding's.
	if got, want := keys(doc["advisories"].(map[string]any)), []string{"affected", "as_of", "counts", "cves", "listed", "matched", "origin", "sources", "suppressed", "suppressed_cves", "table"}; !slices.Equal(got, want) {
		t.Errorf("advisories keys %v, want %v", got, want)
	}
	sa := arm["advisories"].(map[string]any)
	if got, want := keys(sa), []string{"counts", "fix", "fixed_by", "highest", "list", "no_public_fix", "release", "suppressed", "total"}; !slices.Equal(got, want) {
		t.Errorf("slice advisories keys %v, want %v", got, want)
	}
	if got, want := keys(sa["list"].([]any)[0].(map[string]any)), []string{"cve", "date", "fix", "fixed", "introduced", "public_fix", "series", "severity", "url"}; !slices.Equal(got, want) {
		t.Errorf("advisory finding keys %v, want %v", got, want)
	}
	if sa["release"] != "4.0.2" || sa["fixed_by"] != "4.0.3" || sa["highest"] != "high" {
		t.Errorf("slice advisories %v", sa)
	}
	if arm["arch"] != "arm64" || arm["opt"] != "-O0" || arm["ok"] != false || arm["minos"] != "11.0" ||
		arm["minos_counts"].(map[string]any)["11.0"] != 1.0 || arm["libcrypto"] != true || arm["compiler"] != lineArmO0 {
		t.Errorf("arm64 slice: %v", arm)
	}
	if arm["status"] != StatusFailed || arm["series"].(map[string]any)["name"] != "4.0" || doc["slices"] != 2.0 || doc["not_judged"] != 0.0 {
		t.Errorf("arm64 slice status %v, series %v; slices %v, not judged %v", arm["status"], arm["series"], doc["slices"], doc["not_judged"])
	}
	p := arm["problems"].([]any)[0].(map[string]any)
	if p["rule"] != "optimisation" || p["member"] != "bad.o" || !strings.HasPrefix(p["message"].(string), "compiler line has no -O flag (built without optimisation (-O0))") {
		t.Errorf("problem: %v", p)
	}
	x := sl[0].(map[string]any)
	if x["opt"] != "-O3" || x["opt_flag"] != "-O3" || x["ok"] != true || x["status"] != StatusOK {
		t.Errorf("x86_64 slice: %v", x)
	}
}

// Under GitHub Actions: one ::error per failing slice, data and properties
// escaped, and a Markdown table appended to the step summary.
func TestGitHubActions(t *testing.T) {
	k, lib := pycaFixture(t)
	// A name with the characters the escaping rules are about.
	odd := filepath.Join(k.dir, "a,b:c%d")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	testfixture.CopyFile(t, lib, filepath.Join(odd, "libcrypto.a"))
	lib = filepath.Join(odd, "libcrypto.a")
	summary := filepath.Join(k.dir, "summary.md")
	if err := os.WriteFile(summary, []byte("# before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary}[k]
	}
	var out bytes.Buffer
	err := Run(context.Background(), Options{Path: lib, Archs: []string{"arm64", "riscv"}, Stdout: &out, Env: env, Advisories: testAdvisories(t), Now: dec1})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("err = %v", err)
	}
	var ann []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "::") {
			ann = append(ann, l)
		}
	}
	escFile := strings.NewReplacer("%", "%25", ":", "%3A", ",", "%2C").Replace(lib)
	want := []string{
		// the binary lacks riscv
		"::error file=" + escFile + ",title=osslbuild check%3A libcrypto.a::" + strings.ReplaceAll(lib, "%", "%25") + ": no riscv slice: expected arm64, riscv, found x86_64, arm64",
		// the arm64 slice is -O0
		"::error file=" + escFile + ",title=osslbuild check%3A libcrypto.a arm64::" + strings.ReplaceAll(lib, "%", "%25") +
			"(bad.o) arm64: compiler line has no -O flag (built without optimisation (-O0)), expected at least -O2: \"" + lineArmO0 + "\"",
		// 4.0.2's high advisory, reported (no -fail-on)
		"::warning file=" + escFile + ",title=osslbuild check%3A known advisories x86_64::" + strings.ReplaceAll(lib, "%", "%25") +
			" x86_64: OpenSSL 4.0.2: 2 known advisories (1 high, 1 low), highest high; fixed in 4.0.3; high and critical: CVE-2026-84782 (high, fixed in 4.0.3)",
		"::warning file=" + escFile + ",title=osslbuild check%3A known advisories arm64::" + strings.ReplaceAll(lib, "%", "%25") +
			" arm64: OpenSSL 4.0.2: 2 known advisories (1 high, 1 low), highest high; fixed in 4.0.3; high and critical: CVE-2026-84782 (high, fixed in 4.0.3)",
	}
	if !slices.Equal(ann, want) {
		t.Errorf("annotations:\n%s\nwant:\n%s", strings.Join(ann, "\n"), strings.Join(want, "\n"))
	}

	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, w := range []string{
		"# before\n### osslbuild check ",
		"| artifact | arch | version | minos | opt | code | isa | status | advisories | compiler | sha256 |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
		" | arm64 | 4.0.2 | 11.0 | -O0 (no -O) | too little 0.00/0 | apple-m1 | FAIL (slices, optimisation) | 2 (high), fix 4.0.3 | ` " + lineArmO0 + " ` | ` ",
		" | x86\\_64 | 4.0.2 | 10.12 | -O3 | too little 0.00/0 | x86-64 | FAIL (slices) | 2 (high), fix 4.0.3 | ` " + lineX86O3 + " ` | ` ",
		"\n\nadvisories: OpenSSL's advisories through 2026-09-29 (4 advisories; from test@abc1234 through 2026-09-29): 2 of 2 OpenSSL slices affected (2 CVEs: 1 high, 1 low); reported, not failed (-fail-on=SEVERITY fails them)\n",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("step summary lacks %q:\n%s", w, md)
		}
	}
	if n := strings.Count(md, "\n| "); n != 3 { // header + 2 rows
		t.Errorf("step summary has %d table lines:\n%s", n, md)
	}
}

// The text table: aligned columns, the -O0 slice called out in words.
func TestText(t *testing.T) {
	_, lib := pycaFixture(t)
	var out bytes.Buffer
	err := Run(context.Background(), Options{Path: lib, Stdout: &out, Env: noEnv})
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "built without optimisation (-O0)") {
		t.Fatalf("err = %v", err)
	}
	lines := strings.Split(out.String(), "\n")
	hdr := lines[0]
	col := strings.Index(hdr, "OPT")
	for _, l := range lines[1:3] {
		if !strings.HasPrefix(l[col:], "-O") {
			t.Errorf("OPT column not aligned at %d:\n%s", col, out.String())
		}
	}
	for _, w := range []string{"-O0 (no -O)", "FAIL " + lib + "(bad.o) arm64: compiler line has no -O flag (built without optimisation (-O0))", "FAILED (1 problems)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}

// Digests are computed when something shows them: the JSON, the step
// summary, an artifact's verification; the table alone does not.
func TestDigestsWhenShown(t *testing.T) {
	_, lib := pycaFixture(t)
	res, err := Check(context.Background(), Options{Path: lib})
	if err != nil || res.Binaries[0].SHA256 != "" {
		t.Errorf("plain check hashed: %v %q", err, res.Binaries[0].SHA256)
	}
	var out bytes.Buffer
	Run(context.Background(), Options{Path: lib, JSON: true, Stdout: &out, Env: noEnv})
	var doc Result
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Binaries[0].SHA256) != 64 {
		t.Errorf("JSON without digest: %v %+v", err, doc.Binaries)
	}
}
