package recipe

import (
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// featuresPerl prints a Configure's @disablables as releaseFeatures pins
// them (the command its comment gives).
const featuresPerl = `local $/; $s = <>; $s =~ /(my \@tls = .*?\nmy %deprecated_disablables = \(.*?\n\s*\);)/s or die "no \@disablables"; ($c = $1) =~ s/^my /our /mg; eval $c; die $@ if $@; print join(" ", sort @disablables), "\n"`

// TestReleaseFeaturesFromConfigure: the feature lists the options are
// held to are what each release's own Configure says, read again from the
// upstream tarball.
func TestReleaseFeaturesFromConfigure(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the release tarballs")
	}
	for _, v := range slices.Sorted(maps.Keys(releaseFeatures)) {
		t.Run(v, func(t *testing.T) {
			fx := testfixture.Get(t, v)
			dir := t.TempDir()
			testfixture.RunIn(t, dir, "tar", "-xzf", fx.Tarball, "openssl-"+v+"/Configure")
			out, err := exec.Command("perl", "-e", featuresPerl, filepath.Join(dir, "openssl-"+v, "Configure")).Output()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Fields(string(out))
			set, _ := knownFeatures(v)
			if want := slices.Sorted(maps.Keys(set)); !slices.Equal(got, want) {
				t.Errorf("OpenSSL %s's Configure has %d features, releaseFeatures pins %d:\n got %q\nwant %q", v, len(got), len(want), got, want)
			}
		})
	}
}
