package validate

import (
	"fmt"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ccflag"
)

// RuleRefusedFlag: a compiler line shows a flag that loads code into the
// compiler, reads a file into the compile or changes code generation
// behind -O3 (package ccflag). A recipe giving one is refused before
// anything runs; this is the backstop for a build that got one in all the
// same (a wrapper, a patched Configure, a library built elsewhere).
const RuleRefusedFlag Rule = "refused-flag"

// refusedFlags holds every compiler line of the slice (each member's, the
// build's own and any other copy) to ccflag's list.
func (c *checker) refusedFlags(arch string, s inspect.Slice) {
	for _, b := range s.BuildInfo {
		if b.Kind != inspect.InfoCompiler {
			continue
		}
		for _, f := range ccflag.Line(b.Value) {
			c.add(arch, b.Member, RuleRefusedFlag, "no flag that "+string(f.Kind), f.Flag,
				"compiler line has %s, which %s: %s: %s", f.Flag, f.Kind, f.Why, fmt.Sprintf("%q", strings.TrimSpace(b.Value)))
		}
	}
}
