package workflows

import (
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// docPath is the page that replaces pyca/infra's workflow.
const docPath = "docs/pyca-infra.md"

// pycaRecipePath is where the page has pyca keep its recipe, and
// pycaRecipe the example it says to copy there.
const (
	pycaRecipePath = "cryptography-macos/osslbuild.toml"
	pycaRecipe     = "recipes/examples/pyca-infra.toml"
)

// osslbuildUses is how the page pins the action: the commit is the
// reader's to fill in.
const osslbuildUses = "osslbuild/osslbuild@<commit>"

// pycaWorkflow is the workflow YAML in docs/pyca-infra.md.
type pycaWorkflow struct {
	Name string `yaml:"name"`
	On   struct {
		Schedule    []struct{ Cron string } `yaml:"schedule"`
		PullRequest struct {
			Paths []string `yaml:"paths"`
		} `yaml:"pull_request"`
		Push struct {
			Branches []string `yaml:"branches"`
			Paths    []string `yaml:"paths"`
		} `yaml:"push"`
		// pyca's file has no manual trigger, nor has the drop-in.
		WorkflowDispatch *struct{} `yaml:"workflow_dispatch"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		If          string            `yaml:"if"`
		RunsOn      string            `yaml:"runs-on"`
		Name        string            `yaml:"name"`
		Needs       []string          `yaml:"needs"`
		Permissions map[string]string `yaml:"permissions"`
		Strategy    struct {
			Matrix map[string][]map[string]string `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"jobs"`
}

// pycaInfra is pyca/infra's .github/workflows/build-macos-openssl.yml at
// pyca/infra 516ff14 (2026-08-05), the file the drop-in replaces, as facts:
// its triggers, jobs, matrix, steps (a uses: step by its reference, a run:
// step by its name), pins and artifacts. The page's side-by-side table and
// the drop-in are held to it.
var pycaInfra = struct {
	Cron      string
	Paths     []string // pull_request's and push's
	Branches  []string // push's
	Jobs      []pycaJob
	Artifacts []string
}{
	Cron:     "0 0 * * FRI",
	Paths:    []string{".github/workflows/build-macos-openssl.yml", "cryptography-linux/openssl-version.sh"},
	Branches: []string{"main"},
	Jobs: []pycaJob{
		{ID: "build", Name: "Build OpenSSL for macOS (${{ matrix.ARCH.NAME }})", RunsOn: "macos-15",
			Matrix: []map[string]string{
				{"NAME": "x86_64", "ARTIFACT_NAME": "x86-64", "CFLAGS": "-mmacosx-version-min=10.12 -march=core2", "OPENSSLDIR": "/usr/local/etc/openssl@3"},
				{"NAME": "arm64", "ARTIFACT_NAME": "arm64", "CFLAGS": "-mmacosx-version-min=11.0", "OPENSSLDIR": "/opt/homebrew/etc/openssl@3"},
			},
			Steps: []string{"actions/checkout@v7.0.1", "Download OpenSSL", "Extract OpenSSL", "Build OpenSSL", "Generate SBOM", "actions/upload-artifact@v7.0.1"}},
		{ID: "universal2", Name: "Build OpenSSL for macOS universal2", RunsOn: "macos-15", Needs: []string{"build"},
			Steps: []string{"actions/checkout@v7.0.1", "actions/download-artifact@v8.0.1", "actions/download-artifact@v8.0.1", "Create universal2 OpenSSL", "Generate SBOM", "actions/upload-artifact@v7.0.1"}},
	},
	Artifacts: []string{"openssl-macos-x86-64", "openssl-macos-arm64", "openssl-macos-universal2"},
}

type pycaJob struct {
	ID, Name, RunsOn string
	Needs            []string
	Matrix           []map[string]string
	Steps            []string
}

// pycaPins are the actions pyca's file uses, as it pins them (by tag).
func pycaPins() map[string]string {
	pins := map[string]string{}
	for _, j := range pycaInfra.Jobs {
		for _, st := range j.Steps {
			if a, ref, ok := strings.Cut(st, "@"); ok {
				pins[a] = ref
			}
		}
	}
	return pins
}

// docWorkflowYAML returns the first ```yaml block of the page's "The
// workflow" section.
func docWorkflowYAML(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), docPath))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## The workflow\n")
	if i < 0 {
		t.Fatalf("%s has no \"## The workflow\" section", docPath)
	}
	s = s[i:]
	start := strings.Index(s, "\n```yaml\n")
	if start < 0 {
		t.Fatalf("%s: no ```yaml block in \"The workflow\"", docPath)
	}
	s = s[start+len("\n```yaml\n"):]
	end := strings.Index(s, "\n```\n")
	if end < 0 {
		t.Fatalf("%s: the ```yaml block is not closed", docPath)
	}
	return s[:end+1]
}

