package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	const rev = "df65f29c0ffee0ddba11ad5eed5ca1ab1eb0a7ed"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name     string
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"checkout, Go 1.24+ pseudo-version", "v0.0.0-20261202104512-df65f29c0ffe", vcs("false"), rev},
		{"modified checkout", "v0.0.0-20261202104512-df65f29c0ffe+dirty", vcs("true"), rev + "+dirty.0123456789abcdef"},
		{"checkout, older go", "(devel)", vcs("false"), rev},
		{"go install at a version", "v0.3.0", nil, "v0.3.0"},
		{"nothing recorded", "(devel)", nil, ""},
		{"-buildvcs=false", "", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/osslbuild/osslbuild", Version: c.main}, Settings: c.settings}
			if got := version(bi, func() string { return "0123456789abcdef" }); got != c.want {
				t.Errorf("version = %q, want %q", got, c.want)
			}
		})
	}
}
