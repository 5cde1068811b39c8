package report

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync"
)

// LogWriter is the one writer every target's log reaches the terminal or
// the GitHub Actions log through. Each Write is one record, one line with
// or without its newline, as the targets write them (Fprintf with one
// "\n" at the end). Under GitHub Actions the record is made SafeText: a
// CR or LF inside it (from a file name, an archive member, a directory
// given) is escaped rather than starting a line, and a record that begins
// like a workflow command is broken; elsewhere control characters become
// "?". The workflow commands osslbuild means to issue (annotations, log
// groups) are written by their own functions, not through it.
type LogWriter struct {
	W   io.Writer
	Env Env // nil: the process environment

	mu sync.Mutex // two slices log at once
}

func (l *LogWriter) Write(p []byte) (int, error) {
	s, nl := strings.CutSuffix(string(p), "\n")
	out := SafeText(l.Env, s)
	if nl {
		out += "\n"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := io.WriteString(l.W, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Stdout is a LogWriter on standard output, for the targets.
func Stdout() io.Writer { return stdout }

var stdout = &LogWriter{W: os.Stdout}

// SafeError makes err's text, which mage prints as "Error: ...", safe to
// log as SafeText does, keeping err for errors.Is and As and its exit
// status (mage reads an ExitStatus method on the error itself).
func SafeError(env Env, err error) error {
	if err == nil {
		return nil
	}
	var already *safeError
	if errors.As(err, &already) {
		return err
	}
	return &safeError{msg: SafeText(env, err.Error()), err: err}
}

type safeError struct {
	msg string
	err error
}

func (e *safeError) Error() string { return e.msg }
func (e *safeError) Unwrap() error { return e.err }

// ExitStatus is the wrapped error's exit status, 1 when it has none.
func (e *safeError) ExitStatus() int {
	var c interface{ ExitStatus() int }
	if errors.As(e.err, &c) {
		return c.ExitStatus()
	}
	return 1
}
