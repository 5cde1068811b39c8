package scripts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// newAdvisoryRepo is a checkout of main holding the repository's advisory
// table, with a bare origin, as actions/checkout leaves it.
func newAdvisoryRepo(t *testing.T) *prRepo {
	if _, err := exec.LookPath("git"); err != nil {
		testfixture.Missing(t, "git: %v", err)
	}
	tmp := t.TempDir()
	r := &prRepo{t: t, work: filepath.Join(tmp, "work"), origin: filepath.Join(tmp, "origin.git"), gh: filepath.Join(tmp, "gh")}
	for _, d := range []string{filepath.Join(r.work, "internal", "advisory"), r.gh, filepath.Join(r.gh, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(r.gh, "bin", "gh"), []byte(fakeGH), 0o755); err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "internal", "advisory", "advisories.json"))
	if err != nil {
		t.Fatal(err)
	}
	r.write("internal/advisory/advisories.json", string(table))
	git(t, tmp, "init", "-q", "--bare", "-b", "main", r.origin)
	git(t, r.work, "init", "-q", "-b", "main")
	git(t, r.work, "add", ".")
	git(t, r.work, "commit", "-q", "-m", "base")
	git(t, r.work, "remote", "add", "origin", r.origin)
	git(t, r.work, "push", "-q", "origin", "main")
	r.base = git(t, r.work, "rev-parse", "HEAD")
	return r
}

