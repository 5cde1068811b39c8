package workflows

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestRebuildJob: the macOS workflow rebuilds the universal2 tarball on a
// runner of its own, after the job that built it: it downloads that job's
// tarball outside the checkout (which must stay clean to be the revision
// that built it) and runs verify:rebuild on it, whose failure fails the
// run; it reads and writes nothing else.
func TestRebuildJob(t *testing.T) {
	w := parseWorkflow(t, filepath.Join(testfixture.RepoRoot(), ".github", "workflows", "build-macos-openssl.yml"))
	j := w.Jobs["rebuild"]
	if j == nil {
		t.Fatal("build-macos-openssl.yml: no job rebuild")
	}
	var needs []string
	for _, n := range j.Needs {
		needs = append(needs, n.Value)
	}
	if !slices.Equal(needs, []string{"universal2"}) {
		t.Errorf("rebuild needs %v, want [universal2] (the job whose tarball it rebuilds)", needs)
	}
	if j.RunsOn == nil || len(j.RunsOn.Labels) != 1 || !strings.HasPrefix(j.RunsOn.Labels[0].Value, "macos-") {
		t.Errorf("rebuild runs-on: want one macos runner label")
	}
	if got, _ := writes(j.Permissions); len(got) > 0 {
		t.Errorf("rebuild writes %v: it only reads", got)
	}
	var downloaded, dir, run string
	for _, s := range j.Steps {
		switch e := s.Exec.(type) {
		case *actionlint.ExecAction:
			if strings.HasPrefix(e.Uses.Value, "actions/download-artifact@") {
				downloaded, dir = e.Inputs["name"].Value.Value, e.Inputs["path"].Value.Value
			}
		case *actionlint.ExecRun:
			if s.ContinueOnError != nil || s.If != nil {
				t.Errorf("step %q: the rebuild's verdict must fail the run, always", e.Run.Value)
			}
			run = strings.TrimSpace(e.Run.Value)
			if env := s.Env; env != nil {
				for _, v := range env.Vars {
					run = strings.ReplaceAll(run, "$"+v.Name.Value, v.Value.Value)
				}
			}
			run = strings.ReplaceAll(run, `"`, "")
		}
	}
	if downloaded != "osslbuild-tarball-universal2" {
		t.Errorf("rebuild downloads %q, want the universal2 job's osslbuild-tarball-universal2", downloaded)
	}
	if !strings.HasPrefix(dir, "${{ runner.temp }}") {
		t.Errorf("rebuild downloads into %q: want a directory outside the checkout (runner.temp)", dir)
	}
	want := "go tool mage verify:rebuild " + dir + "/openssl-macos-universal2.tar.gz"
	if run != want {
		t.Errorf("rebuild runs %q, want %q", run, want)
	}
}
