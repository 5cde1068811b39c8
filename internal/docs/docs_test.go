package docs

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// pages are README.md and every page under docs/, relative to the root.
func pages(t *testing.T) []string {
	t.Helper()
	root := testfixture.RepoRoot()
	out := []string{"README.md"}
	ents, err := os.ReadDir(filepath.Join(root, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".md") {
			out = append(out, "docs/"+e.Name())
		}
	}
	return out
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// block is a fenced code block of a page.
type block struct {
	page, lang string
	line       int // of the opening fence
	lines      []string
}

func blocks(t *testing.T, page string) []block {
	t.Helper()
	var out []block
	var cur *block
	for i, l := range strings.Split(read(t, page), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &block{page: page, lang: strings.TrimPrefix(l, "```"), line: i + 1}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
	}
	if cur != nil {
		t.Errorf("%s:%d: a code block is not closed", page, cur.line)
	}
	return out
}

// TestFrontDoor: README.md is short, and a newcomer finds the two commands
// on its first screen: the main job and the tests, the test command being
// the one .ci/run runs.
func TestFrontDoor(t *testing.T) {
	readme := read(t, "README.md")
	if len(readme) >= 8000 {
		t.Errorf("README.md is %d characters; the front door stays under 8000 (reference goes to docs/)", len(readme))
	}
	lines := strings.Split(readme, "\n")
	screen := strings.Join(lines[:min(len(lines), 45)], "\n")
	for _, want := range []string{"## Two commands on a fresh machine", "go tool mage build:universal2", "./scripts/setup.sh", "./scripts/build-universal2.sh", "./.ci/run"} {
		if !strings.Contains(screen, want) {
			t.Errorf("README.md's first screen (45 lines) lacks %q", want)
		}
	}
	ci := read(t, ".ci/run")
	m := regexp.MustCompile(`(?m)^(go test [^\n]*)$`).FindStringSubmatch(ci)
	if m == nil {
		t.Fatal(".ci/run runs no go test line")
	}
	if !strings.Contains(screen, m[1]) {
		t.Errorf("README.md's first screen does not show the test command .ci/run runs: %q", m[1])
	}
	// The fixture step runs first, on the screen as in .ci/run.
	step := regexp.MustCompile(`(?m)^(go run ./internal/testsupport/cmd/fixtures)$`).FindStringIndex(ci)
	if step == nil || step[0] > strings.Index(ci, m[1]) {
		t.Error(".ci/run does not run the fixture step (go run ./internal/testsupport/cmd/fixtures) before its go test line")
	} else if i := strings.Index(screen, "go run ./internal/testsupport/cmd/fixtures"); i < 0 || i > strings.Index(screen, m[1]) {
		t.Error("README.md's first screen does not show the fixture step before the test command")
	}
	if !strings.Contains(ci, "./scripts/setup.sh") {
		t.Error(".ci/run does not prepare the machine with ./scripts/setup.sh, as README.md says")
	}
	// The main job's one command prepares the machine for a build and
	// runs build:universal2, with no variable for the newcomer to set.
	main := read(t, "scripts/build-universal2.sh")
	for _, want := range []string{"./scripts/setup.sh --build", "go tool mage build:universal2"} {
		if !strings.Contains(main, want) {
			t.Errorf("scripts/build-universal2.sh does not run %q", want)
		}
	}
}

var linkRe = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinks: every relative link of every page names a file of the
// repository, and an anchor a heading of the page it points into.
func TestLinks(t *testing.T) {
	root := testfixture.RepoRoot()
	for _, page := range pages(t) {
		for _, m := range linkRe.FindAllStringSubmatch(read(t, page), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
				t.Errorf("%s: link %s: %s does not exist", page, target, dest)
				continue
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !slices.Contains(anchors(t, dest), anchor) {
				t.Errorf("%s: link %s: %s has no heading #%s", page, target, dest, anchor)
			}
		}
	}
}

// anchors are GitHub's anchors of a page's headings.
func anchors(t *testing.T, page string) []string {
	var out []string
	for _, l := range strings.Split(read(t, page), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		out = append(out, b.String())
	}
	return out
}

// target is a Mage target as the magefile declares it.
type target struct {
	positional int
	flags      []string
}

// magefileTargets reads magefile.go: each target's name as Mage spells it
// (namespace:method, first letter lower case), its positional arguments
// and its flags (pointer parameters), and the aliases.
func magefileTargets(t *testing.T) map[string]target {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(testfixture.RepoRoot(), "magefile.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	lower := func(s string) string { return strings.ToLower(s[:1]) + s[1:] }
	out := map[string]target{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !fn.Name.IsExported() {
			continue
		}
		name := lower(fn.Name.Name)
		if fn.Recv != nil {
			id, ok := fn.Recv.List[0].Type.(*ast.Ident)
			if !ok {
				continue
			}
			name = strings.ToLower(id.Name) + ":" + name
		}
		var tg target
		for _, p := range fn.Type.Params.List {
			if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
				continue
			}
			_, ptr := p.Type.(*ast.StarExpr)
			for _, n := range p.Names {
				if ptr {
					tg.flags = append(tg.flags, n.Name)
				} else {
					tg.positional++
				}
			}
		}
		out[name] = tg
	}
	// var Aliases = map[string]any{"build:linux-x86_64": Build.LinuxX86_64}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "Aliases" {
			return true
		}
		for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
			kv := e.(*ast.KeyValueExpr)
			alias := strings.Trim(kv.Key.(*ast.BasicLit).Value, `"`)
			sel := kv.Value.(*ast.SelectorExpr)
			out[alias] = out[strings.ToLower(sel.X.(*ast.Ident).Name)+":"+lower(sel.Sel.Name)]
		}
		return false
	})
	return out
}

