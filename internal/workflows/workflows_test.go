package workflows

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// workflowFiles lists .github/workflows/*.yml and *.yaml.
func workflowFiles(t testing.TB) []string {
	t.Helper()
	dir := filepath.Join(testfixture.RepoRoot(), ".github", "workflows")
	var files []string
	for _, pat := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no workflow files in %s", dir)
	}
	sort.Strings(files)
	return files
}

// TestActionlint runs actionlint on every workflow. shellcheck checks the
// run: scripts too when it is installed; without it actionlint skips that
// rule (it is not installed on the project's Debian machines).
func TestActionlint(t *testing.T) {
	files := workflowFiles(t)
	var out bytes.Buffer
	opts := &actionlint.LinterOptions{WorkingDir: testfixture.RepoRoot()}
	if p, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = p
	}
	l, err := actionlint.NewLinter(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Errorf("actionlint found %d problem(s):\n%s", len(errs), out.String())
	}
}

var (
	// pinnedRe is owner/repo[/path]@<40 hex>.
	pinnedRe = regexp.MustCompile(`^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(/[^@]*)?@([0-9a-f]{40})$`)
	// versionCommentRe is the "# vX.Y.Z" comment naming the pinned tag.
	versionCommentRe = regexp.MustCompile(`#\s*v[0-9]+(\.[0-9]+){0,2}\b`)
	matrixRefRe      = regexp.MustCompile(`\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}`)
)

type use struct {
	file string
	line int
	job  *actionlint.Job
	step *actionlint.Step // nil for a reusable workflow call
	uses string
}

// uses parses every workflow and returns each uses: reference.
func uses(t testing.TB) []use {
	t.Helper()
	var all []use
	for _, f := range workflowFiles(t) {
		w := parseWorkflow(t, f)
		for _, j := range w.Jobs {
			if j.WorkflowCall != nil && j.WorkflowCall.Uses != nil {
				all = append(all, use{f, j.WorkflowCall.Uses.Pos.Line, j, nil, j.WorkflowCall.Uses.Value})
			}
			for _, s := range j.Steps {
				if e, ok := s.Exec.(*actionlint.ExecAction); ok && e.Uses != nil {
					all = append(all, use{f, e.Uses.Pos.Line, j, s, e.Uses.Value})
				}
			}
		}
	}
	return all
}

// TestPinned: every action and reusable workflow is pinned by a full commit
// SHA (a tag can be moved to other code; a SHA cannot), the line says which
// tag that is, and each action is pinned to one SHA across all workflows
// and action.yml.
func TestPinned(t *testing.T) {
	lines := map[string][]string{}
	shas := map[string]string{}
	for _, u := range uses(t) {
		where := filepath.Base(u.file) + ":" + strconv.Itoa(u.line)
		if strings.HasPrefix(u.uses, "./") {
			continue // an action in this repository: pinned by the commit itself
		}
		m := pinnedRe.FindStringSubmatch(u.uses)
		if m == nil {
			t.Errorf("%s: uses %q is not pinned to a 40-hex commit SHA", where, u.uses)
			continue
		}
		if lines[u.file] == nil {
			b, _ := os.ReadFile(u.file)
			lines[u.file] = strings.Split(string(b), "\n")
		}
		if l := lines[u.file][u.line-1]; !versionCommentRe.MatchString(l) {
			t.Errorf("%s: %q has no version comment (# vX.Y.Z)", where, strings.TrimSpace(l))
		}
		action := m[1] + m[2]
		if prev, ok := shas[action]; ok && prev != m[3] {
			t.Errorf("%s: %s pinned to %s here and %s elsewhere", where, action, m[3], prev)
		}
		shas[action] = m[3]
	}
	// The composite action's own steps (actionUses checks each line).
	for _, u := range actionUses(t) {
		m := pinnedRe.FindStringSubmatch(u)
		if m == nil {
			continue
		}
		if prev, ok := shas[m[1]+m[2]]; ok && prev != m[3] {
			t.Errorf("action.yml: %s pinned to %s there and %s in the workflows", m[1]+m[2], m[3], prev)
		}
	}
}

