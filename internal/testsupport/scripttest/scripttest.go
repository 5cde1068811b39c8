// Package scripttest runs the project's CLI transcripts, testscript
// scripts (testdata/script/*.txtar, in the style of age's cmd/age/testdata),
// with the commands every such script may use beside testscript's own:
//
//	exits CODE PROG [ARGS...]   runs PROG as exec does (stdout and stderr
//	                            for the next stdout/stderr lines) and
//	                            wants exit status CODE: exec and ! exec
//	                            cannot tell a usage error (2) from a
//	                            failed check (1)
//	tools NAME...               declares the external tools the script
//	                            needs, as testfixture.Tools does for a Go
//	                            test: the script is then in the gate tier
//	                            (it skips in -short, naming the tier), and
//	                            one that needs clang-14 runs on linux-cross
//
// A script is in a tier by what it uses, as a Go test is: one that declares
// nothing (and whose package's TestScript declares nothing) runs in -short.
package scripttest

import (
	"errors"
	"maps"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// tKey holds a script's own *testing.T (as testing.TB) in its Values.
type tKey struct{}

// Run runs the scripts of p.Dir as subtests of t (TestScript/NAME for
// NAME.txtar), with Cmds added to p.Cmds.
func Run(t *testing.T, p testscript.Params) {
	t.Helper()
	testscript.Run(t, params(p))
}

// params is p with Cmds added, and each script's test kept for T.
func params(p testscript.Params) testscript.Params {
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		// testscript's T is the script's *testing.T behind a shim that
		// embeds it, so it is a testing.TB: testfixture's helpers can
		// skip or fail the script as they do a Go test.
		if tb, ok := e.T().(testing.TB); ok {
			e.Values[tKey{}] = tb
		}
		if setup != nil {
			return setup(e)
		}
		return nil
	}
	cmds := maps.Clone(p.Cmds)
	if cmds == nil {
		cmds = map[string]func(*testscript.TestScript, bool, []string){}
	}
	maps.Copy(cmds, Cmds)
	p.Cmds = cmds
	return p
}

// T is the script's own test, for a command that calls testfixture's
// helpers (a fixture, a tool) in a script run by Run.
func T(ts *testscript.TestScript) testing.TB {
	tb, ok := ts.Value(tKey{}).(testing.TB)
	if !ok {
		ts.Fatalf("scripttest: the script's test is no testing.TB (not run by scripttest.Run)")
	}
	return tb
}

// Cmds are the commands Run adds.
var Cmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"exits": exits,
	"tools": tools,
}

func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil || want < 0 {
		ts.Fatalf("exits %q: want an exit status, a number", args[0])
	}
	got := 0
	var ee *exec.ExitError
	switch err := ts.Exec(args[1], args[2:]...); {
	case errors.As(err, &ee) && ee.Exited():
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func tools(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: tools NAME...")
	}
	testfixture.Tools(T(ts), args...)
}
