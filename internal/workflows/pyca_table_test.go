package workflows

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func mustReadDoc(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), docPath))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// docRows returns the rows, cells trimmed and in order, of the page's
// Markdown table whose header line starts with header.
func docRows(t testing.TB, header string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, line := range strings.Split(string(mustReadDoc(t)), "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), " | ")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf("%s has no table starting %q", docPath, header)
	}
	return rows
}

// sideBySideHeader starts the page's table of pyca's file beside the
// drop-in.
const sideBySideHeader = "| pyca's file | there | the drop-in |"

// plain is a cell's text with the Markdown code marks taken out.
func plain(cell string) string { return strings.ReplaceAll(cell, "`", "") }

var backquotedRe = regexp.MustCompile("`([^`]+)`")

// checkSideBySide holds the page's side-by-side table to pyca's file
// (pycaInfra) and to the drop-in w: a row for every trigger, job, matrix
// input, step and artifact of pyca's, the permissions and the layouts, and
// no other; what each row says the drop-in does is what the drop-in does.
func checkSideBySide(t *testing.T, w *pycaWorkflow) {
	rows := map[string][]string{}
	var order []string
	for _, r := range docRows(t, sideBySideHeader) {
		if len(r) != 3 {
			t.Errorf("side by side: row %q has %d cells, want 3", r, len(r))
			continue
		}
		rows[r[0]] = r[1:]
		order = append(order, r[0])
	}
	want := []string{"trigger `schedule`", "trigger `pull_request`", "trigger `push`", "permissions"}
	for _, pj := range pycaInfra.Jobs {
		want = append(want, "job `"+pj.ID+"`")
		if len(pj.Matrix) > 0 {
			for _, k := range []string{"NAME", "ARTIFACT_NAME", "CFLAGS", "OPENSSLDIR"} {
				want = append(want, "input `matrix.ARCH."+k+"`")
			}
		}
		for _, st := range pj.Steps {
			if k := "step `" + st + "` (" + pj.ID + ")"; !slices.Contains(want, k) {
				want = append(want, k)
			}
		}
	}
	for _, a := range pycaInfra.Artifacts {
		want = append(want, "artifact `"+a+"`")
	}
	want = append(want, "layout `openssl-macos-x86-64`, `openssl-macos-arm64`", "layout `openssl-macos-universal2`")
	if !slices.Equal(order, want) {
		t.Errorf("side by side: rows\n%q\nwant one for every item of pyca's file, in its order:\n%q", order, want)
	}
	get := func(k string) (there, dropIn string) {
		c := rows[k]
		if c == nil {
			return "", ""
		}
		return c[0], c[1]
	}
	if _, d := get("permissions"); !strings.Contains(d, "`contents: read`") || w.Permissions["contents"] != "read" {
		t.Errorf("side by side: permissions %q; the drop-in sets %v", d, w.Permissions)
	}
	if there, d := get("trigger `schedule`"); !strings.Contains(there, pycaInfra.Cron) || d != "the same" {
		t.Errorf("side by side: schedule %q, %q", there, d)
	}
	for _, tr := range []string{"pull_request", "push"} {
		if _, d := get("trigger `" + tr + "`"); !strings.HasPrefix(d, "the same") || !strings.Contains(d, "the recipe") {
			t.Errorf("side by side: %s %q: want the same paths, and the recipe", tr, d)
		}
	}
	pycaR, err := recipe.Load(filepath.Join(testfixture.RepoRoot(), pycaRecipe))
	if err != nil {
		t.Fatal(err)
	}
	for _, pj := range pycaInfra.Jobs {
		j := w.Jobs[pj.ID]
		if there, d := get("job `" + pj.ID + "`"); !strings.Contains(there, "`"+pj.Name+"`") || !strings.Contains(there, "`"+pj.RunsOn+"`") || !strings.HasPrefix(d, "the same job") {
			t.Errorf("side by side: job %s: %q, %q", pj.ID, there, d)
		}
		for _, k := range []string{"NAME", "ARTIFACT_NAME", "CFLAGS", "OPENSSLDIR"} {
			if len(pj.Matrix) == 0 {
				break
			}
			there, d := get("input `matrix.ARCH." + k + "`")
			for _, row := range pj.Matrix {
				if !strings.Contains(there, "`"+row[k]+"`") {
					t.Errorf("side by side: input %s does not give pyca's %q: %q", k, row[k], there)
				}
			}
			_, inMatrix := j.Strategy.Matrix["ARCH"][0][k]
			switch {
			case strings.HasPrefix(d, "the same") && inMatrix:
			case strings.HasPrefix(d, "in the recipe") && !inMatrix:
				// The recipe gives what pyca's matrix gave, per architecture.
				for _, row := range pj.Matrix {
					target, err := pycaR.Target(row["NAME"])
					if err != nil {
						t.Fatal(err)
					}
					got := target.OpenSSLDir
					if k == "CFLAGS" {
						got = strings.Join(append([]string{"-mmacosx-version-min=" + target.MinOS}, slices.DeleteFunc(slices.Clone(target.Flags), func(f string) bool { return strings.HasPrefix(f, "-mmacosx-version-min=") })...), " ")
					}
					if got != row[k] {
						t.Errorf("side by side: %s of %s is %q in %s, pyca's %q", k, row["NAME"], got, pycaRecipe, row[k])
					}
				}
			default:
				t.Errorf("side by side: input %s: the drop-in %q, and its matrix has it: %v", k, d, inMatrix)
			}
		}
		for _, st := range pj.Steps {
			_, d := get("step `" + st + "` (" + pj.ID + ")")
			if strings.Contains(st, "@") {
				if !strings.HasPrefix(d, "the same step, the same pin") || !slices.ContainsFunc(j.Steps, func(s actionStep) bool { return s.Uses == st }) {
					t.Errorf("side by side: step %s of %s: %q", st, pj.ID, d)
				}
				continue
			}
			// A run: step of pyca's is osslbuild's action's.
			if !strings.HasPrefix(d, "`"+osslbuildUses+"`") || !slices.ContainsFunc(j.Steps, func(s actionStep) bool { return s.Uses == osslbuildUses }) {
				t.Errorf("side by side: step %s of %s: %q, want osslbuild's action, which the job uses", st, pj.ID, d)
			}
		}
	}
	for _, a := range pycaInfra.Artifacts {
		if there, d := get("artifact `" + a + "`"); there != "on every run" || d != "on every run" {
			t.Errorf("side by side: artifact %s: %q, %q", a, there, d)
		}
	}
	if there, d := get("layout `openssl-macos-universal2`"); !strings.Contains(there, "an empty `bin/`") || !strings.Contains(there, "no `lib/cmake`") ||
		!strings.Contains(d, "no `bin/`") || !strings.Contains(d, "`lib/cmake/OpenSSL/`") {
		t.Errorf("side by side: universal2's layout %q, %q", there, d)
	}
}

