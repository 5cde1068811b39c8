package bump

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/osslbuild/osslbuild/internal/lifecycle"
	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

const miniRecipe = `# top comment
default = '1.0.0'   # the release built by default
prefix = "/opt/x"

[targets.a]
configure = "linux-x86_64"
os = "linux"
arch = "x86_64"
openssldir = "/etc/ssl"
artifact = "a"

# Older releases below.
# 1.0.0 is the first.
[[release]]
version = "1.0.0"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
size = 1
urls = ["https://example.org/openssl-1.0.0.tar.gz"]
signers = ["B146647E45A7B33947AB226B2A2C87D161692D40"]
`

func newRel(v string) recipe.Release {
	return recipe.Release{
		Version: v,
		SHA256:  strings.Repeat("ab", 32),
		Size:    42,
		URLs:    UpstreamURLs(v),
		Signers: []string{"B146647E45A7B33947AB226B2A2C87D161692D40"},
	}
}

func TestRewrite(t *testing.T) {
	rel := newRel("1.1.0")
	got, err := rewrite([]byte(miniRecipe), rel, true, "")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(miniRecipe, `default = '1.0.0'   #`, `default = "1.1.0"   #`, 1)
	want = strings.Replace(want, "# Older releases below.\n", `[[release]]
version = "1.1.0"
sha256 = "abababababababababababababababababababababababababababababababab"
size = 42
urls = [
  "https://github.com/openssl/openssl/releases/download/openssl-1.1.0/openssl-1.1.0.tar.gz",
  "https://www.openssl.org/source/openssl-1.1.0.tar.gz",
]
signers = ["B146647E45A7B33947AB226B2A2C87D161692D40"]

# Older releases below.
`, 1)
	if string(got) != want {
		t.Errorf("rewrite:\n%s", UnifiedDiff("want", "got", want, string(got)))
	}
	if err := checkRewrite("mini.toml", []byte(miniRecipe), got, rel, true); err != nil {
		t.Error(err)
	}
	// Without setDefault, only the block changes.
	got, err = rewrite([]byte(miniRecipe), rel, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "default = '1.0.0'   # the release built by default\n") {
		t.Errorf("default changed:\n%s", got)
	}
	if err := checkRewrite("mini.toml", []byte(miniRecipe), got, rel, false); err != nil {
		t.Error(err)
	}
	// The check notices a default that should have moved and did not.
	if err := checkRewrite("mini.toml", []byte(miniRecipe), got, rel, true); err == nil {
		t.Error("checkRewrite accepted a rewrite that left default alone")
	}
}

func TestRewriteCRLF(t *testing.T) {
	crlf := strings.ReplaceAll(miniRecipe, "\n", "\r\n")
	rel := newRel("1.1.0")
	got, err := rewrite([]byte(crlf), rel, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(got), "\n") != strings.Count(string(got), "\r\n") {
		t.Errorf("mixed line endings:\n%q", got)
	}
	if !strings.Contains(string(got), "default = \"1.1.0\"   # the release built by default\r\n") {
		t.Errorf("default line:\n%q", got)
	}
	if err := checkRewrite("mini.toml", []byte(crlf), got, rel, true); err != nil {
		t.Error(err)
	}
}

// TestRewriteCaught: a layout the textual edit misreads (a "[[release]]"
// block inside a multi-line string, older than the new release, so the
// edit lands inside the string) must be caught, not written. The schema
// refuses such a string in every field now; checkRewrite still refuses the
// edit should one get through.
func TestRewriteCaught(t *testing.T) {
	tricky := strings.Replace(miniRecipe, `configure = "linux-x86_64"`, "configure = \"\"\"\n[[release]]\nversion = \"0.9.0\"\n\"\"\"", 1)
	if _, err := recipe.Parse("tricky.toml", []byte(tricky)); err == nil || !strings.Contains(err.Error(), "configure") {
		t.Errorf("a configure value holding a [[release]] block: want it refused, got %v", err)
	}
	rel := newRel("1.1.0")
	got, err := rewrite([]byte(tricky), rel, true, "")
	if err != nil {
		return // refusing outright is fine too
	}
	if err := checkRewrite("tricky.toml", []byte(tricky), got, rel, true); err == nil {
		t.Errorf("checkRewrite accepted a misplaced block:\n%s", got)
	}
}