// TestArtifactNames: the macOS workflow uploads and downloads exactly the
// artifacts pyca/infra's did, so pyca/cryptography's consumers keep working;
// anything else it moves is its own, under names none of pyca's match.
func TestArtifactNames(t *testing.T) {
	var uploaded, downloaded []string
	for _, u := range uses(t) {
		if filepath.Base(u.file) != "build-macos-openssl.yml" || u.step == nil {
			continue
		}
		action, _, _ := strings.Cut(u.uses, "@")
		var into *[]string
		switch action {
		case "actions/upload-artifact":
			into = &uploaded
		case "actions/download-artifact":
			into = &downloaded
		default:
			continue
		}
		in := u.step.Exec.(*actionlint.ExecAction).Inputs["name"]
		if in == nil || in.Value == nil {
			t.Errorf("%s:%d: %s without a name", filepath.Base(u.file), u.line, action)
			continue
		}
		*into = append(*into, resolve(t, u.job, in.Value.Value)...)
	}
	slices.Sort(downloaded)
	wantUp := []string{"openssl-macos-arm64", "openssl-macos-universal2", "openssl-macos-x86-64"}
	wantDown := []string{"openssl-macos-arm64", "openssl-macos-x86-64"}
	// Extra artifacts (the deterministic tarballs) may sit beside pyca's,
	// under names that contain none of pyca's, so that no consumer's name
	// or pattern for pyca's artifacts picks them up.
	var pyca []string
	for _, name := range uploaded {
		if slices.Contains(wantUp, name) {
			pyca = append(pyca, name)
			continue
		}
		for _, w := range wantUp {
			if strings.Contains(name, w) {
				t.Errorf("uploaded artifact %q contains pyca's name %q: a consumer's pattern for %s would pick it up", name, w, w)
			}
		}
	}
	slices.Sort(pyca)
	if !slices.Equal(pyca, wantUp) {
		t.Errorf("uploaded pyca artifacts %v, want each of pyca's %v once", pyca, wantUp)
	}
	// Beside pyca's slices, a job may download only what this workflow
	// itself uploads (the rebuild job's tarball).
	var pycaDown []string
	for _, name := range downloaded {
		switch {
		case slices.Contains(wantUp, name):
			pycaDown = append(pycaDown, name)
		case !slices.Contains(uploaded, name):
			t.Errorf("downloaded artifact %q: no job of the workflow uploads it", name)
		}
	}
	if !slices.Equal(pycaDown, wantDown) {
		t.Errorf("downloaded pyca artifacts %v, want %v", pycaDown, wantDown)
	}
}

// resolve expands a value that is a plain string, or holds one
// ${{ matrix.KEY }}, into the values it takes over the job's matrix
// include: rows.
func resolve(t *testing.T, j *actionlint.Job, v string) []string {
	t.Helper()
	m := matrixRefRe.FindStringSubmatchIndex(v)
	if m == nil || strings.Contains(v[m[1]:], "${{") || strings.Contains(v[:m[0]], "${{") {
		if strings.Contains(v, "${{") {
			t.Errorf("artifact name %q: only plain names and one ${{ matrix.KEY }} are understood here", v)
		}
		return []string{v}
	}
	key := strings.ToLower(v[m[2]:m[3]])
	if j.Strategy == nil || j.Strategy.Matrix == nil || j.Strategy.Matrix.Include == nil {
		t.Errorf("artifact name %q in a job without a matrix include:", v)
		return nil
	}
	var out []string
	for _, c := range j.Strategy.Matrix.Include.Combinations {
		a, ok := c.Assigns[key]
		if !ok {
			t.Errorf("matrix include row without %s", key)
			continue
		}
		s, ok := a.Value.(*actionlint.RawYAMLString)
		if !ok {
			t.Errorf("matrix %s = %s is not a string", key, a.Value)
			continue
		}
		out = append(out, v[:m[0]]+s.Value+v[m[1]:])
	}
	return out
}
