// Package buildinfo is the version a Go binary of this module records of
// itself: what go install stamped (a module version), else the VCS
// revision the go command read from the checkout.
package buildinfo

import "runtime/debug"

// Version is the module version ("v0.3.0", a pseudo-version) when the
// binary was built as a module at a version, else the VCS revision with
// "+dirty" for uncommitted changes; "" when the binary records neither.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
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
	if rev == "" {
		return ""
	}
	return rev + dirty
}