func loadDocWorkflow(t testing.TB) *pycaWorkflow {
	t.Helper()
	var w pycaWorkflow
	dec := yaml.NewDecoder(strings.NewReader(docWorkflowYAML(t)))
	dec.KnownFields(true)
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("%s workflow: %v", docPath, err)
	}
	return &w
}

// docTable returns the rows (first cell without backquotes -> the other
// cells) of the Markdown table whose header starts with "| first |".
func docTable(t testing.TB, first string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), docPath))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| "+first+" |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows[strings.Trim(cells[0], "`")] = cells[1:]
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf("%s has no table starting \"| %s |\"", docPath, first)
	}
	return rows
}

// pycaVersionFile is a cryptography-linux/openssl-version.sh of pyca's
// shape: the version with its openssl- prefix, the sha256, the flags built
// from the Windows flags.
func pycaVersionFile(version, sha, flags string) string {
	windows := strings.TrimSuffix(flags, " enable-ec_nistp_64_gcc_128")
	return "export OPENSSL_VERSION=\"openssl-" + version + "\"\n" +
		"export OPENSSL_SHA256=\"" + sha + "\"\n" +
		"export OPENSSL_BUILD_FLAGS_WINDOWS=\"" + windows + "\"\n" +
		"export OPENSSL_BUILD_FLAGS_ARMV7L=\"linux-armv4 ${OPENSSL_BUILD_FLAGS_WINDOWS}\"\n" +
		"export OPENSSL_BUILD_FLAGS=\"${OPENSSL_BUILD_FLAGS_WINDOWS} enable-ec_nistp_64_gcc_128\"\n"
}

// osslbuildInputs runs the page's version step (a job's step with id
// "openssl") in a checkout holding versionFile as pyca's
// openssl-version.sh, and evaluates the job's osslbuild step's with: under
// matrix, as the runner would: the inputs that step hands the action.
func osslbuildInputs(t testing.TB, w *pycaWorkflow, job string, matrix map[string]string, versionFile string) map[string]string {
	t.Helper()
	j, ok := w.Jobs[job]
	if !ok {
		t.Fatalf("%s: no job %s", docPath, job)
	}
	vars := map[string]string{}
	for k, v := range matrix {
		vars["matrix."+k] = v
	}
	var with map[string]string
	for _, st := range j.Steps {
		switch {
		case st.ID == "openssl":
			checkout := t.TempDir()
			os.MkdirAll(filepath.Join(checkout, "cryptography-linux"), 0o755)
			if err := os.WriteFile(filepath.Join(checkout, "cryptography-linux", "openssl-version.sh"), []byte(versionFile), 0o644); err != nil {
				t.Fatal(err)
			}
			a := &actionYML{}
			a.Runs.Steps = []actionStep{{ID: "openssl", Run: st.Run, Shell: "bash"}}
			a.Outputs = map[string]struct {
				Description string `yaml:"description"`
				Value       string `yaml:"value"`
			}{}
			for _, k := range []string{"version", "sha256", "flags"} {
				a.Outputs[k] = struct {
					Description string `yaml:"description"`
					Value       string `yaml:"value"`
				}{Value: "${{ steps.openssl.outputs." + k + " }}"}
			}
			res := a.run(context.Background(), invocation{workspace: checkout, temp: t.TempDir(), env: jobEnv()})
			if res.err != nil {
				t.Fatalf("%s: the version step: %v\n%s", docPath, res.err, res.log)
			}
			for k, v := range res.outputs {
				vars["steps.openssl.outputs."+k] = v
			}
		case st.Uses == osslbuildUses:
			with = st.With
		}
	}
	if with == nil {
		t.Fatalf("%s: job %s never uses %s", docPath, job, osslbuildUses)
	}
	inputs := map[string]string{}
	for k, v := range with {
		e, err := expand(v, vars)
		if err != nil {
			t.Fatalf("%s: job %s: with %s: %v", docPath, job, k, err)
		}
		inputs[k] = e
	}
	return inputs
}

