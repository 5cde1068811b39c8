package magetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// hostile is a name that starts a workflow command of its own if any
// target prints it raw under GitHub Actions.
const hostile = "a\n::warning title=INJ::b"

// injected reports the lines of out that start the hostile command (the
// runner trims leading blanks before it looks for "::").
func injected(out string) []string {
	var bad []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), "::warning title=INJ") || strings.Contains(l, "##[") {
			bad = append(bad, l)
		}
	}
	return bad
}

// compiled is the magefile compiled once, as the action runs it.
func compiled(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "osslbuild")
	if out, code := mage(t, nil, "-compile", bin); code != 0 {
		t.Fatalf("mage -compile exited %d:\n%s", code, out)
	}
	return bin
}

func runBin(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	return run(t, env, append([]string{bin}, args...)...)
}

// TestNoTargetInjectsWorkflowCommands: under GITHUB_ACTIONS=true every
// target that takes an outside name (a path, a version, an option, a
// directory, a file inside an artifact) prints it, in its log lines and in
// the "Error:" line mage prints, without starting a workflow command: the
// hostile name's newline is escaped. The library benchmarks take no name
// from outside but their own flags, which are numbers and a fixed choice.
func TestNoTargetInjectsWorkflowCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile")
	}
	testfixture.Get(t, "4.0.2")
	bin := compiled(t)
	tmp := t.TempDir()
	env := []string{"GITHUB_ACTIONS=true", "OSSLBUILD_CACHE=" + filepath.Join(tmp, "cache"), "OSSLBUILD_WORK=" + filepath.Join(tmp, "work"),
		"OSSLBUILD_MIRROR=" + testfixture.Dir(), "OSSLBUILD_OFFLINE=1", "GITHUB_OUTPUT=", "GITHUB_STEP_SUMMARY="}
	bad := filepath.Join(tmp, hostile)
	withFile := filepath.Join(tmp, "dir")
	os.MkdirAll(withFile, 0o755)
	os.WriteFile(filepath.Join(withFile, hostile+".so"), []byte("\x7fELF not really"), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want string // in the output, escaped or quoted, never starting a line
	}{
		{"check", []string{"check", withFile}, "a%0A::warning title=INJ::b.so"},
		{"build:arm64", []string{"build:arm64", "-options=no-zlib " + hostile}, "title=INJ"},
		{"build:x86_64", []string{"build:x86_64", "-version=" + hostile}, "title=INJ"},
		{"build:linux-x86_64", []string{"build:linux-x86_64", "-sha256=" + hostile}, "title=INJ"},
		{"build:universal2", []string{"build:universal2", "-version=" + hostile}, "title=INJ"},
		{"build:merge", []string{"build:merge", bad, bad}, "title=INJ"},
		{"smoke", []string{"smoke", bad}, "title=INJ"},
		{"source:fetch", []string{"source:fetch", "-version=" + hostile}, "title=INJ"},
		{"source:unpack", []string{"source:unpack", "-dest=" + bad}, "unpacked into " + strings.ReplaceAll(bad, "\n", "%0A")},
		{"verify:reproducible", []string{"verify:reproducible", "-arch=" + hostile}, "title=INJ"},
		{"recipe:bump", []string{"recipe:bump", hostile, "-dryrun"}, "title=INJ"},
		{"actions:error", []string{"actions:error", "osslbuild", hostile}, "::error title=osslbuild::a%0A::warning title=INJ::b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runBin(t, bin, env, tt.args...)
			if lines := injected(out); len(lines) > 0 {
				t.Errorf("%s starts a workflow command it did not mean: %q\n%s", tt.name, lines, out)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("%s: output lacks %q (the name, escaped or quoted):\n%s", tt.name, tt.want, out)
			}
		})
	}
}

// TestMergePublishesHostileNamesSafely: build:merge of real slices whose
// include/openssl/ holds a hostile file name, into an -out directory with a
// newline, prints its refusal and, for clean slices, its "published" lines
// without a workflow command.
func TestMergePublishesHostileNamesSafely(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the end-to-end slices")
	}
	dist := filepath.Join(e2e.Universal2(t), "dist")
	bin := compiled(t)
	tmp := t.TempDir()
	// The merge holds each slice to the release's own lists, read from the
	// tarball the recipe pins: fetched here from the fixtures' mirror.
	env := []string{"GITHUB_ACTIONS=true", "OSSLBUILD_CACHE=" + filepath.Join(tmp, "cache"), "OSSLBUILD_WORK=" + filepath.Join(tmp, "work"),
		"OSSLBUILD_MIRROR=" + testfixture.Dir(), "OSSLBUILD_OFFLINE=1", "GITHUB_OUTPUT=", "GITHUB_STEP_SUMMARY="}
	arm := testfixture.CopyTree(t, filepath.Join(dist, "openssl-macos-arm64"), filepath.Join(tmp, "slices "+hostile, "openssl-macos-arm64"))
	x86 := testfixture.CopyTree(t, filepath.Join(dist, "openssl-macos-x86-64"), filepath.Join(tmp, "slices "+hostile, "openssl-macos-x86-64"))
	out, code := runBin(t, bin, env, "build:merge", arm, x86, "-out="+filepath.Join(tmp, "out "+hostile))
	if code != 0 {
		t.Fatalf("merge exited %d:\n%s", code, out)
	}
	if lines := injected(out); len(lines) > 0 || !strings.Contains(out, "published ") {
		t.Errorf("published lines %q:\n%s", lines, out)
	}
	os.WriteFile(filepath.Join(arm, "include", "openssl", hostile+".h"), []byte("/* */\n"), 0o644)
	out, code = runBin(t, bin, env, "build:merge", arm, x86, "-out="+filepath.Join(tmp, "out2"))
	if code == 0 {
		t.Fatalf("merge accepted a slice with a file its manifest does not list:\n%s", out)
	}
	if lines := injected(out); len(lines) > 0 || !strings.Contains(out, "a%0A::warning title=INJ::b.h") {
		t.Errorf("refusal %q:\n%s", lines, out)
	}
}