func TestRewriteNoDefaultLine(t *testing.T) {
	s := strings.Replace(miniRecipe, "default = '1.0.0'   # the release built by default\n", "", 1)
	if _, err := rewrite([]byte(s), newRel("1.1.0"), true, ""); err == nil {
		t.Error("rewrite without a default line succeeded")
	}
	if _, err := rewrite([]byte("default = \"1.0.0\"\n"), newRel("1.1.0"), true, ""); err == nil {
		t.Error("rewrite without a [[release]] succeeded")
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.toml")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(p, []byte("old"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "new" || st.Mode().Perm() != 0o640 {
		t.Errorf("after write: %q, mode %v", b, st.Mode())
	}
	// Someone edited the file meanwhile: refuse, keep theirs, leave no temp file.
	if err := writeAtomic(p, []byte("old"), []byte("newer")); err == nil {
		t.Error("overwrote a file that changed")
	}
	b, _ = os.ReadFile(p)
	ents, _ := os.ReadDir(dir)
	if string(b) != "new" || len(ents) != 1 {
		t.Errorf("after refusal: %q, %d entries", b, len(ents))
	}
	// A write that fails (the disk full, say) names the recipe and the
	// cause, not the hidden temporary file, which is gone.
	syncFile = func(*os.File) error {
		return &fs.PathError{Op: "sync", Path: filepath.Join(dir, ".r.toml.tmp-123"), Err: syscall.ENOSPC}
	}
	defer func() { syncFile = (*os.File).Sync }()
	err := writeAtomic(p, []byte("new"), []byte("newest"))
	if err == nil || strings.Contains(err.Error(), ".tmp-") || !strings.Contains(err.Error(), "write "+p) || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("failed write: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("after a failed write: %d entries", len(ents))
	}
}

func TestUnifiedDiff(t *testing.T) {
	for _, tc := range []struct{ name, a, b, want string }{
		{"equal", "x\n", "x\n", ""},
		{"insert middle",
			"1\n2\n3\n4\n5\n6\n7\n8\n",
			"1\n2\n3\n4\nnew\n5\n6\n7\n8\n",
			"--- a\n+++ b\n@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+new\n 5\n 6\n 7\n"},
		{"change first",
			"a\nb\n",
			"A\nb\n",
			"--- a\n+++ b\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n"},
		{"from empty", "", "x\n", "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n"},
		{"no newline at end",
			"a\nb",
			"a\nc",
			"--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ny\n",
			"--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+y\n"},
		{"merged hunk",
			"1\n2\n3\n4\n5\n6\n7\n8\n",
			"x\n2\n3\n4\n5\n6\n7\ny\n",
			"--- a\n+++ b\n@@ -1,8 +1,8 @@\n-1\n+x\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n"},
	} {
		if got := UnifiedDiff("a", "b", tc.a, tc.b); got != tc.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

// applyUnified applies a diff made by UnifiedDiff to a, checking every
// context and removed line against a, and returns the result.
func applyUnified(t *testing.T, a, diff string) string {
	t.Helper()
	if diff == "" {
		return a
	}
	al := splitLines(a)
	dl := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0 // next line of a to copy
	var last *string
	for i := 2; i < len(dl) && dl[i] != ""; i++ {
		l := dl[i]
		switch {
		case strings.HasPrefix(l, "@@ "):
			var as, an, bs, bn int
			hdr := strings.Fields(l)
			parse := func(s string, start, n *int) {
				*n = 1
				if _, err := fmt.Sscanf(s, "%d,%d", start, n); err != nil {
					fmt.Sscanf(s, "%d", start)
				}
			}
			parse(strings.TrimPrefix(hdr[1], "-"), &as, &an)
			parse(strings.TrimPrefix(hdr[2], "+"), &bs, &bn)
			from := as - 1
			if an == 0 {
				from = as
			}
			for pos < from {
				out = append(out, al[pos])
				pos++
			}
		case l == "\\ No newline at end of file\n":
			*last = strings.TrimSuffix(*last, "\n")
		default:
			text := l[1:]
			switch l[0] {
			case ' ', '-':
				if pos >= len(al) || strings.TrimSuffix(al[pos], "\n") != strings.TrimSuffix(text, "\n") {
					t.Fatalf("diff line %q does not match a's line %d", l, pos+1)
				}
				if l[0] == ' ' {
					out = append(out, al[pos])
					last = &out[len(out)-1]
				} else {
					s := al[pos]
					last = &s
				}
				pos++
			case '+':
				out = append(out, text)
				last = &out[len(out)-1]
			default:
				t.Fatalf("bad diff line %q", l)
			}
		}
	}
	out = append(out, al[pos:]...)
	return strings.Join(out, "")
}

// TestUnifiedDiffRoundTrip: on random files with repetitive lines (the case
// where sliding matters), applying the diff to a must give b.
func TestUnifiedDiffRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := []string{"\n", "[[release]]\n", "x\n", "y\n", "# c\n"}
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pick[rng.IntN(len(pick))])
		}
		s := b.String()
		if s != "" && rng.IntN(4) == 0 {
			s = strings.TrimSuffix(s, "\n")
		}
		return s
	}
	for i := range 3000 {
		a, b := gen(), gen()
		d := UnifiedDiff("a", "b", a, b)
		if got := applyUnified(t, a, d); got != b {
			t.Fatalf("case %d: applying\n%s\nto %q gave %q, want %q", i, d, a, got, b)
		}
	}
}

