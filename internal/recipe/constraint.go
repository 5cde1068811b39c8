package recipe

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"
)

// Constraint is a version constraint with alternatives: go-version
// constraints (comma means "and") joined by "||" (or), because OpenSSL
// backports options to some older series (no-atexit: 3.0.14+ and 3.3+).
type Constraint []version.Constraints

// ParseConstraint parses "A, B || C".
func ParseConstraint(s string) (Constraint, error) {
	var c Constraint
	for _, alt := range strings.Split(s, "||") {
		vc, err := version.NewConstraint(strings.TrimSpace(alt))
		if err != nil {
			return nil, fmt.Errorf("bad version constraint %q: %w", s, err)
		}
		c = append(c, vc)
	}
	return c, nil
}

// Check reports whether v satisfies any alternative; a nil Constraint
// matches everything.
func (c Constraint) Check(v *version.Version) bool {
	if c == nil {
		return true
	}
	for _, alt := range c {
		if alt.Check(v) {
			return true
		}
	}
	return false
}
