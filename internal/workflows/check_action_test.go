package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/testsupport/wheeltest"
)

func checkActionPath() string { return filepath.Join(testfixture.RepoRoot(), "check", "action.yml") }

// TestCheckActionMetadata: check/action.yml is a described composite
// action whose inputs are documented and reach its scripts only through
// the environment, with its actions pinned.
func TestCheckActionMetadata(t *testing.T) {
	a := loadActionFile(t, checkActionPath())
	if a.Name == "" || a.Description == "" || a.Runs.Using != "composite" {
		t.Errorf("name %q, description %q, using %q", a.Name, a.Description, a.Runs.Using)
	}
	want := []string{"advisories", "arch", "fail-on", "isa", "minopt", "path", "sarif", "strict", "vex"}
	if got := slices.Sorted(maps.Keys(a.Inputs)); !slices.Equal(got, want) {
		t.Errorf("inputs %v, want %v", got, want)
	}
	for name, in := range a.Inputs {
		if in.Description == "" || (name == "path") != in.Required || !in.Required && in.Default == nil {
			t.Errorf("input %s: description %q, required %v, default %v", name, in.Description, in.Required, in.Default)
		}
	}
	for i, st := range a.Runs.Steps {
		if strings.Contains(st.Run, "${{") {
			t.Errorf("step %d: an expression inside run: is a shell injection; pass it through env", i)
		}
		if st.Uses != "" && pinnedRe.FindStringSubmatch(st.Uses) == nil {
			t.Errorf("step %d: uses %s is not pinned to a commit", i, st.Uses)
		}
	}
}

