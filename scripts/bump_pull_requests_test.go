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

// fakeGH stands in for GitHub's CLI, which needs GitHub: it records each
// call in $FAKE_GH/calls and keeps the open and closed pull requests per
// head branch in files, answering `pr list` with what the real command's
// --jq expression would print. Git is real: origin is a bare repository.
const fakeGH = `#!/usr/bin/env bash
set -eu
state=$FAKE_GH
printf '%s\n' "$*" >>"$state/calls"
args=("$@")
branch= st=
for ((i = 0; i < ${#args[@]}; i++)); do
	case ${args[i]} in
	--head) branch=${args[i + 1]} ;;
	--state) st=${args[i + 1]} ;;
	esac
done
key=${branch//\//_}
case "$1 $2" in
"pr list")
	if [ -f "$state/$st-$key" ]; then cat "$state/$st-$key"; fi ;;
"pr create")
	n=$(cat "$state/next" 2>/dev/null || echo 1)
	echo $((n + 1)) >"$state/next"
	echo "$n" >"$state/open-$key"
	echo "https://github.com/o/r/pull/$n" ;;
"pr edit" | "workflow run") ;;
*) echo "fake gh: unexpected: $*" >&2; exit 1 ;;
esac
`

type prRepo struct {
	t                      *testing.T
	work, origin, gh, base string
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	// bump-pull-requests.sh runs on ubuntu-latest (recipe-bump.yml).
	testfixture.Declare(t, testfixture.TierGate, "git", testfixture.LinuxCross, testfixture.LinuxNative)
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newPRRepo is a checkout of main holding the repository's recipe, with a
// bare origin, as actions/checkout leaves it.
func newPRRepo(t *testing.T) *prRepo {
	if _, err := exec.LookPath("git"); err != nil {
		testfixture.Missing(t, "git: %v", err)
	}
	tmp := t.TempDir()
	r := &prRepo{t: t, work: filepath.Join(tmp, "work"), origin: filepath.Join(tmp, "origin.git"), gh: filepath.Join(tmp, "gh")}
	for _, d := range []string{filepath.Join(r.work, "recipes"), r.gh, filepath.Join(r.gh, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(r.gh, "bin", "gh"), []byte(fakeGH), 0o755); err != nil {
		t.Fatal(err)
	}
	recipe, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "recipes", "openssl.toml"))
	if err != nil {
		t.Fatal(err)
	}
	r.write("recipes/openssl.toml", string(recipe))
	git(t, tmp, "init", "-q", "--bare", "-b", "main", r.origin)
	git(t, r.work, "init", "-q", "-b", "main")
	git(t, r.work, "add", ".")
	git(t, r.work, "commit", "-q", "-m", "base")
	git(t, r.work, "remote", "add", "origin", r.origin)
	git(t, r.work, "push", "-q", "origin", "main")
	r.base = git(t, r.work, "rev-parse", "HEAD")
	return r
}

