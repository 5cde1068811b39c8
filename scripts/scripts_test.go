// Package scripts holds the tests of the shell scripts beside it:
// fetch-fixtures.sh's choice of Debian source package (by the upstream
// tarball's sha256 and size, never by Debian revision) against a snapshot
// and against apt's live index, setup-cross.sh's readiness check,
// bump-pull-requests.sh's branches and pull requests (bump_pull_requests_test.go)
// and advisory-pull-request.sh's (advisory_pull_request_test.go).
package scripts

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// snapshot is `apt-cache showsrc openssl` as Debian's index listed it
// (fields other than Package, Version, Format, Files, Checksums-Sha256 and
// Directory dropped), with two revisions of 3.5.7 sharing one tarball.
const snapshot = "testdata/openssl.showsrc"

// run runs a script in this directory with stdin and extra environment
// variables and returns its stdout, stderr and error.
func run(t *testing.T, stdin string, env []string, script string, args ...string) (string, string, error) {
	t.Helper()
	// The scripts prepare a Debian or Ubuntu machine (apt, GNU tools).
	testfixture.Declare(t, testfixture.TierGate, "the shell and the tools the scripts run", testfixture.LinuxCross, testfixture.LinuxNative)
	path, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// selectVersions runs fetch-fixtures.sh --select on index and returns the
// Debian versions it chose, in its order, checking each line names the
// release's .orig.tar.gz.
func selectVersions(t *testing.T, index string, r testfixture.Release) []string {
	t.Helper()
	out, stderr, err := run(t, index, nil, "fetch-fixtures.sh", "--select", r.SHA256, strconv.FormatInt(r.Size, 10))
	if err != nil {
		t.Fatalf("fetch-fixtures.sh --select %s %d: %v\n%s", r.SHA256, r.Size, err, stderr)
	}
	var versions []string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasSuffix(f[1], ".orig.tar.gz") {
			t.Fatalf("fetch-fixtures.sh --select: line %q, want \"<debian-version> <name>.orig.tar.gz\"", line)
		}
		versions = append(versions, f[0])
	}
	return versions
}

// record is one source package entry of an apt-cache showsrc listing.
type record struct {
	text    string
	version string
	sha256  []string // "digest size name" lines of Checksums-Sha256
}

func records(index string) []record {
	var rs []record
	for text := range strings.SplitSeq(index, "\n\n") {
		if strings.TrimSpace(text) == "" {
			continue
		}
		r := record{text: text + "\n"}
		inSums := false
		for line := range strings.Lines(text) {
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, " "):
				if inSums {
					r.sha256 = append(r.sha256, strings.TrimSpace(line))
				}
				continue
			case strings.HasPrefix(line, "Version: "):
				r.version = strings.TrimPrefix(line, "Version: ")
			}
			inSums = line == "Checksums-Sha256:"
		}
		rs = append(rs, r)
	}
	return rs
}

func join(rs []record) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.text)
		b.WriteString("\n")
	}
	return b.String()
}

// servesTarball reports whether r lists the release's tarball (digest, size)
// and a signature beside it, and returns the tarball's name.
func (r record) servesTarball(rel testfixture.Release) (string, bool) {
	for _, l := range r.sha256 {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == rel.SHA256 && f[1] == strconv.FormatInt(rel.Size, 10) && strings.HasSuffix(f[2], ".orig.tar.gz") {
			for _, m := range r.sha256 {
				if g := strings.Fields(m); len(g) == 3 && g[2] == f[2]+".asc" {
					return f[2], true
				}
			}
		}
	}
	return "", false
}

// upstream returns the upstream part of a Debian version (no epoch here).
func upstream(debian string) string {
	if i := strings.LastIndex(debian, "-"); i >= 0 {
		return debian[:i]
	}
	return debian
}

