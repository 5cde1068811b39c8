package scripttest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestExits: exits passes on the status it wants, and fails a script on
// another status or a program that cannot start, saying which.
func TestExits(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		fail         string // in the failing script's log; "" for a pass
	}{
		{"status 0", "exits 0 sh -c 'echo out; echo err >&2'\nstdout '^out$'\nstderr '^err$'", ""},
		{"status 3", "exits 3 sh -c 'exit 3'", ""},
		{"status 1, want 2", "exits 2 sh -c 'exit 1'", "sh exited 1, want 2"},
		{"status 0, want 1", "exits 1 true", "true exited 0, want 1"},
		{"no such program", "exits 0 no-such-program-here", "no-such-program-here: "},
		{"not a number", "exits two true", `exits "two": want an exit status, a number`},
		{"negated", "! exits 1 false", "usage: exits CODE PROG [ARGS...]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "s.txtar"), []byte(tc.script+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ft := &fakeT{}
			func() {
				defer func() {
					if r := recover(); r != nil && r != errAbort {
						panic(r)
					}
				}()
				testscript.RunT(ft, params(testscript.Params{Dir: dir}))
			}()
			switch {
			case tc.fail == "" && ft.failed:
				t.Errorf("failed:\n%s", ft.log.String())
			case tc.fail != "" && !ft.failed:
				t.Errorf("passed, want a failure saying %q:\n%s", tc.fail, ft.log.String())
			case tc.fail != "" && !strings.Contains(ft.log.String(), tc.fail):
				t.Errorf("log lacks %q:\n%s", tc.fail, ft.log.String())
			}
		})
	}
}

// fakeT runs a script in this goroutine and records its log and failure
// (testscript.RunT's T, as testscript's own tests fake it).
type fakeT struct {
	log    strings.Builder
	failed bool
}

var errAbort = errors.New("abort the script")

func (t *fakeT) Skip(args ...any)  { panic(errAbort) }
func (t *fakeT) Fatal(args ...any) { t.Log(args...); t.FailNow() }
func (t *fakeT) Parallel()         {}
func (t *fakeT) Log(args ...any)   { fmt.Fprint(&t.log, args...) }
func (t *fakeT) FailNow()          { t.failed = true; panic(errAbort) }
func (t *fakeT) Verbose() bool     { return false }
func (t *fakeT) Run(name string, f func(testscript.T)) {
	defer func() {
		if r := recover(); r != nil && r != errAbort {
			panic(r)
		}
	}()
	f(t)
}