// TestPycaInfraDoc holds docs/pyca-infra.md to what it promises: pyca's
// triggers, job names, artifact names and layout; the action called with
// inputs it has, from pyca's own version file; actionlint-clean; every
// other action pinned as this repository pins it; and tables of inputs and
// outputs that are action.yml's.
func TestPycaInfraDoc(t *testing.T) {
	a := loadAction(t)
	w := loadDocWorkflow(t)
	src := docWorkflowYAML(t)

	t.Run("actionlint", func(t *testing.T) {
		l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{WorkingDir: testfixture.RepoRoot()})
		if err != nil {
			t.Fatal(err)
		}
		lintable := strings.ReplaceAll(src, osslbuildUses, "osslbuild/osslbuild@"+strings.Repeat("0", 40))
		errs, err := l.Lint(docPath, []byte(lintable), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			t.Errorf("actionlint on the workflow in %s: %s", docPath, e.Error())
		}
	})

	t.Run("pyca's triggers and jobs", func(t *testing.T) {
		paths := append(slices.Clone(pycaInfra.Paths), pycaRecipePath)
		if w.Name != "macOS OpenSSL" || len(w.On.Schedule) != 1 || w.On.Schedule[0].Cron != pycaInfra.Cron ||
			!slices.Equal(w.On.PullRequest.Paths, paths) || !slices.Equal(w.On.Push.Paths, paths) || !slices.Equal(w.On.Push.Branches, pycaInfra.Branches) {
			t.Errorf("name and triggers: %+v, want pyca's, and the recipe", w.On)
		}
		if w.On.WorkflowDispatch != nil {
			t.Error("workflow_dispatch: pyca's file has no manual trigger; every trigger builds the three artifacts")
		}
		if len(w.Jobs) != len(pycaInfra.Jobs) {
			t.Errorf("jobs %v, want pyca's %d", slices.Sorted(maps.Keys(w.Jobs)), len(pycaInfra.Jobs))
		}
		for _, pj := range pycaInfra.Jobs {
			j, ok := w.Jobs[pj.ID]
			if !ok || j.Name != pj.Name || j.RunsOn != pj.RunsOn || !slices.Equal(j.Needs, pj.Needs) || j.If != "" {
				t.Errorf("job %s: name %q, runs-on %q, needs %v, if %q; want pyca's %q on %s, needs %v, on every run", pj.ID, j.Name, j.RunsOn, j.Needs, j.If, pj.Name, pj.RunsOn, pj.Needs)
			}
			// pyca's matrix rows, in pyca's order, with what stays in the
			// workflow (the rest is the recipe's).
			var want []map[string]string
			for _, row := range pj.Matrix {
				want = append(want, map[string]string{"NAME": row["NAME"], "ARTIFACT_NAME": row["ARTIFACT_NAME"]})
			}
			if got := j.Strategy.Matrix["ARCH"]; !slices.EqualFunc(got, want, maps.Equal) {
				t.Errorf("job %s: matrix %v, want %v", pj.ID, got, want)
			}
		}
	})

	t.Run("least privilege", func(t *testing.T) {
		if !maps.Equal(w.Permissions, map[string]string{"contents": "read"}) {
			t.Errorf("workflow permissions %v, want contents: read only", w.Permissions)
		}
		for name, j := range w.Jobs {
			if j.Permissions != nil {
				t.Errorf("job %s sets permissions %v: the workflow's contents: read is all a job needs", name, j.Permissions)
			}
		}
		doc := string(mustReadDoc(t))
		if !strings.Contains(doc, "### Why `permissions: contents: read`") {
			t.Errorf("%s does not say why the permissions block is what it is", docPath)
		}
	})

	t.Run("artifacts", func(t *testing.T) {
		var uploaded []string
		for name, j := range w.Jobs {
			rows := []map[string]string{nil}
			if name == "build" {
				rows = j.Strategy.Matrix["ARCH"]
			}
			for _, st := range j.Steps {
				action, _, _ := strings.Cut(st.Uses, "@")
				if action != "actions/upload-artifact" {
					continue
				}
				if st.If != "" {
					t.Errorf("job %s uploads %s only if %s: pyca's file uploads on every run", name, st.With["name"], st.If)
				}
				for _, row := range rows {
					vars := map[string]string{}
					for k, v := range row {
						vars["matrix.ARCH."+k] = v
					}
					n, err := expand(st.With["name"], vars)
					if err != nil {
						t.Fatal(err)
					}
					uploaded = append(uploaded, n)
				}
				// The artifact directory's contents are the artifact's root.
				if want := "${{ steps.build.outputs.artifact-dir }}/"; st.With["path"] != want {
					t.Errorf("job %s uploads %q, want %q", name, st.With["path"], want)
				}
			}
		}
		slices.Sort(uploaded)
		if want := slices.Sorted(slices.Values(pycaInfra.Artifacts)); !slices.Equal(uploaded, want) {
			t.Errorf("uploaded %v, want pyca's %v on every run", uploaded, want)
		}
	})

	t.Run("the action's inputs", func(t *testing.T) {
		for name, j := range w.Jobs {
			n := 0
			for _, st := range j.Steps {
				if !strings.HasPrefix(st.Uses, "osslbuild/") {
					continue
				}
				n++
				if st.Uses != osslbuildUses || st.ID != "build" {
					t.Errorf("job %s: uses %q id %q, want %s with id build", name, st.Uses, st.ID, osslbuildUses)
				}
				for k := range st.With {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("job %s: input %q is not one of action.yml's", name, k)
					}
				}
				for k, in := range a.Inputs {
					if _, ok := st.With[k]; in.Required && !ok {
						t.Errorf("job %s: required input %q missing", name, k)
					}
				}
			}
			if n != 1 {
				t.Errorf("job %s calls the action %d times, want once", name, n)
			}
		}
		// What the build job hands the action comes from pyca's
		// openssl-version.sh, run as the workflow runs it.
		vf := pycaVersionFile("4.0.1", strings.Repeat("2d", 32), pycaFlags)
		pyca := map[string]string{"recipe": pycaRecipePath, "openssl-version": "openssl-4.0.1", "openssl-sha256": strings.Repeat("2d", 32), "openssl-options": pycaFlags}
		for _, row := range w.Jobs["build"].Strategy.Matrix["ARCH"] {
			got := osslbuildInputs(t, w, "build", map[string]string{"ARCH.NAME": row["NAME"], "ARCH.ARTIFACT_NAME": row["ARTIFACT_NAME"]}, vf)
			want := maps.Clone(pyca)
			want["target"] = row["NAME"]
			if !maps.Equal(got, want) {
				t.Errorf("build (%s) inputs %v\nwant %v", row["NAME"], got, want)
			}
		}
		// The merge takes the slices pyca's download steps put in x86-64/
		// and arm64/, and the release from their manifests.
		got := osslbuildInputs(t, w, "universal2", nil, vf)
		want := map[string]string{"target": "merge", "recipe": pycaRecipePath, "arm64-artifact": "arm64", "x86_64-artifact": "x86-64"}
		if !maps.Equal(got, want) {
			t.Errorf("universal2 inputs %v, want %v", got, want)
		}
		for _, st := range w.Jobs["universal2"].Steps {
			if strings.HasPrefix(st.Uses, "actions/download-artifact@") {
				if d := map[string]string{"openssl-macos-x86-64": "x86-64", "openssl-macos-arm64": "arm64"}[st.With["name"]]; d != st.With["path"] {
					t.Errorf("universal2 downloads %s into %q, want pyca's %q", st.With["name"], st.With["path"], d)
				}
			}
		}
	})

	// The recipe the page has pyca copy builds what osslbuild's own recipe
	// builds for pyca: the same slices, for a release it does not list.
	t.Run("pyca's recipe", func(t *testing.T) {
		doc, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), docPath))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), pycaRecipe) || !strings.Contains(string(doc), pycaRecipePath) {
			t.Errorf("%s does not tell pyca to copy %s to %s", docPath, pycaRecipe, pycaRecipePath)
		}
		theirs, err := recipe.Load(filepath.Join(testfixture.RepoRoot(), pycaRecipe))
		if err != nil {
			t.Fatal(err)
		}
		ours, err := recipe.Load("")
		if err != nil {
			t.Fatal(err)
		}
		if len(theirs.Releases) != 0 {
			t.Errorf("%s pins releases; the page keeps the release in openssl-version.sh", pycaRecipe)
		}
		for _, target := range []string{"arm64", "x86_64"} {
			rel, listed, err := theirs.Resolve("openssl-4.0.1", strings.Repeat("2d", 32))
			if err != nil || listed {
				t.Fatalf("4.0.1 from openssl-version.sh: listed %v, %v", listed, err)
			}
			a, err := theirs.PlanFor(rel, target, strings.Fields(pycaFlags))
			if err != nil {
				t.Fatal(err)
			}
			b, err := ours.PlanFor(rel, target, strings.Fields(pycaFlags))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Slice, b.Slice) {
				t.Errorf("%s: pyca's recipe gives %+v\nosslbuild's %+v", target, a.Slice, b.Slice)
			}
		}
		if _, err := theirs.Release(""); err == nil || !strings.Contains(err.Error(), "-version=X.Y.Z") {
			t.Errorf("a build of pyca's recipe without a version: %v", err)
		}
	})

	// pyca's own steps keep pyca's pins, exactly; osslbuild's action is
	// the one step added, pinned by commit.
	t.Run("pins", func(t *testing.T) {
		pins := pycaPins()
		for _, line := range strings.Split(src, "\n") {
			m := usesLineRe.FindStringSubmatch(line)
			if m == nil || m[1] == osslbuildUses {
				continue
			}
			action, ref, _ := strings.Cut(m[1], "@")
			if want, ok := pins[action]; !ok || ref != want {
				t.Errorf("%s: %q: pyca's file pins %s as %s@%s", docPath, strings.TrimSpace(line), action, action, want)
			}
		}
		for _, pj := range pycaInfra.Jobs {
			var got []string
			for _, st := range w.Jobs[pj.ID].Steps {
				if st.Uses != "" && st.Uses != osslbuildUses {
					got = append(got, st.Uses)
				}
			}
			var want []string
			for _, st := range pj.Steps {
				if strings.Contains(st, "@") {
					want = append(want, st)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("job %s uses %v, want pyca's %v, in pyca's order", pj.ID, got, want)
			}
		}
		if !strings.Contains(docWorkflowYAML(t), "uses: "+osslbuildUses) || !strings.Contains(string(mustReadDoc(t)), "a full\ncommit SHA") {
			t.Errorf("%s: osslbuild's action is not pinned by commit", docPath)
		}
	})

	t.Run("side by side", func(t *testing.T) { checkSideBySide(t, w) })

	t.Run("OPENSSL_BUILD_FLAGS tokens", func(t *testing.T) { checkTokenTable(t) })

	t.Run("tables", func(t *testing.T) {
		inputs := docTable(t, "input")
		if got, want := slices.Sorted(maps.Keys(inputs)), slices.Sorted(maps.Keys(a.Inputs)); !slices.Equal(got, want) {
			t.Errorf("inputs table %v, action.yml %v", got, want)
		}
		for name, cells := range inputs {
			in := a.Inputs[name]
			if len(cells) != 3 {
				t.Errorf("inputs table row %s: %v", name, cells)
				continue
			}
			if (cells[0] == "yes") != in.Required {
				t.Errorf("input %s: table says required %q, action.yml %v", name, cells[0], in.Required)
			}
			if in.Default != nil && *in.Default != "" && cells[1] != "`"+*in.Default+"`" {
				t.Errorf("input %s: table default %q, action.yml %q", name, cells[1], *in.Default)
			}
		}
		outputs := docTable(t, "output")
		if got, want := slices.Sorted(maps.Keys(outputs)), slices.Sorted(maps.Keys(a.Outputs)); !slices.Equal(got, want) {
			t.Errorf("outputs table %v, action.yml %v", got, want)
		}
	})
}

// usesLineRe is a "uses: X" line of a workflow.
var usesLineRe = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)`)

// workflowPins maps each action the workflows and action.yml pin to its
// commit.
func workflowPins(t testing.TB) map[string]string {
	t.Helper()
	pins := map[string]string{}
	for _, u := range uses(t) {
		if m := pinnedRe.FindStringSubmatch(u.uses); m != nil {
			pins[m[1]+m[2]] = m[3]
		}
	}
	for _, u := range actionUses(t) {
		if m := pinnedRe.FindStringSubmatch(u); m != nil {
			pins[m[1]+m[2]] = m[3]
		}
	}
	return pins
}