func (r *prRepo) write(rel, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.work, rel), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// proposal writes a proposal directory for series whose recipe is the
// base recipe plus a line.
func (r *prRepo) proposal(dir, series, line, title string) {
	r.t.Helper()
	p := filepath.Join(dir, series)
	if err := os.MkdirAll(p, 0o755); err != nil {
		r.t.Fatal(err)
	}
	base, err := os.ReadFile(filepath.Join(r.work, "recipes", "openssl.toml"))
	if err != nil {
		r.t.Fatal(err)
	}
	for name, content := range map[string]string{
		"openssl.toml": string(base) + line + "\n",
		"title.txt":    title + "\n",
		"body.md":      "body of " + title + "\n",
		"commit.txt":   title + "\n\nwhat was verified\n",
	} {
		if err := os.WriteFile(filepath.Join(p, name), []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// run runs the script in the checkout and returns its output and the gh
// calls it made.
func (r *prRepo) run(dir string) (string, []string, error) {
	r.t.Helper()
	os.Remove(filepath.Join(r.gh, "calls"))
	script, err := filepath.Abs("bump-pull-requests.sh")
	if err != nil {
		r.t.Fatal(err)
	}
	cmd := exec.Command(script, dir)
	cmd.Dir = r.work
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(r.gh, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_GH="+r.gh, "GITHUB_REPOSITORY=o/r", "BASE_BRANCH=main",
		"BUILD_WORKFLOW=build-macos-openssl.yml", "GH_TOKEN=unused-by-a-local-origin",
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

func (r *prRepo) branch(name string) string {
	r.t.Helper()
	out := git(r.t, r.work, "ls-remote", "origin", "refs/heads/"+name)
	sha, _, _ := strings.Cut(out, "\t")
	return sha
}

func wantCalls(t *testing.T, step string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: gh calls\n  %s\nwant\n  %s", step, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestBumpPullRequests runs the workflow's second job against a bare origin:
// one branch and pull request per series, nothing done again for an
// unchanged proposal, an update for a changed one, no reopening of a closed
// pull request for the same release.
func TestBumpPullRequests(t *testing.T) {
	r := newPRRepo(t)
	props := t.TempDir()
	r.proposal(props, "3.5", "# 3.5.8", "recipe: OpenSSL 3.5.8 (3.5 series)")
	body := filepath.Join(props, "3.5", "body.md")
	const listOpen = "pr list --head osslbuild/bump-3.5 --base main --state open --json number --jq .[0].number // empty --repo o/r"
	const listClosed = "pr list --head osslbuild/bump-3.5 --base main --state closed --json number,title --jq .[] | [.number, .title] | @tsv --repo o/r"

	// First run: a branch with one commit on the base, a new pull request,
	// a build started on the branch.
	out, calls, err := r.run(props)
	if err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	sha := r.branch("osslbuild/bump-3.5")
	if sha == "" {
		t.Fatalf("no branch osslbuild/bump-3.5 in origin\n%s", out)
	}
	if got := git(t, r.work, "rev-parse", sha+"^"); got != r.base {
		t.Errorf("branch's parent %s, want the base %s", got, r.base)
	}
	if got := git(t, r.work, "diff", "--name-only", r.base, sha); got != "recipes/openssl.toml" {
		t.Errorf("branch changes %q, want recipes/openssl.toml only", got)
	}
	if got := git(t, r.work, "show", sha+":recipes/openssl.toml"); !strings.HasSuffix(got, "\n# 3.5.8") {
		t.Errorf("branch's recipe does not end with the proposal's line:\n%s", got)
	}
	if got := git(t, r.work, "log", "-1", "--format=%an <%ae>|%B", sha); got != "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>|recipe: OpenSSL 3.5.8 (3.5 series)\n\nwhat was verified" {
		t.Errorf("commit: %q", got)
	}
	wantCalls(t, "first run", calls, []string{
		listOpen, listClosed,
		"pr create --base main --head osslbuild/bump-3.5 --title recipe: OpenSSL 3.5.8 (3.5 series) --body-file " + body + " --repo o/r",
		"workflow run build-macos-openssl.yml --ref osslbuild/bump-3.5 --repo o/r",
	})
	if !strings.Contains(out, "series 3.5: opened https://github.com/o/r/pull/1: recipe: OpenSSL 3.5.8 (3.5 series)") {
		t.Errorf("output:\n%s", out)
	}
	if got := git(t, r.work, "rev-parse", "HEAD"); got != r.base {
		t.Errorf("checkout left at %s, want the base", got)
	}

	// Second run, same proposal, same base: the same commit, so nothing is
	// pushed, edited or built.
	out, calls, err = r.run(props)
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	if got := r.branch("osslbuild/bump-3.5"); got != sha {
		t.Errorf("branch moved from %s to %s on an unchanged proposal", sha, got)
	}
	wantCalls(t, "unchanged", calls, []string{listOpen})
	if !strings.Contains(out, "series 3.5: pull request #1 is up to date") {
		t.Errorf("output:\n%s", out)
	}

	// A newer release of the series: the branch is replaced, the pull
	// request edited, the build started again.
	props2 := t.TempDir()
	r.proposal(props2, "3.5", "# 3.5.9", "recipe: OpenSSL 3.5.9 (3.5 series)")
	out, calls, err = r.run(props2)
	if err != nil {
		t.Fatalf("third run: %v\n%s", err, out)
	}
	sha2 := r.branch("osslbuild/bump-3.5")
	if sha2 == sha || git(t, r.work, "rev-parse", sha2+"^") != r.base {
		t.Errorf("branch %s after a new proposal (was %s), want a new commit on the base", sha2, sha)
	}
	wantCalls(t, "newer", calls, []string{
		listOpen,
		"pr edit 1 --title recipe: OpenSSL 3.5.9 (3.5 series) --body-file " + filepath.Join(props2, "3.5", "body.md") + " --repo o/r",
		"workflow run build-macos-openssl.yml --ref osslbuild/bump-3.5 --repo o/r",
	})

	// The maintainers closed the 3.5.9 pull request: it is not reopened,
	// and the branch is left alone.
	if err := os.Remove(filepath.Join(r.gh, "open-osslbuild_bump-3.5")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.gh, "closed-osslbuild_bump-3.5"), []byte("1\trecipe: OpenSSL 3.5.9 (3.5 series)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	props3 := t.TempDir()
	r.proposal(props3, "3.5", "# 3.5.9 again", "recipe: OpenSSL 3.5.9 (3.5 series)")
	out, calls, err = r.run(props3)
	if err != nil {
		t.Fatalf("fourth run: %v\n%s", err, out)
	}
	wantCalls(t, "closed", calls, []string{listOpen, listClosed})
	if got := r.branch("osslbuild/bump-3.5"); got != sha2 {
		t.Errorf("branch moved to %s for a closed pull request", got)
	}
	if !strings.Contains(out, "series 3.5: pull request #1 for this release was closed; not reopening") {
		t.Errorf("output:\n%s", out)
	}
}

// TestBumpPullRequestsRefuses: nothing to do is quiet; a malformed
// proposal directory stops the script before any push or gh call.
func TestBumpPullRequestsRefuses(t *testing.T) {
	r := newPRRepo(t)
	out, calls, err := r.run(t.TempDir())
	if err != nil || !strings.Contains(out, "no proposals: nothing to do") || len(calls) != 0 {
		t.Errorf("empty: err %v, calls %v, output:\n%s", err, calls, out)
	}

	for name, setup := range map[string]func(dir string) string{
		"not a series": func(dir string) string {
			r.proposal(dir, "3.5", "# x", "t")
			r.proposal(dir, "main", "# x", "t")
			return "main: not a proposal directory (want a series, X.Y)"
		},
		"missing body": func(dir string) string {
			r.proposal(dir, "3.5", "# x", "t")
			os.Remove(filepath.Join(dir, "3.5", "body.md"))
			return "3.5/body.md: missing or not a regular file"
		},
		"library diff a link": func(dir string) string {
			r.proposal(dir, "3.5", "# x", "t")
			os.Symlink("/etc/passwd", filepath.Join(dir, "3.5", "library-diff.md"))
			return "3.5/library-diff.md: not a regular file"
		},
		"no change": func(dir string) string {
			r.proposal(dir, "3.5", "", "t")
			b, _ := os.ReadFile(filepath.Join(r.work, "recipes", "openssl.toml"))
			os.WriteFile(filepath.Join(dir, "3.5", "openssl.toml"), b, 0o644)
			return "the same as recipes/openssl.toml on the base; nothing to propose"
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			want := setup(dir)
			out, calls, err := r.run(dir)
			if err == nil || !strings.Contains(out, want) {
				t.Errorf("err %v, want %q in output:\n%s", err, want, out)
			}
			if len(calls) != 0 {
				t.Errorf("gh called: %v", calls)
			}
			if refs := git(t, r.work, "ls-remote", "--heads", "origin", "osslbuild/*"); refs != "" {
				t.Errorf("pushed: %s", refs)
			}
		})
	}
}

// TestBumpPullRequestsLibraryDiff: a proposal the library job compared
// opens its pull request with the comparison after the body.
func TestBumpPullRequestsLibraryDiff(t *testing.T) {
	r := newPRRepo(t)
	props := t.TempDir()
	r.proposal(props, "3.5", "# 3.5.8", "recipe: OpenSSL 3.5.8 (3.5 series)")
	const section = "### What changes in the libraries\n\n| OpenSSL | 3.5.7 | 3.5.8 |\n"
	if err := os.WriteFile(filepath.Join(props, "3.5", "library-diff.md"), []byte(section), 0o644); err != nil {
		t.Fatal(err)
	}
	out, calls, err := r.run(props)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	body := filepath.Join(props, "3.5", ".body-and-libraries.md")
	wantCalls(t, "library diff", calls, []string{
		"pr list --head osslbuild/bump-3.5 --base main --state open --json number --jq .[0].number // empty --repo o/r",
		"pr list --head osslbuild/bump-3.5 --base main --state closed --json number,title --jq .[] | [.number, .title] | @tsv --repo o/r",
		"pr create --base main --head osslbuild/bump-3.5 --title recipe: OpenSSL 3.5.8 (3.5 series) --body-file " + body + " --repo o/r",
		"workflow run build-macos-openssl.yml --ref osslbuild/bump-3.5 --repo o/r",
	})
	got, err := os.ReadFile(body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "body of recipe: OpenSSL 3.5.8 (3.5 series)\n" + section; string(got) != want {
		t.Errorf("body sent:\n%s\nwant:\n%s", got, want)
	}
}
