// Package buildinfo is the version a Go binary of this module records of
// itself: the VCS revision the go command read from the checkout, else
// what go install stamped (a module version).
package buildinfo

import "runtime/debug"

// Version is the VCS revision with "+dirty" for uncommitted changes when
// the binary was built from a checkout, else the module version ("v0.3.0",
// a pseudo-version) when it was built as a module at a version; "" when
// the binary records neither.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return version(bi)
}

// version prefers the full revision: since Go 1.24 a build in a checkout
// also stamps the main module with a pseudo-version
// (v0.0.0-20261202104512-df65f29abcde), which holds only 12 digits of the
// commit, and the revision rule of verify:rebuild needs all 40.
func version(bi *debug.BuildInfo) string {
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		return rev + dirty
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return ""
}
