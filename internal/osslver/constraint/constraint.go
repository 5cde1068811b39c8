// Package constraint is osslver's version constraints, kept apart so that
// what reads versions only (osslcheck) does not link hashicorp/go-version.
package constraint

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// ErrUnordered marks a constraint check that was refused because the
// constraint syntax cannot order the version.
var ErrUnordered = errors.New("version constraints order X.Y.Z releases only")

// Constraint is a version constraint with alternatives, as recipes'
// versions and patches' Applies-To write it: hashicorp/go-version
// constraints (comma means "and") joined by "||" (or), because OpenSSL
// backports options to some older series (no-atexit: 3.0.14+ and 3.3+).
//
// go-version reads letters as a pre-release ("1.1.1w" would come before
// 1.1.1), so letters and tags are refused both in a constraint and in a
// version checked against one, instead of being misordered. The zero
// Constraint matches every release.
type Constraint struct {
	text string
	alts []version.Constraints
}

// ParseConstraint parses "A, B || C".
func Parse(s string) (Constraint, error) {
	c := Constraint{text: s}
	for _, alt := range strings.Split(s, "||") {
		alt = strings.TrimSpace(alt)
		if alt == "" {
			return Constraint{}, fmt.Errorf("version constraint %q: empty alternative", s)
		}
		vc, err := version.NewConstraint(alt)
		if err != nil {
			return Constraint{}, fmt.Errorf("version constraint %q: %w", s, err)
		}
		for _, one := range vc {
			if one.Prerelease() {
				return Constraint{}, fmt.Errorf("version constraint %q: %q has letters or a tag: %w", s, one.String(), ErrUnordered)
			}
		}
		c.alts = append(c.alts, vc)
	}
	return c, nil
}

// String is the constraint as written.
func (c Constraint) String() string { return c.text }

// Check reports whether v satisfies any alternative. A letter release or
// a suffixed version is refused with an error naming it (ErrUnordered):
// go-version would order it as a pre-release.
func (c Constraint) Check(v osslver.Version) (bool, error) {
	if c.alts == nil {
		return true, nil
	}
	if v.Letters != "" || v.Suffixed() {
		return false, fmt.Errorf("OpenSSL %s against %q: %w", v, c.text, ErrUnordered)
	}
	gv, err := version.NewVersion(v.String())
	if err != nil {
		return false, fmt.Errorf("OpenSSL %s: %w", v, err)
	}
	for _, alt := range c.alts {
		if alt.Check(gv) {
			return true, nil
		}
	}
	return false, nil
}
