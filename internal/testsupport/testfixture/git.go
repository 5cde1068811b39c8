package testfixture

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Git runs git in dir with a fixed identity and no user configuration,
// returning its output trimmed; git puts the test in the gate tier.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	Tool(t, "git")
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.org", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// GitCheckout makes dir a git repository whose one commit, on main,
// holds files, and returns that commit.
func GitCheckout(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	WriteTree(t, dir, files)
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "files")
	return Git(t, dir, "rev-parse", "HEAD")
}
