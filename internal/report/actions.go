package report

import (
	"fmt"
	"io"
	"strings"
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

// Notice writes `::notice file=...,title=...::message`.
func Notice(w io.Writer, a Annotation) error { return command(w, "notice", a) }

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
// (actions/toolkit escapeData): % first, then CR and LF.
func EscapeData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// EscapeProperty escapes a property value (escapeProperty): as EscapeData,
// plus ":" and "," which would end the value.
func EscapeProperty(s string) string {
	s = EscapeData(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
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
