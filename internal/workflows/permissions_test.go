package workflows

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// writers are the only jobs ("file:job") allowed to write with the
// repository token, and what each may write. The recipe-bump workflow's
// second job pushes its branches, opens their pull requests and starts the
// build on them; it runs git and gh only (scripts/bump-pull-requests.sh);
// the advisory-update workflow's second job likewise pushes its branch and
// opens its pull request (scripts/advisory-pull-request.sh).
// release-osslcheck.yml's publish job attaches the binaries its build job
// made to the tag's release, with gh only.
var writers = map[string][]string{
	"recipe-bump.yml:pull-requests":    {"actions", "contents", "pull-requests"},
	"advisory-update.yml:pull-request": {"contents", "pull-requests"},
	"release-osslcheck.yml:publish":    {"contents"},
}

// writerRuns is the one command each writer runs: git and gh on files a
// read-only job wrote, never build code.
var writerRuns = map[string]string{
	"recipe-bump.yml:pull-requests":    `scripts/bump-pull-requests.sh "$PROPOSALS"`,
	"advisory-update.yml:pull-request": `scripts/advisory-pull-request.sh "$PROPOSAL"`,
	"release-osslcheck.yml:publish":    `gh release view "$TAG" >/dev/null 2>&1 || gh release create "$TAG" --verify-tag --title "$TAG" --notes "osslcheck $TAG"; gh release upload "$TAG" "$DIR"/osslcheck-* "$DIR"/SHA256SUMS --clobber`,
}

// attestScopes are what a job that attests needs, and only such a job may
// have: an OIDC token for Sigstore's signing certificate, and the right to
// store the attestation.
var attestScopes = []string{"attestations", "id-token"}

// attestActions make attestations.
var attestActions = []string{"actions/attest-build-provenance", "actions/attest"}

// jobPerms is one job's effective permissions.
type jobPerms struct {
	where  string // "file:job"
	writes []string
	attest bool // has an attest step
	err    string
}

// writes lists the scopes p grants write access to (all of them for
// write-all); "" when p is nil.
func writes(p *actionlint.Permissions) ([]string, string) {
	if p == nil {
		return nil, ""
	}
	if p.All != nil {
		switch p.All.Value {
		case "read-all":
			return nil, ""
		case "write-all":
			return []string{"*"}, ""
		default:
			return nil, fmt.Sprintf("permissions: %q", p.All.Value)
		}
	}
	var w []string
	for name, s := range p.Scopes {
		if s.Value == nil {
			continue
		}
		switch s.Value.Value {
		case "write":
			w = append(w, name)
		case "read", "none":
		default:
			return nil, fmt.Sprintf("permissions: %s: %q is not read, write or none", name, s.Value.Value)
		}
	}
	sort.Strings(w)
	return w, ""
}

// parseWorkflow parses the workflow file f. Parse errors are
// TestActionlint's to report; what parsed is still checked.
func parseWorkflow(t testing.TB, f string) *actionlint.Workflow {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := actionlint.Parse(b)
	if w == nil {
		t.Fatalf("%s: actionlint cannot parse it", f)
	}
	return w
}

// permissions reads every job's effective permissions from w (its own
// permissions block, or the workflow's when it has none) and checks the
// workflow-level block: present, and granting no write.
func permissions(w *actionlint.Workflow, file string) (jobs []jobPerms, problems []string) {
	if w.Permissions == nil {
		problems = append(problems, file+": no top-level permissions: every job would get the repository's default token permissions")
	} else if ws, bad := writes(w.Permissions); bad != "" {
		problems = append(problems, file+": "+bad)
	} else if len(ws) > 0 {
		problems = append(problems, fmt.Sprintf("%s: top-level permissions write %v: grant writes per job, to the jobs that need them", file, ws))
	}
	for id, j := range w.Jobs {
		p := w.Permissions
		if j.Permissions != nil {
			p = j.Permissions
		}
		jp := jobPerms{where: file + ":" + id}
		jp.writes, jp.err = writes(p)
		for _, s := range j.Steps {
			if e, ok := s.Exec.(*actionlint.ExecAction); ok && e.Uses != nil {
				action, _, _ := strings.Cut(e.Uses.Value, "@")
				if slices.Contains(attestActions, action) {
					jp.attest = true
				}
			}
		}
		jobs = append(jobs, jp)
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].where < jobs[b].where })
	return jobs, problems
}

// check holds one job's permissions to the rules: only the listed writers
// write contents, pull requests or actions; only attesting jobs have
// id-token and attestations, and they have both; nothing else is written.
func (jp jobPerms) check() []string {
	if jp.err != "" {
		return []string{jp.where + ": " + jp.err}
	}
	var problems []string
	allowed := writers[jp.where]
	if jp.attest {
		allowed = append(slices.Clone(allowed), attestScopes...)
		for _, s := range attestScopes {
			if !slices.Contains(jp.writes, s) {
				problems = append(problems, fmt.Sprintf("%s: attests without %s: write", jp.where, s))
			}
		}
	}
	for _, s := range jp.writes {
		if !slices.Contains(allowed, s) {
			why := "only " + strings.Join(slices.Sorted(maps.Keys(writers)), ", ") + " may write with the token"
			if slices.Contains(attestScopes, s) {
				why = "only a job with an attest step (" + strings.Join(attestActions, ", ") + ") may have it"
			}
			problems = append(problems, fmt.Sprintf("%s: %s: write: %s", jp.where, s, why))
		}
	}
	return problems
}