// TestRewriteVersionOrder: a release lands where it keeps the real recipe
// newest first: first, between two releases, or last.
func TestRewriteVersionOrder(t *testing.T) {
	base, err := os.ReadFile("../../recipes/openssl.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"9.0.0", "3.5.99", "3.0.21", "1.1.1"} {
		rel := newRel(v)
		got, err := rewrite(base, rel, false, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := checkRewrite("openssl.toml", base, got, rel, false); err != nil {
			t.Errorf("%s: %v", v, err)
		}
		r, err := recipe.Parse("openssl.toml", got)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		var order []string
		for _, x := range r.Releases {
			order = append(order, x.Version)
		}
		if !newestFirst(order) || !slices.Contains(order, v) {
			t.Errorf("%s: order %v, want it included, newest first", v, order)
		}
	}
}

func newestFirst(vs []string) bool {
	for i := 1; i < len(vs); i++ {
		a, erra := osslver.Parse(vs[i-1])
		b, errb := osslver.Parse(vs[i])
		if erra != nil || errb != nil || !osslver.Less(b, a) {
			return false
		}
	}
	return true
}

// TestRewriteMark: a release of an ended series is added with its
// end-of-life mark directly above it, where recipe.EndOfLifeMarks reads
// it, and the mark of the release it lands before stays with that one.
func TestRewriteMark(t *testing.T) {
	base, err := os.ReadFile("../../recipes/openssl.toml")
	if err != nil {
		t.Fatal(err)
	}
	ser, ok := lifecycle.Of("3.0.21")
	if !ok {
		t.Fatal("3.0 not in lifecycle")
	}
	rel := newRel("3.0.21")
	got, err := rewrite(base, rel, false, recipe.MarkLine(ser))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkRewrite("openssl.toml", base, got, rel, false); err != nil {
		t.Fatal(err)
	}
	marks, _, err := recipe.EndOfLifeMarks(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"3.0.21", "3.0.20", "3.0.22"} {
		if m := marks[v]; m.Series != "3.0" || m.Date != ser.EndOfLife {
			t.Errorf("%s: mark %+v, want 3.0 ending %s", v, m, ser.EndOfLife)
		}
	}
	if _, ok := marks["3.5.7"]; ok {
		t.Error("3.5.7 marked")
	}
}
