package bench_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/bench"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// The recorded result in bench/ is made with the test fixtures' builds:
//
//	go test ./internal/bench -run TestLibrary -count=1 -timeout 60m -v \
//	  -args -library.report=$PWD/bench/library-<date>.md
//
// (bench.WriteLibraryReport does the same from the magefile.)
var (
	report   = flag.String("library.report", "", "TestLibrary: write the report to this file, measuring with -library.slice and -library.maxpairs")
	sliceMS  = flag.Float64("library.slice", 20, "ms per slice on the osslbuild side, with -library.report")
	maxPairs = flag.Int("library.maxpairs", 400, "most pairs per operation, with -library.report")
)

func writeReport(t *testing.T, tb *bench.Table) {
	// The command as run from the repository root, without this machine's
	// directories.
	path := *report
	if rel, err := filepath.Rel(testfixture.RepoRoot(), path); err == nil && !strings.HasPrefix(rel, "..") {
		path = "$PWD/" + filepath.ToSlash(rel)
	}
	cmd := fmt.Sprintf("go test ./internal/bench -run TestLibrary -count=1 -timeout 60m -v -args -library.report=%s -library.slice=%g -library.maxpairs=%d", path, *sliceMS, *maxPairs)
	if err := os.WriteFile(*report, []byte(tb.Report(cmd)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("report written to %s", *report)
}