// TestCheckActionRuns runs check/action.yml from a consumer's workspace
// the way the runner does: a wheelhouse glob with the pyca bug in one
// wheel fails the step with an annotation and a step-summary table; the
// good wheel alone passes; a pattern that matches nothing and a hostile
// file name fail safely; the SARIF file is written.
// assessedHigh writes a plain list assessing every high or critical
// advisory affecting OpenSSL release rel, from the embedded table.
func assessedHigh(t *testing.T, rel string) string {
	t.Helper()
	tab, err := advisory.Default()
	if err != nil {
		t.Fatal(err)
	}
	m, err := tab.Affecting(rel)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range m.Findings {
		if f.Severity.AtLeast(advisory.High) {
			fmt.Fprintf(&b, "%s not affected: assessed for this test\n", f.CVE)
		}
	}
	p := filepath.Join(t.TempDir(), "assessed.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckActionRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles osslcheck")
	}
	a := loadActionFile(t, checkActionPath())
	in := wheeltest.Inputs(t)
	newJob := func(name string, inputs map[string]string, files map[string]string) invocation {
		ws := t.TempDir()
		for dst, src := range files {
			p := filepath.Join(ws, dst)
			os.MkdirAll(filepath.Dir(p), 0o755)
			testfixture.CopyFile(t, src, p)
		}
		return invocation{name: name, inputs: inputs, workspace: ws, temp: t.TempDir(), env: jobEnv()}
	}
	hostileName := "wheelhouse/x%0A::warning title=INJ::b.whl"
	bad := map[string]string{"wheelhouse/bad-1.0-cp311-abi3-macosx_11_0_arm64.whl": in["wheel"], "wheelhouse/ok-1.0-cp311-abi3-macosx_11_0_arm64.whl": in["good-wheel"]}
	good := map[string]string{"wheelhouse/ok-1.0-cp311-abi3-macosx_11_0_arm64.whl": in["good-wheel"]}
	// outside is a directory beside the workspace, where nothing may be
	// written or run.
	outside := t.TempDir()
	link := func(name, target string) func(t *testing.T, ws string) {
		return func(t *testing.T, ws string) {
			if err := os.Symlink(strings.ReplaceAll(target, "$WS", ws), filepath.Join(ws, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// An assessment of every high or critical advisory affecting the good
	// wheel's OpenSSL (3.5.7), as a wheel's maintainers would write it.
	severe := assessedHigh(t, "3.5.7")
	withVEX := map[string]string{"wheelhouse/ok-1.0-cp311-abi3-macosx_11_0_arm64.whl": in["good-wheel"], "security/assessed.txt": severe}
	for _, tc := range []struct {
		name    string
		inputs  map[string]string
		files   map[string]string
		ok      bool
		log     []string // in the log
		summary []string // in the step summary
		setup   func(t *testing.T, ws string)
		absent  []string // files that must not exist afterwards ($WS: the workspace)
	}{
		{"the pyca bug in a wheelhouse", map[string]string{"path": "wheelhouse/*.whl", "minopt": "3", "sarif": "out/check.sarif"},
			map[string]string{"wheelhouse/bad-1.0-cp311-abi3-macosx_11_0_arm64.whl": in["wheel"], "wheelhouse/ok-1.0-cp311-abi3-macosx_11_0_arm64.whl": in["good-wheel"]},
			false, []string{"::error file=wheelhouse/bad-1.0-cp311-abi3-macosx_11_0_arm64.whl,title=osslbuild check%3A pkg/_rust.abi3.so arm64::", "osslcheck "},
			[]string{"| artifact | arch |", "bad-1.0-cp311-abi3-macosx\\_11\\_0\\_arm64.whl(pkg/\\_rust.abi3.so) | arm64 | 3.5.7", "FAILED"}, nil, nil},
		{"a good wheel", map[string]string{"path": "wheelhouse/*.whl", "arch": "arm64", "strict": "true"},
			map[string]string{"wheelhouse/ok-1.0-cp311-abi3-macosx_11_0_arm64.whl": in["good-wheel"]},
			true, nil, []string{"ok-1.0-cp311-abi3-macosx\\_11\\_0\\_arm64.whl(pkg/\\_rust.abi3.so) | arm64 | 3.5.7 | 11.0 | -O3"}, nil, nil},
		// OpenSSL's advisories: reported, failed with fail-on, suppressed
		// by an assessment.
		{"a good wheel with fail-on high", map[string]string{"path": "wheelhouse/*.whl", "fail-on": "high"}, good,
			false, []string{"::error file=wheelhouse/ok-1.0-cp311-abi3-macosx_11_0_arm64.whl,title=osslbuild check%3A pkg/_rust.abi3.so arm64::", "OpenSSL 3.5.7: ", "at or above high (-fail-on=high): ", "CVE-2026-84782 (high, fixed in 3.5.9)"},
			[]string{"| advisories |", "FAIL (advisory)", "advisories: OpenSSL's advisories through "}, nil, nil},
		{"a good wheel, its high advisories assessed", map[string]string{"path": "wheelhouse/*.whl", "fail-on": "high", "vex": "security/assessed.txt"}, withVEX,
			true, []string{"suppressed as assessed (CVE-"}, []string{"suppressed by security/assessed.txt (CVE-"}, nil, nil},
		{"a bad fail-on input", map[string]string{"path": "wheelhouse/*.whl", "fail-on": "severe"}, good,
			false, []string{"-fail-on=severe: want low, moderate, high or critical (or none)"}, nil, nil, nil},
		{"a pattern that matches nothing", map[string]string{"path": "dist/*.whl"}, nil,
			false, []string{"::error title=osslcheck::check: lstat dist/*.whl: no such file or directory"}, nil, nil, nil},
		{"a bad strict input", map[string]string{"path": "x", "strict": "yes"}, nil,
			false, []string{"::error title=osslbuild check::input strict: want true or false"}, nil, nil, nil},
		{"a hostile file name", map[string]string{"path": "wheelhouse/*.whl"},
			map[string]string{hostileName: in["wheel"]}, false, []string{"%3A%3Awarning title=INJ%3A%3Ab.whl"}, nil, nil, nil},
		// Issue #35: path lines are files, never flags. Before "--", the
		// line -python made osslcheck run the next file as the interpreter.
		{"a path line -python before a program", map[string]string{"path": "-python\n./evil"}, nil,
			false, []string{"lstat -python: no such file or directory"}, nil,
			func(t *testing.T, ws string) {
				os.WriteFile(filepath.Join(ws, "evil"), []byte("#!/bin/sh\ntouch \"$(dirname \"$0\")/ran\"\n"), 0o755)
			}, []string{"$WS/ran"}},
		// A glob's match named -version made osslcheck print its version
		// and pass the step.
		{"a file named -version matched by a glob", map[string]string{"path": "*"},
			map[string]string{"bad.whl": in["wheel"], "-version": in["good-wheel"]}, false,
			[]string{"::error file=bad.whl,title=osslbuild check%3A pkg/_rust.abi3.so arm64::", "-version(pkg/_rust.abi3.so)"}, nil, nil, nil},
		// The SARIF file stays inside the workspace.
		{"sarif ../", map[string]string{"path": "wheelhouse/*.whl", "sarif": "../escape.sarif"}, good,
			false, []string{"::error title=osslbuild check::input sarif: resolves outside the workspace"}, nil, nil, []string{"$WS/../escape.sarif"}},
		{"sarif through .. inside a directory", map[string]string{"path": "wheelhouse/*.whl", "sarif": "out/../../escape.sarif"}, good,
			false, []string{"::error title=osslbuild check::input sarif: resolves outside the workspace"}, nil, nil, []string{"$WS/../escape.sarif"}},
		{"sarif absolute", map[string]string{"path": "wheelhouse/*.whl", "sarif": outside + "/abs.sarif"}, good,
			false, []string{"::error title=osslbuild check::input sarif: an absolute path"}, nil, nil, []string{outside + "/abs.sarif"}},
		{"sarif through a directory link leaving the workspace", map[string]string{"path": "wheelhouse/*.whl", "sarif": "reports/sub/x.sarif"}, good,
			false, []string{"::error title=osslbuild check::input sarif: resolves outside the workspace"}, nil,
			link("reports", outside), []string{outside + "/sub", outside + "/x.sarif"}},
		{"sarif a file link leaving the workspace", map[string]string{"path": "wheelhouse/*.whl", "sarif": "x.sarif"}, good,
			false, []string{"::error title=osslbuild check::input sarif: is a symbolic link"}, nil,
			link("x.sarif", outside+"/linked.sarif"), []string{outside + "/linked.sarif"}},
		{"sarif through a link inside the workspace", map[string]string{"path": "wheelhouse/*.whl", "minopt": "3", "sarif": "res/check.sarif"}, bad,
			false, []string{"::error file=wheelhouse/bad-1.0-cp311-abi3-macosx_11_0_arm64.whl"}, nil,
			func(t *testing.T, ws string) {
				os.Mkdir(filepath.Join(ws, "real"), 0o755)
				link("res", "$WS/real")(t, ws)
			}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(tc.name, tc.inputs, tc.files)
			if tc.setup != nil {
				tc.setup(t, j.workspace)
			}
			res := a.run(context.Background(), j)
			for _, p := range tc.absent {
				p = strings.ReplaceAll(p, "$WS", j.workspace)
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s exists: the action wrote or ran outside what it was given", p)
				}
			}
			if (res.err == nil) != tc.ok {
				t.Fatalf("err %v, want ok %v\n%s", res.err, tc.ok, tail(res.log))
			}
			for _, w := range tc.log {
				if !strings.Contains(res.log, w) {
					t.Errorf("log lacks %q:\n%s", w, tail(res.log))
				}
			}
			for _, w := range tc.summary {
				if !strings.Contains(res.summary, w) {
					t.Errorf("step summary lacks %q:\n%s", w, res.summary)
				}
			}
			for _, l := range strings.Split(res.log, "\n") {
				if strings.HasPrefix(strings.TrimLeft(l, " \t"), "::warning title=INJ") {
					t.Errorf("a file name started a workflow command: %q", l)
				}
			}
			if s := tc.inputs["sarif"]; s != "" {
				b, err := os.ReadFile(filepath.Join(j.workspace, s))
				var doc struct {
					Version string `json:"version"`
					Runs    []struct {
						Results []struct {
							RuleID string `json:"ruleId"`
						} `json:"results"`
					} `json:"runs"`
				}
				if len(tc.absent) > 0 {
					return // refused: no SARIF written
				}
				if err != nil || json.Unmarshal(b, &doc) != nil || doc.Version != "2.1.0" {
					t.Fatalf("sarif %s: %v %s", s, err, b)
				}
				// One failure, and the advisories of 3.5.7 in results
				// of their own.
				var rules []string
				for _, r := range doc.Runs[0].Results {
					if r.RuleID != "advisory" {
						rules = append(rules, r.RuleID)
					}
				}
				if !slices.Equal(rules, []string{"optimisation"}) || len(rules) == len(doc.Runs[0].Results) {
					t.Errorf("sarif %s: results %+v", s, doc.Runs[0].Results)
				}
			}
		})
	}
}
