package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestLinkStageRefuses: a slice whose libcrypto.a lost a member that only
// other members use (libcrypto-lib-ts_rsp_sign.o, the time-stamp
// responder: no program using the library the usual way needs it) is
// refused, by the release's lists or the link stage, which loads every
// member: nothing reaches dist/. The intact slice passes the same stages up to
// record.
func TestLinkStageRefuses(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"linux-x86_64", "arm64", "x86_64"} {
		t.Run(target, func(t *testing.T) {
			var src string
			var s pipeline.Settings
			if target == "linux-x86_64" {
				src, s = e2e.LinuxX8664(t), e2e.BenchOptions(t).Settings
			} else {
				src, s = e2e.Slice(t, target), e2e.Settings(t, t.TempDir())
			}
			s.Out, s.Work, s.Rebuild = filepath.Join(t.TempDir(), "dist"), filepath.Join(t.TempDir(), "work"), true

			_, err := pipeline.Slice(context.Background(), s, e2e.Runtime(t), target, pipeline.Osslbuild.FromTree(src))
			if !errors.Is(err, pipeline.ErrReachedRecord) {
				t.Fatalf("intact slice: %v, want it to pass validation and the link check", err)
			}

			bad := testfixture.CopyTree(t, src, filepath.Join(t.TempDir(), "bad"))
			e2e.DropLinkOnlyMember(t, bad)
			_, err = pipeline.Slice(context.Background(), s, e2e.Runtime(t), target, pipeline.Osslbuild.FromTree(bad))
			// Since #56 the release's own lists refuse it first, at
			// validation (its exports are missing); the link stage stays
			// behind them for what the lists cannot see.
			if !strings.Contains(err.Error(), "TS_RESP_CTX_new") || !strings.Contains(err.Error(), ".num files export") && !errors.Is(err, link.ErrUndefined) {
				t.Fatalf("slice without a member: %v, want it refused, naming what it lacks", err)
			}
			t.Log(err)
			if ents, _ := os.ReadDir(s.Out); len(ents) != 0 {
				t.Errorf("%s holds %d entries after refused builds", s.Out, len(ents))
			}
		})
	}
}
