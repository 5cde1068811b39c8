package main_test

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/osslbuild/osslbuild/internal/testsupport/scripttest"
	"github.com/osslbuild/osslbuild/internal/testsupport/wheeltest"
)

// TestScript runs testdata/script/*.txtar, osslcheck's behaviour as a user
// meets it: arguments, usage errors, exit codes, the formats, verdicts.
// osslcheck there is this test binary running main (TestMain registers
// it), so a script on files it makes itself is pure Go and runs in -short;
// one that says `wheels` is in the gate tier (clang-14 builds them).
//
//	go test ./cmd/osslcheck -run TestScript/NAME    (NAME.txtar)
func TestScript(t *testing.T) {
	scripttest.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){"wheels": wheels},
	})
}

// wheels builds what a wheel builder hands to osslcheck (wheeltest.Inputs:
// clang-14 and lld-link-14, so the script is in the gate tier) and names
// it: $WHEEL holds the pyca bug (-O0), $GOODWHEEL does not, $WHEELHOUSE
// holds both, $PE is a Windows DLL built with /O2, $SITE a site-packages
// tree whose only binary is good.
func wheels(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: wheels")
	}
	in := wheeltest.Inputs(scripttest.T(ts))
	for name, key := range map[string]string{"WHEEL": "wheel", "GOODWHEEL": "good-wheel", "WHEELHOUSE": "wheelhouse", "PE": "pe", "SITE": "site-packages"} {
		ts.Setenv(name, in[key])
	}
}
