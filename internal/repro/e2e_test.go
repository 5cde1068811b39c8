package repro_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/repro"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestReproducibleUnderHostileEnvironment: arm64 built again, in another,
// deeper directory, with a hostile environment (CFLAGS=-O0, CPPFLAGS, CC,
// MACOSX_DEPLOYMENT_TARGET, SOURCE_DATE_EPOCH...), another TZ and locale
// and umask 077, past the artifact cache (e2e.HostileArm64), gives a
// tarball byte-identical to the universal2 fixture's arm64 slice, and no
// output names a build directory, the fixture store or this checkout.
// Both builds are fixtures of the same key: made by this code once, proved
// by it on every use.
func TestReproducibleUnderHostileEnvironment(t *testing.T) {
	fixture := filepath.Dir(e2e.Slice(t, "arm64"))
	hostile := e2e.HostileArm64(t)
	problems, err := repro.CompareDists(context.Background(), []string{"openssl-macos-arm64"}, fixture, hostile, []string{testfixture.RepoRoot(), e2e.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestSharedReproducible: the recipe of shared libraries' arm64 dylibs and
// linux-x86_64 ELF libraries, built again past the artifact cache in a
// deeper directory with a hostile environment, are byte-identical to the
// fixtures' (LC_UUID, the code signature and the GNU build ID derive from
// the contents), and nothing names a build directory.
func TestSharedReproducible(t *testing.T) {
	for _, tt := range []struct{ target, artifact string }{
		{"arm64", "shared-openssl-aarch64-apple-darwin"},
		{"linux-x86_64", "shared-openssl-x86_64-unknown-linux-gnu"},
	} {
		t.Run(tt.target, func(t *testing.T) {
			var fixture string
			if tt.target == "arm64" {
				fixture = e2e.SharedUniversal2(t)
			} else {
				fixture = e2e.SharedLinux(t)
			}
			again := e2e.SharedHostile(t, tt.target)
			problems, err := repro.CompareDists(context.Background(), []string{tt.artifact}, filepath.Join(fixture, "dist"), again, []string{testfixture.RepoRoot(), e2e.Dir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}