func readSnapshot(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSelectByDigest changes Debian's index the ways the mirror changes (a
// revision replaced by another, several revisions of one tarball) and the
// ways a wrong tarball could look right (digest, size, signature), and checks
// fetch-fixtures.sh's choice for every pinned release.
func TestSelectByDigest(t *testing.T) {
	base := readSnapshot(t)
	for _, v := range slices.Sorted(maps.Keys(testfixture.Pinned)) {
		rel := testfixture.Pinned[v]
		size := strconv.FormatInt(rel.Size, 10)
		var serving []string
		for _, r := range records(base) {
			if _, ok := r.servesTarball(rel); ok {
				serving = append(serving, r.version)
			}
		}
		if len(serving) == 0 {
			t.Fatalf("%s: no record in %s serves the pinned tarball; refresh the snapshot", v, snapshot)
		}
		// edit applies f to every record of this release's upstream version.
		edit := func(f func(record) []record) string {
			var out []record
			for _, r := range records(base) {
				if upstream(r.version) == v {
					out = append(out, f(r)...)
				} else {
					out = append(out, r)
				}
			}
			return join(out)
		}
		renamed := func(i int) string { return fmt.Sprintf("%s-7~osslbuildtest%d", v, i) }
		replace := func(r record, old, new string) record {
			r.text = strings.ReplaceAll(r.text, old, new)
			return r
		}
		tests := []struct {
			name  string
			index string
			want  []string // nil: nothing may be selected
			first string   // when set, the version that must come first
		}{
			{
				name:  "as listed",
				index: base,
				want:  serving,
			},
			{
				name: "every revision replaced by one never pinned",
				index: func() string {
					n := 0
					return edit(func(r record) []record {
						n++
						return []record{replace(r, r.version, renamed(n))}
					})
				}(),
				want: func() []string {
					var w []string
					for i := range serving {
						w = append(w, renamed(i+1))
					}
					return w
				}(),
			},
			{
				name: "newer revisions of the same tarball come first",
				index: edit(func(r record) []record {
					return []record{r, replace(r, r.version, v+"-99"), replace(r, r.version, v+"-1~~older")}
				}),
				want:  append([]string{v + "-99", v + "-1~~older"}, serving...),
				first: v + "-99",
			},
			{
				name:  "digest differs",
				index: edit(func(r record) []record { return []record{replace(r, rel.SHA256+" ", strings.Repeat("0", 64)+" ")} }),
			},
			{
				name: "size differs",
				index: edit(func(r record) []record {
					return []record{replace(r, " "+size+" ", " "+strconv.FormatInt(rel.Size+1, 10)+" ")}
				}),
			},
			{
				name: "signature not in the package",
				index: edit(func(r record) []record {
					var kept []string
					for line := range strings.Lines(r.text) {
						if !strings.Contains(line, ".orig.tar.gz.asc") {
							kept = append(kept, line)
						}
					}
					r.text = strings.Join(kept, "")
					return []record{r}
				}),
			},
		}
		for _, tt := range tests {
			t.Run(v+"/"+tt.name, func(t *testing.T) {
				got := selectVersions(t, tt.index, rel)
				// Each version once (the index lists one per suite).
				want := slices.Compact(slices.Sorted(slices.Values(tt.want)))
				if !slices.Equal(slices.Sorted(slices.Values(got)), want) {
					t.Fatalf("selected %q, want %q (once each)", got, want)
				}
				if tt.first != "" && got[0] != tt.first {
					t.Errorf("selected %q: want %s first (newest revision)", got, tt.first)
				}
			})
		}
	}
}

// TestSelectOnAptIndex runs the selection against apt's live source index,
// as fetch-fixtures.sh does on a new machine: every pinned release must have
// a listed source package whose record carries the pinned digest and size.
func TestSelectOnAptIndex(t *testing.T) {
	testfixture.NeedTier(t, testfixture.TierFull, "Debian's source index, which scripts/fetch-fixtures.sh sets up")
	testfixture.On(t, testfixture.LinuxCross)
	if _, err := exec.LookPath("apt-cache"); err != nil {
		testfixture.Missing(t, "apt-cache: %v (fetch-fixtures.sh uses Debian's source index)", err)
	}
	out, err := exec.CommandContext(t.Context(), "apt-cache", "showsrc", "openssl").Output()
	if err != nil || len(out) == 0 {
		testfixture.Missing(t, "apt has no source index for openssl (apt-cache showsrc openssl: %v); fetch-fixtures.sh adds the deb-src entries when it downloads", err)
	}
	index := string(out)

	stdout, stderr, err := run(t, "", nil, "fetch-fixtures.sh", "--candidates")
	if err != nil {
		t.Fatalf("fetch-fixtures.sh --candidates: %v\n%s%s", err, stdout, stderr)
	}
	chosen := map[string][]string{}
	for line := range strings.Lines(stdout) {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("fetch-fixtures.sh --candidates: line %q, want \"<upstream> <debian-version> <orig>\"", line)
		}
		chosen[f[0]] = append(chosen[f[0]], f[1])
	}
	if got, want := slices.Sorted(maps.Keys(chosen)), slices.Sorted(maps.Keys(testfixture.Pinned)); !slices.Equal(got, want) {
		t.Fatalf("fetch-fixtures.sh pins %q, internal/testsupport/testfixture pins %q", got, want)
	}
	for v, versions := range chosen {
		rel := testfixture.Pinned[v]
		for _, dv := range versions {
			ok := false
			for _, r := range records(index) {
				if _, serves := r.servesTarball(rel); serves && r.version == dv {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s: chose openssl=%s, whose record does not list sha256 %s and %d bytes with a signature", v, dv, rel.SHA256, rel.Size)
			}
		}
		// The same selection, given the index on stdin.
		if got := selectVersions(t, index, rel); !slices.Equal(got, versions) {
			t.Errorf("%s: --select chose %q, --candidates %q", v, got, versions)
		}
	}
}

// TestSetupCheck runs setup-cross.sh --check (it installs nothing): it must
// name a Go older than go.mod's go line and say where to get one, and pass
// on a machine set up for CI.
func TestSetupCheck(t *testing.T) {
	testfixture.NeedTier(t, testfixture.TierGate, "setup-cross.sh --check on a machine set up for CI")
	testfixture.On(t, testfixture.LinuxCross)
	if _, err := exec.LookPath("go"); err != nil {
		testfixture.Missing(t, "go: %v", err)
	}
	tests := []struct {
		name  string
		gomod string
		want  []string
	}{
		{"go.mod wants a newer Go", "module example.com/x\n\ngo 1.99.0\n", []string{"older than go.mod's 'go 1.99.0'", "https://go.dev/dl/"}},
		{"go.mod without a go line", "module example.com/x\n", []string{"no 'go' line"}},
	}
	src, err := os.ReadFile("setup-cross.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "scripts"), 0o755); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, "scripts", "setup-cross.sh")
			if err := os.WriteFile(script, src, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tt.gomod), 0o644); err != nil {
				t.Fatal(err)
			}
			// GOTOOLCHAIN=local: no toolchain download is attempted.
			_, stderr, err := run(t, "", []string{"GOTOOLCHAIN=local"}, script, "--check")
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("setup-cross.sh --check: %v, want exit status 1\n%s", err, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("setup-cross.sh --check said\n%s\nwant it to contain %q", stderr, w)
				}
			}
		})
	}
	t.Run("this machine", func(t *testing.T) {
		if _, stderr, err := run(t, "", nil, "setup-cross.sh", "--check"); err != nil {
			testfixture.Missing(t, "setup-cross.sh --check: %v\n%s", err, stderr)
		}
	})
}