// advisoryProposal writes a proposal directory whose table is the base's
// with its as-of date replaced.
func (r *prRepo) advisoryProposal(asOf, title string) string {
	r.t.Helper()
	dir := r.t.TempDir()
	base, err := os.ReadFile(filepath.Join(r.work, "internal", "advisory", "advisories.json"))
	if err != nil {
		r.t.Fatal(err)
	}
	lines := strings.SplitN(string(base), "\n", 4)
	lines[2] = `  "as_of": "` + asOf + `",`
	for name, content := range map[string]string{
		"advisories.json": strings.Join(lines, "\n"),
		"title.txt":       title + "\n",
		"body.md":         "body of " + title + "\n",
		"commit.txt":      title + "\n\nrebuilt\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	return dir
}

func (r *prRepo) runAdvisory(dir string) (string, []string, error) {
	r.t.Helper()
	os.Remove(filepath.Join(r.gh, "calls"))
	script, err := filepath.Abs("advisory-pull-request.sh")
	if err != nil {
		r.t.Fatal(err)
	}
	cmd := exec.Command(script, dir)
	cmd.Dir = r.work
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(r.gh, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_GH="+r.gh, "GITHUB_REPOSITORY=o/r", "BASE_BRANCH=main", "GH_TOKEN=unused-by-a-local-origin",
		"GIT_CONFIG_GLOBAL=/dev/null")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	b, _ := os.ReadFile(filepath.Join(r.gh, "calls"))
	var calls []string
	for l := range strings.Lines(string(b)) {
		calls = append(calls, strings.TrimSuffix(l, "\n"))
	}
	return out.String(), calls, err
}

// TestAdvisoryPullRequest runs the advisory workflow's second job against
// a bare origin: one branch and pull request, nothing done again for an
// unchanged proposal, an update for a changed one, no reopening of a
// closed one of the same title.
func TestAdvisoryPullRequest(t *testing.T) {
	r := newAdvisoryRepo(t)
	const listOpen = "pr list --head osslbuild/advisories --base main --state open --json number --jq .[0].number // empty --repo o/r"
	const listClosed = "pr list --head osslbuild/advisories --base main --state closed --json number,title --jq .[] | [.number, .title] | @tsv --repo o/r"
	title := "advisories: OpenSSL's records as of 2099-01-01 (1 new)"
	props := r.advisoryProposal("2099-01-01", title)

	out, calls, err := r.runAdvisory(props)
	if err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	sha := r.branch("osslbuild/advisories")
	if sha == "" || git(t, r.work, "rev-parse", sha+"^") != r.base {
		t.Fatalf("branch %q, want one commit on the base\n%s", sha, out)
	}
	if got := git(t, r.work, "diff", "--name-only", r.base, sha); got != "internal/advisory/advisories.json" {
		t.Errorf("branch changes %q", got)
	}
	if got := git(t, r.work, "show", sha+":internal/advisory/advisories.json"); !strings.Contains(got, `"as_of": "2099-01-01",`) {
		t.Errorf("branch's table:\n%s", got)
	}
	if got := git(t, r.work, "log", "-1", "--format=%an|%B", sha); got != "github-actions[bot]|"+title+"\n\nrebuilt" {
		t.Errorf("commit %q", got)
	}
	wantCalls(t, "first run", calls, []string{listOpen, listClosed,
		"pr create --base main --head osslbuild/advisories --title " + title + " --body-file " + filepath.Join(props, "body.md") + " --repo o/r"})
	if got := git(t, r.work, "rev-parse", "HEAD"); got != r.base {
		t.Errorf("checkout left at %s, want the base", got)
	}

	// Unchanged: the same commit; nothing pushed or edited.
	out, calls, err = r.runAdvisory(props)
	if err != nil || r.branch("osslbuild/advisories") != sha || !strings.Contains(out, "pull request #1 is up to date") {
		t.Errorf("unchanged: %v\n%s", err, out)
	}
	wantCalls(t, "unchanged", calls, []string{listOpen})

	// A newer table: the branch replaced, the pull request edited.
	title2 := "advisories: OpenSSL's records as of 2099-01-08 (2 new)"
	props2 := r.advisoryProposal("2099-01-08", title2)
	out, calls, err = r.runAdvisory(props2)
	if err != nil || r.branch("osslbuild/advisories") == sha {
		t.Errorf("newer: %v\n%s", err, out)
	}
	wantCalls(t, "newer", calls, []string{listOpen, "pr edit 1 --title " + title2 + " --body-file " + filepath.Join(props2, "body.md") + " --repo o/r"})

	// Closed by the maintainers: not reopened, the branch left alone.
	sha2 := r.branch("osslbuild/advisories")
	if err := os.Remove(filepath.Join(r.gh, "open-osslbuild_advisories")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.gh, "closed-osslbuild_advisories"), []byte("1\t"+title2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, calls, err = r.runAdvisory(r.advisoryProposal("2099-01-09", title2))
	if err != nil || r.branch("osslbuild/advisories") != sha2 || !strings.Contains(out, "pull request #1 with this title was closed; not reopening") {
		t.Errorf("closed: %v\n%s", err, out)
	}
	wantCalls(t, "closed", calls, []string{listOpen, listClosed})
}

// TestAdvisoryPullRequestRefuses: a malformed or empty proposal stops the
// script before any push or gh call.
func TestAdvisoryPullRequestRefuses(t *testing.T) {
	r := newAdvisoryRepo(t)
	same := r.advisoryProposal("2099-01-01", "t")
	base, _ := os.ReadFile(filepath.Join(r.work, "internal", "advisory", "advisories.json"))
	if err := os.WriteFile(filepath.Join(same, "advisories.json"), base, 0o644); err != nil {
		t.Fatal(err)
	}
	notTable := r.advisoryProposal("2099-01-01", "t")
	if err := os.WriteFile(filepath.Join(notTable, "advisories.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A table of another schema than the base's (here the retired v1) is
	// not the bot's to propose.
	oldSchema := r.advisoryProposal("2099-01-01", "t")
	if err := os.WriteFile(filepath.Join(oldSchema, "advisories.json"), bytes.Replace(base, []byte("/advisory/v2\""), []byte("/advisory/v1\""), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	noTitle := r.advisoryProposal("2099-01-01", "")
	missing := r.advisoryProposal("2099-01-01", "t")
	os.Remove(filepath.Join(missing, "body.md"))
	for dir, want := range map[string]string{
		same:      "the same as internal/advisory/advisories.json on the base; nothing to propose",
		notTable:  "not an advisory table of the base's schema",
		oldSchema: "not an advisory table of the base's schema",
		noTitle:   "title.txt: empty",
		missing:   "body.md: missing or not a regular file",
	} {
		out, calls, err := r.runAdvisory(dir)
		if err == nil || !strings.Contains(out, want) || len(calls) > 0 || r.branch("osslbuild/advisories") != "" {
			t.Errorf("%s: err %v, calls %q\n%s", want, err, calls, out)
		}
	}
}
