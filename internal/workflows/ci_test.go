package workflows

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// ciStep is one step of ci.yml: its run script, or the action it uses and
// its inputs.
type ciStep struct {
	id, run, uses string
	with          map[string]string
	cond          string
}

func ciJobs(t *testing.T) (map[string]*actionlint.Job, map[string][]ciStep) {
	t.Helper()
	w := parseWorkflow(t, filepath.Join(testfixture.RepoRoot(), ".github", "workflows", "ci.yml"))
	jobs := map[string]*actionlint.Job{}
	steps := map[string][]ciStep{}
	for id, j := range w.Jobs {
		jobs[id] = j
		for _, s := range j.Steps {
			var cs ciStep
			if s.ID != nil {
				cs.id = s.ID.Value
			}
			if s.If != nil {
				cs.cond = s.If.Value
			}
			switch e := s.Exec.(type) {
			case *actionlint.ExecRun:
				cs.run = strings.TrimSpace(e.Run.Value)
			case *actionlint.ExecAction:
				cs.uses, cs.with = e.Uses.Value, map[string]string{}
				for k, v := range e.Inputs {
					cs.with[k] = v.Value.Value
				}
			}
			steps[id] = append(steps[id], cs)
		}
	}
	return jobs, steps
}

// TestCI: ci.yml gates pull requests with the short and gate tiers on
// Ubuntu; its Linux full job runs exactly .ci/run (and no other test
// command) in a Debian container, with the fixture store cached under the
// key the fixtures command prints, at the path the tests use; its macOS
// job runs go test natively and builds universal2 of the embedded recipe
// and of testdata/recipes/shared.toml through action.yml. Permissions and
// pins are TestPermissions's and TestPinned's, over every workflow.
func TestCI(t *testing.T) {
	jobs, steps := ciJobs(t)
	runs := func(job string) []string {
		var r []string
		for _, s := range steps[job] {
			if s.run != "" {
				r = append(r, s.run)
			}
		}
		return r
	}
	if j := jobs["gate"]; j == nil || j.RunsOn == nil || len(j.RunsOn.Labels) != 1 || j.RunsOn.Labels[0].Value != "ubuntu-24.04" {
		t.Fatalf("no gate job on ubuntu-24.04")
	}
	for _, want := range []string{"go test -short -count=1 ./...", "OSSLBUILD_TESTS=gate go test -count=1 -timeout 30m ./...", "go run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 .github/workflows/*.yml"} {
		if !slices.Contains(runs("gate"), want) {
			t.Errorf("the gate job does not run %q: %q", want, runs("gate"))
		}
	}
	vet := strings.Join(runs("gate"), "\n")
	for _, want := range []string{"go vet ./...", "GOOS=darwin GOARCH=arm64 go vet ./...", "go vet -tags mage ."} {
		if !strings.Contains(vet, want) {
			t.Errorf("the gate job does not run %q", want)
		}
	}

	linux := jobs["linux"]
	if linux == nil || linux.Container == nil || linux.Container.Image == nil || !strings.HasPrefix(linux.Container.Image.Value, "debian:") {
		t.Fatal("no linux job in a Debian container")
	}
	var tests []string
	for _, r := range runs("linux") {
		if strings.Contains(r, ".ci/run") || strings.Contains(r, "go test") {
			tests = append(tests, r)
		}
	}
	if !slices.Equal(tests, []string{".ci/run"}) {
		t.Errorf("the linux job's test steps %q, want exactly [.ci/run]", tests)
	}
	store := linux.Env.Vars["osslbuild_e2e_dir"]
	if store == nil || !filepath.IsAbs(store.Value.Value) {
		t.Fatalf("the linux job sets no absolute OSSLBUILD_E2E_DIR")
	}
	var keyStep string
	cached := map[string]bool{}
	for _, s := range steps["linux"] {
		if strings.Contains(s.run, "go run ./internal/testsupport/cmd/fixtures -key") {
			keyStep = s.id
		}
		if strings.HasPrefix(s.uses, "actions/cache/") && s.with["path"] == store.Value.Value {
			if s.with["key"] != "osslbuild-e2e-${{ steps."+keyStep+".outputs.key }}" || keyStep == "" {
				t.Errorf("%s caches the store under %q, not the fixture key printed by a step before it", s.uses, s.with["key"])
			}
			cached[strings.Split(strings.TrimPrefix(s.uses, "actions/cache/"), "@")[0]] = true
			if strings.HasPrefix(s.uses, "actions/cache/save") && !strings.HasPrefix(s.cond, "always()") {
				t.Errorf("the store is saved only if %q: a failing test would cost the next run every build", s.cond)
			}
		}
	}
	if !cached["restore"] || !cached["save"] {
		t.Errorf("the fixture store is restored %v and saved %v", cached["restore"], cached["save"])
	}

	mac := jobs["macos"]
	if mac == nil || mac.RunsOn == nil || mac.RunsOn.Labels[0].Value != "macos-15" {
		t.Fatal("no macos job on macos-15")
	}
	var builds []string
	for _, s := range steps["macos"] {
		if s.uses == "./" {
			builds = append(builds, s.with["target"]+" "+s.with["recipe"])
		}
	}
	if !slices.Equal(builds, []string{"universal2 ", "universal2 testdata/recipes/shared.toml"}) {
		t.Errorf("the macos job builds %q through action.yml, want universal2 of the embedded recipe and of testdata/recipes/shared.toml", builds)
	}
	all := strings.Join(runs("macos"), "\n")
	for _, want := range []string{"go test -count=1", "arch -x86_64", "-Wl,-rpath", "go run ./cmd/osslcheck -minopt=3"} {
		if !strings.Contains(all, want) {
			t.Errorf("the macos job does not run %q", want)
		}
	}
}
