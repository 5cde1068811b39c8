// Package csource reads an OpenSSL release's sources as text: the files a
// scan reads (the directories no library is built from left out) and the
// macros their preprocessor conditionals test. Package dispatch scans the
// C files it walks; package recipe holds a recipe's defines to the tests.
package csource

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

// Walk calls fn with every regular file of tree whose name ends in one of
// suffixes, in lexical order, outside the directories no library is built
// from (the openssl program, tests, fuzzers, demos, documentation).
func Walk(tree fs.FS, suffixes []string, fn func(path string, r io.Reader) error) error {
	return fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && slices.Contains([]string{"apps", "test", "fuzz", "demos", "doc", ".git"}, d.Name()) {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() || !slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(p, s) }) {
			return nil
		}
		f, err := tree.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := fn(p, f); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return nil
	})
}

// Test is a conditional directive that tests a macro.
type Test struct {
	File string // in the source tree, "crypto/bn/bn_div.c"
	Line int
	Text string // the directive, its continuation lines joined, comments removed
	// Default: the test only gives the macro a default value ("#ifndef N",
	// "#define N value", "#endif"), so a define sets a parameter rather
	// than choosing code.
	Default bool
}

// Where is "file:line".
func (t Test) Where() string { return fmt.Sprintf("%s:%d", t.File, t.Line) }

// CondSuffixes are the files whose conditionals choose what a library
// compiles: C and its headers (".h.in" are templates of public headers),
// the assembly, and the perl that writes the assembly (its directives
// reach the preprocessor with the build's defines).
var CondSuffixes = []string{".c", ".h", ".inc", ".h.in", ".S", ".s", ".pl"}

var (
	conditional = regexp.MustCompile(`^#\s*(ifdef|ifndef|if|elifdef|elifndef|elif)\b(.*)$`)
	identifier  = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]*`)
	notDefined  = regexp.MustCompile(`^!\s*defined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|\s([A-Za-z_]\w*))$`)
	define      = regexp.MustCompile(`^#\s*define\s+([A-Za-z_]\w*)(\(?)`)
	endif       = regexp.MustCompile(`^#\s*endif\b`)
	comments    = regexp.MustCompile(`/\*.*?\*/|//.*$`)
)

// Tests lists, for each of names, the conditionals of tree's files (see
// CondSuffixes) that test it, in file order.
func Tests(tree fs.FS, names ...string) (map[string][]Test, error) {
	out := map[string][]Test{}
	err := Walk(tree, CondSuffixes, func(p string, r io.Reader) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		// A file that never spells a name cannot test it (a directive is
		// its lines joined by spaces, comments dropped), and most files
		// spell none: skipping them before the line scan takes a scan of
		// 4.0.2 from 390 to 145 ms (BenchmarkTestsRelease).
		if !slices.ContainsFunc(names, func(n string) bool { return bytes.Contains(b, []byte(n)) }) {
			return nil
		}
		ls, err := directives(bytes.NewReader(b), !strings.HasSuffix(p, ".pl"))
		if err != nil {
			return err
		}
		for i, l := range ls {
			m := conditional.FindStringSubmatch(l.text)
			if m == nil {
				continue
			}
			expr := strings.TrimSpace(m[2])
			for _, id := range identifier.FindAllString(expr, -1) {
				if id != "defined" && slices.Contains(names, id) {
					out[id] = append(out[id], Test{File: p, Line: l.n, Text: strings.Join(strings.Fields(l.text), " "), Default: isDefault(ls, i, m[1], expr)})
				}
			}
		}
		return nil
	})
	return out, err
}

// isDefault reports whether the conditional ls[i] ("#kind expr") is a
// default's guard: #ifndef N (or #if !defined(N)), then #define N as an
// object-like macro, then #endif, with nothing else between. A
// function-like N is code, not a parameter.
func isDefault(ls []line, i int, kind, expr string) bool {
	name := ""
	switch kind {
	case "ifndef":
		name = expr
	case "if":
		if m := notDefined.FindStringSubmatch(expr); m != nil {
			name = m[1] + m[2]
		}
	}
	if name == "" || i+2 >= len(ls) {
		return false
	}
	d := define.FindStringSubmatch(ls[i+1].text)
	return d != nil && d[1] == name && d[2] == "" && endif.MatchString(ls[i+2].text)
}

// line is a logical source line: continuations joined, comments on it
// removed, numbered by its first physical line.
type line struct {
	n    int
	text string
}

// directives returns the non-blank logical lines of r. With indent,
// leading blanks are dropped, as the C preprocessor allows before "#"; in
// perl a "#" after blanks is a comment, while its here-documents write
// their directives at the line's start.
func directives(r io.Reader, indent bool) ([]line, error) {
	var out []line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		start, s := n, sc.Text()
		for strings.HasSuffix(s, "\\") && sc.Scan() {
			n++
			s = strings.TrimSuffix(s, "\\") + " " + sc.Text()
		}
		if indent {
			s = strings.TrimLeft(s, " \t")
		}
		s = comments.ReplaceAllString(s, "")
		s, _, _ = strings.Cut(s, "/*") // a comment that goes on below: the directive ends here
		if s = strings.TrimRight(s, " \t\r"); s != "" {
			out = append(out, line{start, s})
		}
	}
	return out, sc.Err()
}
