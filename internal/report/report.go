// Package report renders results for people and machines: an aligned text
// table, a Markdown table for the GitHub Actions step summary, workflow
// commands (::group::, ::error::) and JSON. It knows nothing about OpenSSL
// or about how results were found; the check target and the build targets
// fill its Rows.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Row is one line of a summary: one architecture slice of one artifact.
type Row struct {
	// Group is the archive (a wheel, a tarball) Artifact is a member of,
	// named once in a heading above its rows in the text table; "" for a
	// file of its own.
	Group    string
	Artifact string // the file, or the member's path inside Group
	Arch     string
	Version  string // OpenSSL version, e.g. "4.0.2"
	MinOS    string // deployment target, "" when not Mach-O
	Opt      string // effective optimisation, e.g. "-O3"
	Code     string // what the machine code says, e.g. "optimised 0.02/2674" (score/functions); "" when not measured
	ISA      string // the level compiled code uses, e.g. "core2", "apple-m1" or "x86-64-v3 (dispatched)"; "" when not measured
	Compiler string // the "compiler:" line without its prefix
	Digest   string // sha256 of the artifact, "" when not computed
	Status   string // "ok", or the failure in a few words
	// Advisories are the published advisories affecting Version, in a
	// few words ("12 (high), fix 3.0.21"); the column is shown when any
	// row has one.
	Advisories string
}

// anyAdvisories reports whether a row fills the advisories column.
func anyAdvisories(rows []Row) bool {
	return slices.ContainsFunc(rows, func(r Row) bool { return r.Advisories != "" })
}

// cell makes a table cell: printable, one line, "-" when empty.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(Printable(s), "\t", " ")
}

// Printable replaces control characters (a hostile member name could carry
// terminal escape sequences or newlines) with "?", which keeps columns
// aligned where U+FFFD might not be one cell wide.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\t' || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
}

// Truncate cuts s to n runes, ending with "…" when cut.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Markdown writes rows as a GitHub-flavoured Markdown table under a level-3
// heading, compiler lines in full and in code spans.
func Markdown(w io.Writer, title string, rows []Row) error {
	var b strings.Builder
	if title != "" {
		fmt.Fprintf(&b, "### %s\n\n", mdText(title))
	}
	heads := []string{"artifact", "arch", "version", "minos", "opt", "code", "isa", "status", "compiler", "sha256"}
	adv := anyAdvisories(rows)
	if adv {
		heads = slices.Insert(heads, 8, "advisories")
	}
	b.WriteString("| " + strings.Join(heads, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(heads)) + "|\n")
	for _, r := range rows {
		name := r.Artifact
		if r.Group != "" {
			name = r.Group + "(" + r.Artifact + ")"
		}
		cells := []string{mdText(name), mdText(r.Arch), mdText(r.Version), mdText(r.MinOS), mdText(r.Opt), mdText(r.Code), mdText(r.ISA),
			mdText(r.Status), mdCode(r.Compiler), mdCode(r.Digest)}
		if adv {
			cells = slices.Insert(cells, 8, mdText(r.Advisories))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// mdText escapes a table cell: pipes would split it, newlines end the row,
// and Markdown/HTML punctuation would be interpreted.
func mdText(s string) string {
	if s == "" {
		return "-"
	}
	var b strings.Builder
	for _, r := range Printable(s) {
		switch r {
		case '|', '\\', '`', '*', '_', '[', ']', '<', '>', '#', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode puts s in a code span; inside one only "|" needs escaping in a
// table, and a backtick in s gets a longer fence.
func mdCode(s string) string {
	if s == "" {
		return "-"
	}
	s = strings.ReplaceAll(strings.ReplaceAll(Printable(s), "\t", " "), "|", `\|`)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
}

// Env reads the environment; tests pass a map's lookup.
type Env func(string) string

func (e Env) get(k string) string {
	if e == nil {
		return os.Getenv(k)
	}
	return e(k)
}

// InActions reports whether this is a GitHub Actions run (GITHUB_ACTIONS=true).
func InActions(env Env) bool { return env.get("GITHUB_ACTIONS") == "true" }

// SummaryEnabled reports whether AppendSummary will write: whether
// GITHUB_STEP_SUMMARY names a file.
func SummaryEnabled(env Env) bool { return env.get("GITHUB_STEP_SUMMARY") != "" }

// AppendSummary appends the Markdown table to the file named by
// GITHUB_STEP_SUMMARY, then each footer line as a paragraph. It does
// nothing when the variable is unset.
func AppendSummary(env Env, title string, rows []Row, footer ...string) error {
	path := env.get("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("step summary: %w", err)
	}
	err = Markdown(f, title, rows)
	for _, line := range footer {
		if err == nil {
			_, err = fmt.Fprintf(f, "%s\n\n", mdText(line))
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("step summary %s: %w", path, err)
	}
	return nil
}

// JSON writes v indented, with a final newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