// words splits a shell command line: quotes group, # starts a comment.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == '#' && !in:
			return out
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

var envWord = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// checkMage holds one `go tool mage` command line to the magefile: a
// target it has, its positional arguments first, then flags it takes.
func checkMage(targets map[string]target, line string) error {
	w := words(line)
	for len(w) > 0 && envWord.MatchString(w[0]) {
		w = w[1:]
	}
	if len(w) < 3 || w[0] != "go" || w[1] != "tool" || w[2] != "mage" {
		return nil
	}
	w = w[3:]
	if len(w) == 0 {
		return fmt.Errorf("no target")
	}
	if w[0] == "-l" || w[0] == "-h" {
		return nil
	}
	tg, ok := targets[w[0]]
	if !ok {
		return fmt.Errorf("target %s is not in magefile.go", w[0])
	}
	positional, flagsSeen := 0, false
	for _, a := range w[1:] {
		if strings.HasPrefix(a, "-") {
			flagsSeen = true
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
			if !slices.Contains(tg.flags, name) {
				return fmt.Errorf("%s has no flag -%s (it has %s)", w[0], name, strings.Join(tg.flags, ", "))
			}
			continue
		}
		if flagsSeen {
			return fmt.Errorf("%s: argument %q after a flag; Mage wants positional arguments first", w[0], a)
		}
		positional++
	}
	if positional != tg.positional {
		return fmt.Errorf("%s takes %d positional arguments, the line gives %d", w[0], tg.positional, positional)
	}
	return nil
}

