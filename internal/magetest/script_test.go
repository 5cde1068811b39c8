package magetest

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/osslbuild/osslbuild/internal/testsupport/scripttest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestScript runs testdata/script/*.txtar: transcripts of the compiled
// magefile (osslbuild on the scripts' PATH, compiled once here as the
// action runs it) that build no OpenSSL and need no fixture, so they run
// in the gate tier; a script that needs clang-14 says so (tools).
//
//	OSSLBUILD_TESTS=gate go test ./internal/magetest -run TestScript/NAME
func TestScript(t *testing.T) {
	testfixture.NeedTier(t, testfixture.TierGate, "the compiled magefile")
	bin := compiled(t)
	scripttest.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("PATH", filepath.Dir(bin)+string(filepath.ListSeparator)+e.Getenv("PATH"))
			return nil
		},
	})
}