// TestPermissions: every workflow's top-level permissions are read-only,
// and every job has the least it needs: no job but the bump job can write
// contents (or pull requests, or actions), and only jobs that attest have
// id-token: write and attestations: write.
func TestPermissions(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range workflowFiles(t) {
		jobs, problems := permissions(parseWorkflow(t, f), filepath.Base(f))
		for _, p := range problems {
			t.Error(p)
		}
		for _, jp := range jobs {
			seen[jp.where] = true
			for _, p := range jp.check() {
				t.Error(p)
			}
		}
	}
	// The writers table names jobs that exist (a renamed job would
	// otherwise lose its permissions unnoticed, or the table go stale).
	for w := range writers {
		if !seen[w] {
			t.Errorf("writers names %s, which is no job in .github/workflows", w)
		}
	}
}

// TestPermissionRules: the rules refuse what they must, on workflows made
// for the purpose.
func TestPermissionRules(t *testing.T) {
	const attest = "      - uses: actions/attest-build-provenance@a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32 # v4.1.0\n        with:\n          subject-path: x\n"
	for _, tc := range []struct {
		name, file, yaml string
		want             []string
	}{{
		name: "bump job as intended",
		file: "recipe-bump.yml",
		yaml: "permissions:\n  contents: read\njobs:\n  pull-requests:\n    runs-on: ubuntu-24.04\n    permissions:\n      contents: write\n      pull-requests: write\n      actions: write\n    steps:\n      - run: true\n",
	}, {
		name: "attesting job as intended",
		file: "build.yml",
		yaml: "permissions:\n  contents: read\njobs:\n  build:\n    runs-on: ubuntu-24.04\n    permissions:\n      contents: read\n      id-token: write\n      attestations: write\n    steps:\n" + attest,
	}, {
		name: "no top-level permissions",
		file: "build.yml",
		yaml: "jobs:\n  build:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: true\n",
		want: []string{"build.yml: no top-level permissions"},
	}, {
		name: "top-level write",
		file: "build.yml",
		yaml: "permissions:\n  contents: write\njobs:\n  build:\n    runs-on: ubuntu-24.04\n    permissions:\n      contents: read\n    steps:\n      - run: true\n",
		want: []string{"build.yml: top-level permissions write [contents]"},
	}, {
		name: "write-all inherited",
		file: "build.yml",
		yaml: "permissions: write-all\njobs:\n  build:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: true\n",
		want: []string{"build.yml: top-level permissions write [*]", "build.yml:build: *: write"},
	}, {
		name: "another job writes contents",
		file: "build.yml",
		yaml: "permissions:\n  contents: read\njobs:\n  build:\n    runs-on: ubuntu-24.04\n    permissions:\n      contents: write\n    steps:\n      - run: true\n",
		want: []string{"build.yml:build: contents: write: only advisory-update.yml:pull-request, recipe-bump.yml:pull-requests, release-osslcheck.yml:publish may write"},
	}, {
		name: "the bump workflow's other job writes",
		file: "recipe-bump.yml",
		yaml: "permissions:\n  contents: read\njobs:\n  find:\n    runs-on: ubuntu-24.04\n    permissions:\n      pull-requests: write\n    steps:\n      - run: true\n",
		want: []string{"recipe-bump.yml:find: pull-requests: write"},
	}, {
		name: "id-token without attesting",
		file: "build.yml",
		yaml: "permissions:\n  contents: read\njobs:\n  build:\n    runs-on: ubuntu-24.04\n    permissions:\n      id-token: write\n      attestations: write\n    steps:\n      - run: true\n",
		want: []string{"build.yml:build: attestations: write: only a job with an attest step", "build.yml:build: id-token: write: only a job with an attest step"},
	}, {
		name: "attesting without id-token",
		file: "build.yml",
		yaml: "permissions:\n  contents: read\njobs:\n  build:\n    runs-on: ubuntu-24.04\n    permissions:\n      attestations: write\n    steps:\n" + attest,
		want: []string{"build.yml:build: attests without id-token: write"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			w, errs := actionlint.Parse([]byte("on: push\n" + tc.yaml))
			if w == nil || len(errs) > 0 {
				t.Fatalf("test workflow does not parse: %v", errs)
			}
			jobs, got := permissions(w, tc.file)
			for _, jp := range jobs {
				got = append(got, jp.check()...)
			}
			if len(got) != len(tc.want) {
				t.Errorf("problems %q, want %d: %q", got, len(tc.want), tc.want)
				return
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("problem %q, want it to start %q", got[i], want)
				}
			}
		})
	}
}

// TestWriterRunsNoBuildCode: the job holding the write token runs nothing
// but git and gh on the files the read-only job wrote: it checks out
// without keeping credentials, downloads that job's artifact, and runs
// scripts/bump-pull-requests.sh; no Go toolchain, no osslbuild, no other
// action.
func TestWriterRunsNoBuildCode(t *testing.T) {
	for _, f := range workflowFiles(t) {
		w := parseWorkflow(t, f)
		for id, j := range w.Jobs {
			where := filepath.Base(f) + ":" + id
			if _, ok := writers[where]; !ok {
				continue
			}
			for i, s := range j.Steps {
				switch e := s.Exec.(type) {
				case *actionlint.ExecAction:
					action, _, _ := strings.Cut(e.Uses.Value, "@")
					switch action {
					case "actions/checkout":
						if in := e.Inputs["persist-credentials"]; in == nil || in.Value == nil || in.Value.Value != "false" {
							t.Errorf("%s step %d: actions/checkout without persist-credentials: false", where, i+1)
						}
					case "actions/download-artifact":
					default:
						t.Errorf("%s step %d: uses %s; the writing job runs only checkout, download-artifact and scripts/bump-pull-requests.sh", where, i+1, action)
					}
				case *actionlint.ExecRun:
					if got := strings.TrimSpace(e.Run.Value); got != writerRuns[where] {
						t.Errorf("%s step %d: runs %q; the writing job runs only %q", where, i+1, got, writerRuns[where])
					}
				}
			}
		}
	}
}
