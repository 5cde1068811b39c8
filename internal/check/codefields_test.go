package check

import (
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
)

// TestCodeDisagrees: every recorded code-evidence field is held to what
// check measures (class, score to the recorded three decimals, functions),
// and a manifest that records code evidence must record it for every
// measured slice; one that records none (older manifests) is not held.
func TestCodeDisagrees(t *testing.T) {
	measured := []Slice{{Arch: "arm64", Code: &Code{Class: "optimised", Score: 0.0314, Functions: 1796}}}
	rec := artifact.CodeEvidence{Arch: "arm64", Library: "libssl.a", Class: "optimised", Score: 0.031, Functions: 1796}
	for _, tt := range []struct {
		name string
		edit func(*artifact.CodeEvidence)
		drop bool
		want string // "" = agrees
	}{
		{"as recorded", nil, false, ""},
		{"class", func(e *artifact.CodeEvidence) { e.Class = "-O0-like" }, false, "as -O0-like (score 0.031 over 1796 functions), but it measures optimised"},
		{"score", func(e *artifact.CodeEvidence) { e.Score = 0.02 }, false, "(score 0.020 over 1796 functions), but it measures optimised (score 0.031"},
		{"functions", func(e *artifact.CodeEvidence) { e.Functions = 1797 }, false, "over 1797 functions), but it measures"},
		{"another library's entry only", func(e *artifact.CodeEvidence) { e.Library = "libcrypto.a" }, false, "records no machine-code verdict for lib/libssl.a arm64"},
		{"entry removed", nil, true, "records no machine-code verdict for lib/libssl.a arm64"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := rec
			if tt.edit != nil {
				tt.edit(&e)
			}
			recorded := []artifact.CodeEvidence{e, {Arch: "arm64", Library: "libcrypto.a", Class: "optimised", Score: 0.02, Functions: 2674}}
			if tt.drop {
				recorded = recorded[1:]
			}
			got := strings.Join(codeDisagrees(recorded, "libssl.a", measured), "\n")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := codeDisagrees(nil, "libssl.a", measured); got != nil {
		t.Errorf("a manifest without code evidence: %q", got)
	}
}
