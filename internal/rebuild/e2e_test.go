package rebuild_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/rebuild"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// TestRebuildUniversal2Fixtures: the artifacts build:universal2 made (the
// end-to-end fixtures: both slices and their merge, as directories and
// tarballs) rebuilt from their manifests alone pass file by file. The
// fixtures record "test-<key>", which the revision rule refuses for users;
// TestRevisions accepts it for this test binary, whose key it is.
func TestRebuildUniversal2Fixtures(t *testing.T) {
	dist := filepath.Join(e2e.Universal2(t), "dist")
	for _, name := range []string{"openssl-macos-arm64", "openssl-macos-x86-64", "openssl-macos-universal2"} {
		for _, path := range []string{filepath.Join(dist, name), filepath.Join(dist, name+".tar.gz")} {
			t.Run(filepath.Base(path), func(t *testing.T) {
				release := e2e.BuildSlot(t)
				defer release()
				var report strings.Builder
				s := e2e.Settings(t, t.TempDir())
				res, err := rebuild.Run(context.Background(), rebuild.Options{Artifact: path, Settings: s, Runtime: e2e.Runtime(t),
					Report: &report, TestRevisions: true})
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
			})
		}
	}
}