// TestBuildOsslcheckReproducible: the prebuilt osslcheck binaries the
// release workflow publishes are the same bytes whoever builds them: the
// four of scripts/build-osslcheck.sh, then linux/amd64 again into another
// directory under another time zone and umask, compared by sha256; each
// binary records the build settings that make it so, is for its machine
// and names its version.
//
// The second build shares Go's build cache, so it links again but
// compiles nothing. An empty cache (as this test had until #59) adds
// only the compiler's own determinism, which Go holds since 1.21 and
// checks itself (go.dev/blog/rebuild; golang.org/x/build's gorebuild);
// what is this project's is the script's flags, held below, and the
// link. The empty cache cost 38 CPU-seconds a run.
func TestBuildOsslcheckReproducible(t *testing.T) {
	// Five builds of osslcheck: on a new machine the darwin and arm64
	// standard libraries compile first, more than the pull-request gate's
	// budget (release-osslcheck.yml builds the same way on a tag).
	testfixture.NeedTier(t, testfixture.TierFull, "five builds of osslcheck")
	root := testfixture.RepoRoot()
	script := filepath.Join(root, "scripts", "build-osslcheck.sh")
	a, b := t.TempDir(), t.TempDir()
	run := func(env []string, out string, umask string) map[string]string {
		t.Helper()
		cmd := exec.Command("sh", "-c", "umask "+umask+" && exec \"$0\" \"$1\"", script, out)
		cmd.Env = append(os.Environ(), env...)
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, o)
		}
		sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
			if f := strings.Fields(l); len(f) == 2 {
				m[f[1]] = f[0]
			}
		}
		return m
	}
	all := run(nil, a, "022")
	if got := slices.Sorted(maps.Keys(all)); !slices.Equal(got, []string{"osslcheck-darwin-amd64", "osslcheck-darwin-arm64", "osslcheck-linux-amd64", "osslcheck-linux-arm64"}) {
		t.Fatalf("SHA256SUMS lists %v", got)
	}
	again := run([]string{"OSSLCHECK_TARGETS=linux/amd64", "TZ=Pacific/Kiritimati"}, b, "077")
	if again["osslcheck-linux-amd64"] != all["osslcheck-linux-amd64"] {
		t.Errorf("linux/amd64 built twice: %s, then %s elsewhere", all["osslcheck-linux-amd64"], again["osslcheck-linux-amd64"])
	}
	// What another builder's cache cannot change and the script must
	// say: no paths, no cgo (no host C toolchain in the bytes). (With
	// -trimpath, Go records no -ldflags.)
	for _, name := range slices.Sorted(maps.Keys(all)) {
		bi, err := buildinfo.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string]string{}
		for _, s := range bi.Settings {
			got[s.Key] = s.Value
		}
		for k, v := range map[string]string{"-trimpath": "true", "CGO_ENABLED": "0"} {
			if got[k] != v {
				t.Errorf("%s: build setting %s = %q, want %q", name, k, got[k], v)
			}
		}
	}
	for name, magic := range map[string][]byte{"osslcheck-linux-amd64": []byte("\x7fELF"), "osslcheck-darwin-arm64": {0xcf, 0xfa, 0xed, 0xfe}} {
		data, err := os.ReadFile(filepath.Join(a, name))
		if err != nil || !bytes.HasPrefix(data, magic) || bytes.Contains(data, []byte(root)) {
			t.Errorf("%s: %v, magic % x, holds the checkout's path: %v", name, err, data[:min(4, len(data))], bytes.Contains(data, []byte(root)))
		}
	}
	out, err := exec.Command(filepath.Join(a, "osslcheck-linux-amd64"), "-version").Output()
	if err != nil || !strings.HasPrefix(string(out), "osslcheck ") {
		t.Errorf("-version: %v %q", err, out)
	}
}