// layoutClaims are what the side-by-side table says the drop-in's
// artifact of kind ("universal2", else a slice) holds at its root and in
// lib/ (present), and does not hold (absent, "no X"): paths relative to
// the artifact, a directory ending in /.
func layoutClaims(t testing.TB, universal2 bool) (present, absent []string) {
	t.Helper()
	key := "layout `openssl-macos-x86-64`, `openssl-macos-arm64`"
	if universal2 {
		key = "layout `openssl-macos-universal2`"
	}
	for _, r := range docRows(t, sideBySideHeader) {
		if len(r) != 3 || r[0] != key {
			continue
		}
		for _, part := range strings.Split(r[2], ";") {
			part = strings.TrimSpace(part)
			lib := strings.HasPrefix(part, "`lib/` with")
			for _, m := range backquotedRe.FindAllStringSubmatch(part, -1) {
				p := m[1]
				switch {
				case lib && p == "lib/":
					continue
				case lib && !strings.HasPrefix(p, "lib/"):
					p = "lib/" + p
				}
				if strings.HasPrefix(part, "no ") {
					absent = append(absent, p)
				} else if strings.Contains(p, "/") || strings.Contains(p, ".") {
					present = append(present, p)
				}
			}
		}
		return present, absent
	}
	t.Fatalf("%s: no side-by-side row %s", docPath, key)
	return nil, nil
}

// checkTokenTable holds the page's table of OPENSSL_BUILD_FLAGS tokens to
// what the macOS build does with each: refused, saying exactly what the
// last column says to write instead; pyca's own flags pass; and the
// refusal the page quotes is the one the build prints.
func checkTokenTable(t *testing.T) {
	rows := docRows(t, "| token | Linux and Windows (Configure) | the macOS build | write instead |")
	if len(rows) < 10 {
		t.Fatalf("the token table has %d rows", len(rows))
	}
	for _, r := range rows {
		if len(r) != 4 {
			t.Errorf("token table: row %q has %d cells, want 4", r, len(r))
			continue
		}
		tokens, _, _ := strings.Cut(r[0], " (")
		for _, m := range backquotedRe.FindAllStringSubmatch(tokens, -1) {
			tok := m[1]
			why, instead, refused := recipe.OptionAdvice(tok)
			if !refused || !strings.HasPrefix(r[2], "refused") {
				t.Errorf("token %q: the table says %q; osslbuild refuses it: %v (%s)", tok, r[2], refused, why)
				continue
			}
			if plain(r[3]) != instead {
				t.Errorf("token %q: the table says to write instead\n  %q\nosslbuild says\n  %q", tok, plain(r[3]), instead)
			}
		}
	}
	if _, err := recipe.ParseOptions(pycaFlags); err != nil {
		t.Errorf("pyca's own flags: %v", err)
	}
	_, err := recipe.ParseOptions("no-zlib -O0")
	if err == nil {
		t.Fatal("-O0 accepted")
	}
	doc := strings.Join(strings.Fields(plain(string(mustReadDoc(t)))), " ")
	if quoted := "A refusal, as the action prints it for openssl-options: no-zlib -O0: -options: " + err.Error() + "."; !strings.Contains(doc, quoted) {
		t.Errorf("%s does not quote the refusal as the build prints it:\n%s", docPath, quoted)
	}
}
