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
