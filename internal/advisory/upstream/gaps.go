package upstream

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/advisory"
)

// Gaps are holes in OpenSSL's records accepted on purpose: for each CVE,
// why the table may leave what its record says out. Build notes an
// accepted hole instead of refusing the table, and refuses a gap it did
// not meet.
type Gaps struct {
	why  map[string]string
	used map[string]bool
}

//go:embed gaps.txt
var gapsFile string

// KnownGaps are the gaps reviewed and accepted (gaps.txt).
func KnownGaps() (Gaps, error) { return ParseGaps("internal/advisory/upstream/gaps.txt", gapsFile) }

// ParseGaps reads "CVE-YYYY-NNNN why" lines; '#' starts a comment line.
func ParseGaps(name, text string) (Gaps, error) {
	g := Gaps{why: map[string]string{}, used: map[string]bool{}}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cve, why, _ := strings.Cut(line, " ")
		why = strings.TrimSpace(why)
		switch {
		case !advisory.IsCVE(cve):
			return Gaps{}, fmt.Errorf("%s:%d: %q: want a CVE identifier, then why its hole is accepted", name, i+1, cve)
		case why == "":
			return Gaps{}, fmt.Errorf("%s:%d: %s: say why its hole is accepted", name, i+1, cve)
		case g.why[cve] != "":
			return Gaps{}, fmt.Errorf("%s:%d: %s listed twice", name, i+1, cve)
		}
		g.why[cve] = why
	}
	return g, nil
}

func (g Gaps) accept(cve string) (string, bool) {
	why, ok := g.why[cve]
	if ok {
		g.used[cve] = true
	}
	return why, ok
}

// unused are the gaps listed that Build did not meet.
func (g Gaps) unused() []string {
	return slices.DeleteFunc(slices.Sorted(maps.Keys(g.why)), func(cve string) bool { return g.used[cve] })
}
