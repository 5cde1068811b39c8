package repro_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/repro"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestReproducibleUnderHostileEnvironment builds arm64 again, in another
// directory, with a hostile environment (CFLAGS=-O0, CPPFLAGS, CC,
// MACOSX_DEPLOYMENT_TARGET, SOURCE_DATE_EPOCH...), another TZ and locale and
// umask 077, and -j2 instead of the fixture's -j1: the tarball must be
// byte-identical to the shared fixture's, and no output may name a build
// directory or this checkout.
func TestReproducibleUnderHostileEnvironment(t *testing.T) {
	fixture := filepath.Dir(e2e.Slice(t, "arm64"))
	dir := filepath.Join(t.TempDir(), "another", "build", "path")
	o := e2e.Settings(t, dir)
	o.Jobs = 2
	o.Rebuild = true
	restore := repro.HostileEnv()
	_, err := pipeline.Slice(context.Background(), o, e2e.Runtime(t), "arm64", nil)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := repro.CompareDists(context.Background(), []string{"openssl-macos-arm64"}, fixture, o.Out, []string{testfixture.RepoRoot(), dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
