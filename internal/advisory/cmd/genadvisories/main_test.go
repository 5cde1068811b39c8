package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/advisory/upstream"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

var src = filepath.Join("..", "..", "upstream", "testdata", "src")

// gaps accepts the test records' holes.
var gaps = filepath.Join("testdata", "gaps.txt")

func gen(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	err := run(args, &out, &errw)
	return out.String(), errw.String(), err
}

// The generator writes the table Build makes, keeps it when only the
// as-of day would change (within -refresh), and rewrites it past that.
func TestGenerate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "advisories.json")
	stdout, stderr, err := gen(t, "-src", src, "-gaps", gaps, "-out", out, "-through", "2026-10-01", "-commit", "abc1234")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, out+": 12 advisories as of 2026-10-01 (13 records, 5 advisory texts,") ||
		!strings.Contains(stderr, "note: secjson/CVE-2022-3996.json: series 3.0 affected up to 3.0.7; fixed in 3.0.8 by its advisory text") {
		t.Errorf("stdout %q\nstderr %q", stdout, stderr)
	}
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := advisory.Parse(out, first)
	if err != nil || tab.AsOf != "2026-10-01" || tab.Sources[0].Commit != "abc1234" || len(tab.Advisories) != 12 {
		t.Fatalf("%+v %v", tab, err)
	}

	// Nothing new, 20 days on: kept, byte for byte.
	stdout, _, err = gen(t, "-src", src, "-gaps", gaps, "-out", out, "-through", "2026-10-21", "-commit", "def1234")
	if err != nil || !strings.Contains(stdout, "12 advisories, unchanged; as of 2026-10-01 kept (20 days before 2026-10-21, within -refresh=30)") {
		t.Errorf("within refresh: %q %v", stdout, err)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, first) {
		t.Error("rewritten within -refresh")
	}
	// 31 days on: the as-of day moves, and a proposal says nothing else
	// changed.
	prop := filepath.Join(t.TempDir(), "proposal")
	if _, _, err := gen(t, "-src", src, "-gaps", gaps, "-out", out, "-through", "2026-11-01", "-commit", "def1234", "-proposal", prop); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if !bytes.Contains(b, []byte(`"as_of": "2026-11-01"`)) {
		t.Errorf("not refreshed:\n%s", b)
	}
	if p, _ := os.ReadFile(filepath.Join(prop, "advisories.json")); !bytes.Equal(p, b) {
		t.Error("the proposal's table is not the one written")
	}
	if title, _ := os.ReadFile(filepath.Join(prop, "title.txt")); string(title) != "advisories: OpenSSL's records as of 2026-11-01 (no advisory changed; the as-of date moves)\n" {
		t.Errorf("title %q", title)
	}

	// A new record: the proposal names it, with its fixes.
	more := testfixture.CopyTree(t, src, filepath.Join(t.TempDir(), "src"))
	rec := `{"dataType":"CVE_RECORD","cveMetadata":{"cveId":"CVE-2026-84783","state":"PUBLISHED"},"containers":{"cna":{"datePublic":"2026-09-29T16:21:57+02:00",
"metrics":[{"format":"other","other":{"content":{"text":"Moderate"}}}],"affected":[{"product":"OpenSSL","versions":[{"version":"4.0.0","lessThan":"4.0.3","status":"affected"}]}]}}}`
	if err := os.WriteFile(filepath.Join(more, "secjson", "CVE-2026-84783.json"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	prop2 := filepath.Join(t.TempDir(), "proposal")
	if _, _, err := gen(t, "-src", more, "-gaps", gaps, "-out", out, "-through", "2026-11-08", "-commit", "0123abc", "-proposal", prop2); err != nil {
		t.Fatal(err)
	}
	title, _ := os.ReadFile(filepath.Join(prop2, "title.txt"))
	body, _ := os.ReadFile(filepath.Join(prop2, "body.md"))
	commit, _ := os.ReadFile(filepath.Join(prop2, "commit.txt"))
	if string(title) != "advisories: OpenSSL's records as of 2026-11-08 (1 new)\n" ||
		!strings.Contains(string(body), "at https://github.com/openssl/release-metadata/commit/0123abc (through 2026-11-08) and rebuilt `internal/advisory/advisories.json`: 13 advisories, complete through 2026-11-08 (the table it replaces: 12, as of 2026-11-01)") ||
		!strings.Contains(string(body), "**New**\n\n| CVE | date | severity | fixed in |\n|---|---|---|---|\n| CVE-2026-84783 | 2026-09-29 | moderate | 4.0: 4.0.3 |\n") ||
		!strings.Contains(string(body), "<details><summary>What the generator noted") ||
		!strings.HasSuffix(string(commit), "\nCVE-2026-84783\n") {
		t.Errorf("proposal:\n%s\n%s\n%s", title, body, commit)
	}
	// A proposal directory already used is refused, before anything is
	// written.
	other := filepath.Join(t.TempDir(), "x.json")
	if _, _, err := gen(t, "-src", more, "-gaps", gaps, "-through", "2026-11-08", "-commit", "0123abc", "-out", other, "-proposal", prop2); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("reused proposal directory: %v", err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("-out written though the proposal was refused")
	}
}

// A malformed record stops the generator with its name, and the table
// already there is left as it was.
func TestGenerateMalformed(t *testing.T) {
	dir := t.TempDir()
	bad := testfixture.CopyTree(t, src, filepath.Join(dir, "src"))
	if err := os.WriteFile(filepath.Join(bad, "secjson", "CVE-2023-0286.json"), []byte(`{"dataType":"CVE_RECORD","cveMetadata":{"cveId":"CVE-2023-0286","state":"PUBLISHED"},"containers":{"cna":{"datePublic":"yesterday"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "advisories.json")
	if err := os.WriteFile(out, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := gen(t, "-src", bad, "-gaps", gaps, "-through", "2026-10-01", "-commit", "abc1234", "-out", out)
	if !errors.Is(err, upstream.ErrRecord) || !strings.Contains(err.Error(), `secjson/CVE-2023-0286.json: malformed advisory record: CVE-2023-0286: datePublic "yesterday"`) {
		t.Errorf("err = %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "before\n" {
		t.Errorf("the table was touched: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
	for _, args := range [][]string{{}, {"-src", src, "-through", "1 Oct", "-commit", "abc1234"}, {"-src", src, "extra"}, {"-src", dir, "-through", "2026-10-01", "-commit", "abc1234"},
		{"-src", src, "-commit", "abc1234"}, {"-src", src, "-through", "2026-10-01", "-commit", "abc1234", "-cves-through", "2026-10-01"}} {
		if _, _, err := gen(t, args...); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// What the generator refuses to write, the table already there left as it
// was: a source with a CVE's record removed while its advisory text names
// it, a record with a range it cannot read, a release's notes naming a CVE
// no source has; and the table it writes with OpenSSL's records in the
// CVE list beside release-metadata names both.
func TestGenerateHoles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "advisories.json")
	if err := os.WriteFile(out, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"-gaps", gaps, "-through", "2026-10-01", "-commit", "abc1234", "-out", out}
	removed := testfixture.CopyTree(t, src, filepath.Join(dir, "removed"))
	if err := os.Remove(filepath.Join(removed, "secjson", "CVE-2023-2650.json")); err != nil {
		t.Fatal(err)
	}
	unreadable := testfixture.CopyTree(t, src, filepath.Join(dir, "unreadable"))
	p := filepath.Join(unreadable, "secjson", "CVE-2023-5363.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(`"lessThan": "3.1.4"`), []byte(`"lessThan": "3.1.x"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	changes := filepath.Join(dir, "CHANGES.md")
	if err := os.WriteFile(changes, []byte("### Changes between 3.0.7 and 3.0.8 [7 Feb 2023]\n\n * Fixed X.\n   ([CVE-2023-0286])\n * Fixed Y.\n   ([CVE-2023-0401])\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a record removed", append([]string{"-src", removed}, base...), "CVE-2023-2650: an advisory text has a section for it, and no source has its record"},
		{"a range unreadable", append([]string{"-src", unreadable}, base...), `secjson/CVE-2023-5363.json: lessThan "3.1.x" is no OpenSSL release`},
		{"a release's CVE unrecorded", append([]string{"-src", src, "-notes", changes}, base...), "CVE-2023-0401: " + changes + ":1 says 3.0.8 fixes it, and no source has its record"},
	} {
		_, _, err := gen(t, tc.args...)
		if !errors.Is(err, upstream.ErrHole) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v\nwant ErrHole saying %q", tc.name, err, tc.want)
		}
		if b, _ := os.ReadFile(out); string(b) != "before\n" {
			t.Errorf("%s: the table was touched", tc.name)
		}
	}

	// The CVE list's OpenSSL records are read beside release-metadata
	// (another CNA's are not), and the table names both sources.
	cves := filepath.Join(dir, "cves")
	testfixture.WriteTree(t, cves, map[string]string{
		"cves/2026/54xxx/CVE-2026-54876.json": `{"dataType":"CVE_RECORD","cveMetadata":{"cveId":"CVE-2026-54876","state":"PUBLISHED","assignerShortName":"openssl","dateUpdated":"2026-08-05T16:32:57.957Z"},"containers":{"cna":{"datePublic":"2026-08-05T11:43:00.000Z",
"metrics":[{"format":"other","other":{"content":{"text":"Low"}}}],"affected":[{"product":"OpenSSL","versions":[{"version":"4.0.0","lessThan":"4.0.2","status":"affected"},{"version":"3.6.0","lessThan":"3.6.4","status":"affected"}]}]}}}`,
		"cves/2026/99xxx/CVE-2026-99999.json": `{"dataType":"CVE_RECORD","cveMetadata":{"cveId":"CVE-2026-99999","state":"PUBLISHED","assignerShortName":"curl"},"containers":{"cna":{"datePublic":"2026-08-05T11:43:00.000Z","affected":[{"product":"OpenSSL","versions":[{"version":"3.6.0","lessThan":"3.6.4","status":"affected"}]}]}}}`,
	})
	stdout, _, err := gen(t, "-src", src, "-gaps", gaps, "-through", "2026-06-10", "-commit", "abc1234", "-cves", cves, "-cves-through", "2026-12-01", "-cves-commit", "8798e9cd", "-out", out)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(out)
	tab, err := advisory.Parse(out, b)
	if err != nil {
		t.Fatal(err)
	}
	if tab.AsOf != "2026-12-01" || len(tab.Sources) != 2 || tab.Sources[1].Name != upstream.CVEList || tab.Sources[1].Commit != "8798e9cd" || len(tab.Advisories) != 13 {
		t.Errorf("%s\n%+v", stdout, tab)
	}
	m, err := tab.Affecting("3.6.3")
	if err != nil || len(m.Findings) != 1 || m.Findings[0].CVE != "CVE-2026-54876" || m.Findings[0].Source != upstream.CVEList || m.Findings[0].Range.Fixed != "3.6.4" {
		t.Errorf("3.6.3: %+v %v", m, err)
	}
}
