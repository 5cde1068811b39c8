package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// Annotation is a GitHub Actions workflow-command annotation.
type Annotation struct {
	File  string // path relative to the workspace, shown on the file in the PR
	Line  int    // 0: none
	Title string
	Msg   string
}

// Error writes `::error file=...,title=...::message`.
func Error(w io.Writer, a Annotation) error { return command(w, "error", a) }

// Warning writes `::warning file=...,title=...::message`.
func Warning(w io.Writer, a Annotation) error { return command(w, "warning", a) }

func command(w io.Writer, kind string, a Annotation) error {
	var props []string
	if a.File != "" {
		props = append(props, "file="+EscapeProperty(a.File))
	}
	if a.Line > 0 {
		props = append(props, fmt.Sprintf("line=%d", a.Line))
	}
	if a.Title != "" {
		props = append(props, "title="+EscapeProperty(a.Title))
	}
	s := "::" + kind
	if len(props) > 0 {
		s += " " + strings.Join(props, ",")
	}
	_, err := fmt.Fprintf(w, "%s::%s\n", s, EscapeData(a.Msg))
	return err
}

// EscapeData escapes a workflow command's message as the runner expects
// (actions/toolkit escapeData): %, CR and LF, in one pass (so the % of an
// escape is not escaped again).
func EscapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// EscapeProperty escapes a property value (escapeProperty): as EscapeData,
// plus ":" and "," which would end the value.
func EscapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// Group wraps fn's output in ::group::title / ::endgroup:: when in GitHub
// Actions, so long logs fold; elsewhere it prints "== title ==". The group
// is closed whatever fn returns.
func Group(w io.Writer, env Env, title string, fn func() error) error {
	if InActions(env) {
		fmt.Fprintf(w, "::group::%s\n", EscapeData(title))
		defer fmt.Fprintln(w, "::endgroup::")
	} else {
		fmt.Fprintf(w, "== %s ==\n", title)
	}
	return fn()
}

// SafeText makes text that may hold file names safe to print as one log
// line. Outside GitHub Actions, control characters become "?", so a
// hostile name cannot move the cursor or start a line. In GitHub Actions,
// CR and LF are escaped as %0D and %0A (the text stays one line and says
// what it held), other control characters become "?", and the openers of
// workflow commands are broken: "::" starting the line (after blanks, as
// the runner trims them) becomes "%3A:", and "##[" (the runner's legacy
// prefix, honoured anywhere in a line) becomes "##%5B". A file named
// "a\n::warning::x" then prints as text and issues no command.
func SafeText(env Env, s string) string {
	if !InActions(env) {
		return Printable(s)
	}
	s = strings.NewReplacer("\r", "%0D", "\n", "%0A").Replace(s)
	return neutralise(Printable(s))
}

// neutralise breaks the workflow-command openers in one line.
func neutralise(line string) string {
	line = strings.ReplaceAll(line, "##[", "##%5B")
	rest := strings.TrimLeftFunc(line, unicode.IsSpace)
	if strings.HasPrefix(rest, "::") {
		i := len(line) - len(rest)
		line = line[:i] + "%3A" + line[i+1:]
	}
	return line
}

// SafeOutput makes a report already made of printable lines (Table and
// friends replace control characters) safe under GitHub Actions: each line
// is neutralised as SafeText does. For JSON, whose lines start with a
// blank, a quote or a bracket, only "##[" can occur, inside a string; it
// becomes "##\u005b", the same JSON. Outside GitHub Actions out is
// returned as is.
func SafeOutput(env Env, out []byte, json bool) []byte {
	if !InActions(env) {
		return out
	}
	if json {
		return bytes.ReplaceAll(out, []byte("##["), []byte(`##\u005b`))
	}
	lines := strings.SplitAfter(string(out), "\n")
	for i, l := range lines {
		lines[i] = neutralise(l)
	}
	return []byte(strings.Join(lines, ""))
}
