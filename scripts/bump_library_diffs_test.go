package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/bump"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// fakeGo stands in for the go command's two uses in
// bump-library-diffs.sh: `go tool mage build:arm64 -version=V -out=D`
// "builds" by copying the artifact $FAKE_BUILT/V (a real mini build) to D,
// failing for a version it has none of; `go run ./internal/bump/librarydiff`
// runs the real command, built by the test.
const fakeGo = `#!/usr/bin/env bash
set -eu
printf '%s\n' "$*" >>"$FAKE_BUILT/calls"
if [ "$1 $2" = "run ./internal/bump/librarydiff" ]; then
	shift 2
	exec "$LIBRARYDIFF" "$@"
fi
[ "$1 $2 $3" = "tool mage build:arm64" ] || { echo "fake go: unexpected: $*" >&2; exit 1; }
shift 3
v= out=
for a in "$@"; do
	case $a in
	-version=*) v=${a#-version=} ;;
	-out=*) out=${a#-out=} ;;
	esac
done
[ -d "$FAKE_BUILT/$v" ] || { echo "fake go: no release $v" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
cp -R "$FAKE_BUILT/$v" "$out"
`

// TestBumpLibraryDiffs: the library job's script builds the previous pin
// and the proposed release of each proposal (the proposed one from the
// proposal's recipe), writes the comparison to DIFFS/<series>/, skips a
// new series, and when one series' build fails reports it, compares the
// others and exits 1.
func TestBumpLibraryDiffs(t *testing.T) {
	testfixture.NeedToolchain(t)
	old := minitest.Build(t, "arm64", minitest.Options{})
	cur := minitest.Build(t, "arm64", minitest.Options{Version: "9.9.10", Options: []string{"no-shared", "no-idea"}})
	tmp := t.TempDir()
	fake := filepath.Join(tmp, "built")
	bin := filepath.Join(tmp, "bin")
	for _, d := range []string{fake, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for v, a := range map[string]string{"9.9.9": old.Dir, "9.9.10": cur.Dir} {
		if err := os.CopyFS(filepath.Join(fake, v), os.DirFS(a)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	librarydiff := filepath.Join(tmp, "librarydiff")
	build := exec.Command("go", "build", "-o", librarydiff, "./internal/bump/librarydiff")
	build.Dir = testfixture.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build librarydiff: %v\n%s", err, out)
	}

	props := filepath.Join(tmp, "proposals")
	res := func(v string) *bump.Result {
		return &bump.Result{Recipe: "recipes/openssl.toml", Release: recipe.Release{Version: v}, OldDefault: "9.9.9", NewDefault: "9.9.9",
			After: []byte("# recipe with " + v + "\n"), Diff: "+version = \"" + v + "\"\n"}
	}
	if err := bump.WriteProposals(props, []bump.Proposal{
		{Series: "9.9", Pinned: "9.9.9", Result: res("9.9.10")},
		{Series: "9.10", Result: res("9.10.0")},
		{Series: "9.8", Pinned: "9.8.1", Result: res("9.8.2")}, // no build of these: fails
	}); err != nil {
		t.Fatal(err)
	}
	diffs := filepath.Join(tmp, "diffs")
	cmd := exec.Command("bash", filepath.Join(testfixture.RepoRoot(), "scripts", "bump-library-diffs.sh"), props, filepath.Join(tmp, "out"), diffs)
	cmd.Dir = testfixture.RepoRoot()
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_BUILT="+fake, "LIBRARYDIFF="+librarydiff)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1 (series 9.8 cannot be built)\n%s", err, out)
	}
	for _, want := range []string{
		"series 9.9: compared OpenSSL 9.9.9 and 9.9.10",
		"series 9.10: OpenSSL 9.10.0 starts a new series: nothing to compare",
		"series 9.8: building or comparing OpenSSL 9.8.1 and 9.8.2 failed",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	calls, _ := os.ReadFile(filepath.Join(fake, "calls"))
	if want := "tool mage build:arm64 -recipe=" + filepath.Join(props, "9.9", "openssl.toml") + " -version=9.9.10 -out="; !strings.Contains(string(calls), want) {
		t.Errorf("the proposed release is not built from the proposal's recipe (want %q):\n%s", want, calls)
	}
	got, err := os.ReadFile(filepath.Join(diffs, "9.9", "library-diff.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"of the 9.9.9 artifact and the 9.9.10 one", "+ no-idea"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("library-diff.md lacks %q:\n%s", want, got)
		}
	}
	for _, s := range []string{"9.10", "9.8"} {
		if _, err := os.Stat(filepath.Join(diffs, s)); err == nil {
			t.Errorf("diffs/%s written for a series with nothing compared", s)
		}
	}
}
