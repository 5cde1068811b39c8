package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// ParseChanges reads a section per release and the CVEs its entries
// cite, not the ones its prose names.
func TestParseChanges(t *testing.T) {
	in := `OpenSSL CHANGES
===============

### Changes between 4.0.1 and 4.0.2 [25 Aug 2026]

 * Fixed a double free.

   ([CVE-2026-18798])

 * Fixed two things ([CVE-2026-63072], [CVE-2026-63073]).

### Changes between 3.3.2 and 3.3.3 [xx XXX xxxx]

 * When fixing CVE-2023-3446 it was discovered that more was needed.
   (CVE-2024-9143)

 Changes between 1.1.1s and 1.1.1t [7 Feb 2023]

  *) Fixed X (CVE-2023-0286)

  [CVE-2026-18798]: https://www.openssl.org/news/vulnerabilities.html
`
	got, err := ParseChanges("CHANGES.md", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []ReleaseNotes{
		{File: "CHANGES.md", Line: 4, Release: "4.0.2", Date: "2026-08-25", CVEs: []string{"CVE-2026-18798", "CVE-2026-63072", "CVE-2026-63073"}},
		{File: "CHANGES.md", Line: 12, Release: "3.3.3", CVEs: []string{"CVE-2024-9143"}},
		{File: "CHANGES.md", Line: 17, Release: "1.1.1t", Date: "2023-02-07", CVEs: []string{"CVE-2023-0286"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.File != w.File || g.Line != w.Line || g.Release != w.Release || g.Date != w.Date || !slices.Equal(g.CVEs, w.CVEs) {
			t.Errorf("section %d: %+v\nwant %+v", i, g, w)
		}
	}
	if _, err := ParseChanges("README.md", []byte("# hello\n")); err == nil || !strings.Contains(err.Error(), "README.md: no \"Changes between X and Y [date]\" section") {
		t.Errorf("no section: %v", err)
	}
}

// releaseNotes reads the notes of every release tarball the fixtures
// hold, each held to its pinned sha256 first.
func releaseNotes(t *testing.T) map[string][]ReleaseNotes {
	t.Helper()
	out := map[string][]ReleaseNotes{}
	for _, v := range slices.Sorted(maps.Keys(testfixture.Pinned)) {
		r := testfixture.Get(t, v)
		f, err := os.Open(r.Tarball)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != r.SHA256 {
			t.Fatalf("%s: sha256 %s, pinned %s", r.Tarball, got, r.SHA256)
		}
		n, err := ReadNotes(context.Background(), r.Tarball)
		if err != nil {
			t.Fatal(err)
		}
		out[v] = n
	}
	return out
}

// The second source: the embedded table against the release notes of
// every release tarball the fixtures hold (signed, pinned by sha256, and
// not OpenSSL's advisory records). Every CVE a release's notes cite is in
// the table with that release as its series' fix, and every CVE the table
// says a release of the tarball's series fixes is cited by its notes;
// each disagreement is either gone or listed, with why, in
// testdata/notes-exceptions.txt.
func TestTableAgainstReleaseNotes(t *testing.T) {
	tab, err := advisory.Default()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "notes-exceptions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && !strings.HasPrefix(l, "#") {
			allowed[f[0]+" "+f[1]] = false
		}
	}
	notes := releaseNotes(t)
	for v, n := range notes {
		for _, d := range CompareNotes(tab, n, v) {
			key := strings.Join(strings.Fields(d)[:2], " ")
			key = strings.TrimSuffix(key, ":")
			if _, ok := allowed[key]; ok {
				allowed[key] = true
				continue
			}
			t.Errorf("openssl-%s notes: %s", v, d)
		}
	}
	for k, used := range allowed {
		if !used {
			t.Errorf("testdata/notes-exceptions.txt: %s: no such disagreement now; take the line off", k)
		}
	}
}

// The cross-check fails when a CVE leaves the table, and when a release's
// notes stop citing one the table says it fixes.
func TestCompareNotesCatchesRemovals(t *testing.T) {
	tab, err := advisory.Default()
	if err != nil {
		t.Fatal(err)
	}
	notes := releaseNotes(t)["4.0.2"]
	if d := CompareNotes(tab, notes, "4.0.2"); len(d) != 0 {
		t.Logf("4.0.2 disagrees already (the exceptions list says why): %q", d)
	}
	const cve = "CVE-2026-54876"
	less := *tab
	less.Advisories = slices.DeleteFunc(slices.Clone(tab.Advisories), func(a advisory.Advisory) bool { return a.CVE == cve })
	if d := CompareNotes(&less, notes, "4.0.2"); !slices.ContainsFunc(d, func(s string) bool {
		return strings.HasPrefix(s, cve+" 4.0.2: ") && strings.Contains(s, "cites it, and the table has no such CVE")
	}) {
		t.Errorf("%s taken from the table: %q", cve, d)
	}
	cut := slices.Clone(notes)
	for i := range cut {
		if cut[i].Release == "4.0.2" {
			cut[i].CVEs = slices.DeleteFunc(slices.Clone(cut[i].CVEs), func(c string) bool { return c == cve })
		}
	}
	if d := CompareNotes(tab, cut, "4.0.2"); !slices.ContainsFunc(d, func(s string) bool {
		return strings.HasPrefix(s, cve+" 4.0.2: the table says 4.0.2 fixes it; ") && strings.Contains(s, "does not cite it")
	}) {
		t.Errorf("%s taken from 4.0.2's notes: %q", cve, d)
	}
}