// TestCommandsParse: every `go tool mage` line any page shows, in a
// command block or a transcript, names a target the magefile has, with
// its arguments and flags; a flag renamed in magefile.go fails here.
// Commands in sh blocks are not run (they build, need a Mac or the
// network); this is the check they get.
func TestCommandsParse(t *testing.T) {
	targets := magefileTargets(t)
	if _, ok := targets["build:arm64"]; !ok {
		t.Fatalf("magefile.go read as %v", targets)
	}
	n := 0
	for _, page := range pages(t) {
		for _, b := range blocks(t, page) {
			for i, l := range b.lines {
				l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
				if !strings.Contains(l, "go tool mage") {
					continue
				}
				n++
				if err := checkMage(targets, l); err != nil {
					t.Errorf("%s:%d: %q: %v", page, b.line+1+i, l, err)
				} else if b.lang != "console" {
					t.Logf("%s:%d: parsed, not run (it builds, or needs a Mac, a release or the network): %s", page, b.line+1+i, l)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d go tool mage commands in the pages; the reader is bound to see more", n)
	}
	// The check itself fails on what it must.
	for _, bad := range []string{"go tool mage build:arm64 -versoin=3.5.7", "go tool mage build:arm65", "go tool mage check -minopt=3 path", "go tool mage recipe:bump"} {
		if checkMage(targets, bad) == nil {
			t.Errorf("checkMage accepted %q", bad)
		}
	}
}

// osslcheckFlags are the flags cmd/osslcheck defines.
func osslcheckFlags(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(`fs\.(?:String|Bool|Int|Duration|Var|Func|BoolFunc)\("([a-z0-9-]+)"`).FindAllStringSubmatch(read(t, "cmd/osslcheck/main.go"), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestOsslcheckFlagsParse: every flag an osslcheck command on a page
// passes is one cmd/osslcheck defines.
func TestOsslcheckFlagsParse(t *testing.T) {
	flags := osslcheckFlags(t)
	if !slices.Contains(flags, "minopt") {
		t.Fatalf("cmd/osslcheck read as defining %v", flags)
	}
	n := 0
	for _, page := range pages(t) {
		for _, b := range blocks(t, page) {
			for i, l := range b.lines {
				// The command itself: the word naming osslcheck and what follows.
				for _, seg := range strings.Split(l, "&&") {
					w := words(strings.ReplaceAll(seg, `"`, " "))
					at := slices.IndexFunc(w, func(s string) bool {
						return strings.Contains(s, "osslcheck") && !strings.HasPrefix(s, "-") && !strings.Contains(s, "releases/download") && w[0] != "curl" && w[0] != "chmod" && w[0] != "gh" && (len(w) < 2 || w[1] != "install")
					})
					if at < 0 || (at > 0 && w[at-1] == "-o") {
						continue
					}
					n++
					for _, a := range w[at+1:] {
						if a == "--" {
							break // every argument after it is a path
						}
						if !strings.HasPrefix(a, "-") {
							continue
						}
						name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
						if !slices.Contains(flags, name) {
							t.Errorf("%s:%d: osslcheck has no flag -%s (it has %s)", page, b.line+1+i, name, strings.Join(flags, ", "))
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Error("no osslcheck command found in the pages")
	}
}

// TestTranscripts runs every ```console block: each "$ command" in the
// repository root (with bash), its output compared line by line with the
// lines that follow it ("..." stands for any lines). A message changed in
// the code and not on the page fails here.
func TestTranscripts(t *testing.T) {
	// The pages' transcripts are of the Linux machine's runs (the cross
	// toolchain, its paths).
	testfixture.Declare(t, testfixture.TierGate, "the magefile, compiled and run", testfixture.LinuxCross)
	n := 0
	for _, page := range pages(t) {
		for _, b := range blocks(t, page) {
			if b.lang != "console" {
				continue
			}
			var cmd string
			var want []string
			flush := func() {
				if cmd == "" {
					return
				}
				n++
				run(t, fmt.Sprintf("%s:%d", page, b.line), cmd, want)
			}
			for _, l := range b.lines {
				if c, ok := strings.CutPrefix(l, "$ "); ok {
					flush()
					cmd, want = c, nil
					continue
				}
				want = append(want, l)
			}
			flush()
		}
	}
	if n == 0 {
		t.Error("no transcript found")
	}
}

func run(t *testing.T, where, cmd string, want []string) {
	t.Helper()
	c := exec.Command("bash", "-c", cmd)
	c.Dir = testfixture.RepoRoot()
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GITHUB_") && !strings.HasPrefix(e, "OSSLBUILD_RECIPE=") {
			env = append(env, e)
		}
	}
	c.Env = env
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	_ = c.Run() // a transcript may show a failure; its output is what counts
	got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if !matchLines(got, want) {
		t.Errorf("%s: $ %s\nthe page shows:\n%s\nit prints:\n%s", where, cmd, strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}

// matchLines compares output with a transcript's lines, right-trimmed;
// a "..." line matches any number of lines.
func matchLines(got, want []string) bool {
	if len(want) == 0 {
		return len(got) == 0 || (len(got) == 1 && got[0] == "")
	}
	if strings.TrimSpace(want[0]) == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(got[i:], want[1:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && strings.TrimRight(got[0], " \t") == strings.TrimRight(want[0], " \t") && matchLines(got[1:], want[1:])
}

func TestMatchLines(t *testing.T) {
	for _, tt := range []struct {
		got, want []string
		ok        bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "b"}, []string{"a", "c"}, false},
		{[]string{"a", "x", "y", "b"}, []string{"a", "...", "b"}, true},
		{[]string{"a"}, []string{"a", "b"}, false},
		{[]string{"a", "b"}, []string{"a"}, false},
	} {
		if matchLines(tt.got, tt.want) != tt.ok {
			t.Errorf("matchLines(%q, %q) != %v", tt.got, tt.want, tt.ok)
		}
	}
}

// TestPackageMap: docs/architecture.md's map names every package of the
// module (as `dir` or as (`sub`) of its parent's row), so where each idea
// lives cannot fall behind the tree.
func TestPackageMap(t *testing.T) {
	page := read(t, "docs/architecture.md")
	root := testfixture.RepoRoot()
	list := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(out))); n < 30 {
		t.Fatalf("go list found %d packages", n)
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			continue
		}
		parent, base := filepath.ToSlash(filepath.Dir(rel)), filepath.Base(rel)
		named := strings.Contains(page, "`"+rel+"`") || strings.Contains(page, "`"+rel+"/`") ||
			((strings.Contains(page, "`"+parent+"`") || strings.Contains(page, "`"+parent+"/`")) && strings.Contains(page, "`"+base+"`"))
		if !named {
			t.Errorf("docs/architecture.md's package map does not name %s", rel)
		}
	}
}
