package rebuild_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/rebuild"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// TestRebuildUniversal2Fixtures: the universal2 tarball build:universal2
// made (the end-to-end fixture) rebuilt from its manifest alone passes
// file by file: both slices built again without the artifact cache,
// merged, and every file of the merge compared. Configure and make's
// output comes from the make cache the fixture itself filled (its plans'
// staging directories), so everything after make runs again here and no
// run pays two more cold OpenSSL builds: that two independent makes of a
// plan give the same objects is repro's proof (TestReproducibleAgainstRecord:
// this run's fixtures against builds made elsewhere, in another directory
// under a hostile environment), not this test's. One rebuild, of
// the tarball: it covers unpacking, both slices and the merge; a directory
// and a single slice go the same way (the mini-tree tests). The fixtures
// record "test-<key>", which the revision rule refuses for users;
// TestRevisions accepts it for this test binary, whose key it is.
func TestRebuildUniversal2Fixtures(t *testing.T) {
	path := filepath.Join(e2e.Universal2(t), "dist", "openssl-macos-universal2.tar.gz")
	release := e2e.BuildSlot(t)
	defer release()
	var report strings.Builder
	s := e2e.Settings(t, t.TempDir())
	res, err := rebuild.Run(context.Background(), rebuild.Options{Artifact: path, Settings: s, Runtime: e2e.Runtime(t),
		Report: &report, TestRevisions: true, TestMakeCache: s.MakeCache})
	t.Logf("report:\n%s", report.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) == 0 || len(res.Skipped) > 0 || !strings.Contains(res.Verdict, ": PASS: all ") {
		t.Errorf("verdict %q, skipped %q", res.Verdict, res.Skipped)
	}
	for _, l := range res.Lines {
		if l.Status != "PASS" {
			t.Errorf("%s", l)
		}
	}
}
