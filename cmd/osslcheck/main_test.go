package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"

	osslcheckmain "github.com/osslbuild/osslbuild/cmd/osslcheck"
	"github.com/osslbuild/osslbuild/internal/testsupport/sbomtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/testsupport/wheeltest"
)

// binaries gives osslcheck (this test binary, run as osslcheck) and the
// mage binary of this repository, compiled once per test process (it
// takes seconds; the tests share it).
func binaries(t *testing.T) (osslcheck, mage string) {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the mage binary")
	}
	built.once.Do(func() {
		defer testfixture.MageLock(t)()
		dir, err := os.MkdirTemp("", "osslcheck-test-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		// osslcheck is this test binary under that name, which
		// testscript.Main (TestMain) put on PATH: building it again would
		// compile its packages a second time on a cold build cache.
		if built.osslcheck, err = exec.LookPath("osslcheck"); err != nil {
			built.err = err
			return
		}
		built.mage = filepath.Join(dir, "mage")
		for _, args := range [][]string{
			{"go", "tool", "mage", "-compile", built.mage},
		} {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = testfixture.RepoRoot()
			if out, err := cmd.CombinedOutput(); err != nil {
				built.err = fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.osslcheck, built.mage
}

// built holds the binaries of binaries, removed by TestMain.
var built struct {
	once                 sync.Once
	dir, osslcheck, mage string
	err                  error
}

// TestMain makes this test binary the scripts' osslcheck command as well
// (testscript.Main runs main when it is started under that name).
func TestMain(m *testing.M) {
	testscript.Main(removeBuilt{m}, map[string]func(){"osslcheck": osslcheckmain.Main})
}

// removeBuilt runs the tests, then removes what binaries built.
type removeBuilt struct{ m *testing.M }

func (r removeBuilt) Run() int {
	code := r.m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	return code
}

// execute runs a binary: its stdout and exit code.
func execute(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "GITHUB_STEP_SUMMARY=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := testfixture.ExitCode(t, cmd)
	return out.String(), code
}

// sarifVersion drops the tool's own version, the one field where a mage
// binary and osslcheck differ by design: SARIF's driver version, and a
// CycloneDX SBOM's tools with the serial number derived from them.
func sarifVersion(s string) string {
	var doc map[string]any
	if json.Unmarshal([]byte(s), &doc) != nil {
		return s
	}
	if doc["bomFormat"] == "CycloneDX" {
		delete(doc, "serialNumber")
		if md, ok := doc["metadata"].(map[string]any); ok {
			delete(md, "tools")
		}
	}
	if runs, ok := doc["runs"].([]any); ok {
		for _, r := range runs {
			delete(r.(map[string]any)["tool"].(map[string]any)["driver"].(map[string]any), "version")
		}
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

// TestSameAsMageCheck holds osslcheck to `go tool mage check`: the same
// stdout (table, JSON, SARIF) and exit code on the same inputs and flags,
// with the path before the flags (as mage takes it) and after them; a
// usage error (a bad flag value) exits 2 from both.
func TestSameAsMageCheck(t *testing.T) {
	osslcheck, mage := binaries(t)
	in := wheeltest.Inputs(t)
	for _, name := range []string{"wheel", "wheelhouse", "pe", "site-packages", "missing"} {
		for _, flags := range [][]string{nil, {"-json"}, {"-format=sarif"}, {"-format=cyclonedx"}, {"-minopt=3", "-strict"}, {"-arch=arm64,x86_64"}, {"-minopt=7"}, {"-isa=haswell"}} {
			usage := slices.Contains(flags, "-minopt=7") || slices.Contains(flags, "-isa=haswell")
			t.Run(name+" "+strings.Join(flags, " "), func(t *testing.T) {
				args := append([]string{in[name]}, flags...)
				want, wantCode := execute(t, mage, append([]string{"check"}, args...)...)
				got, code := execute(t, osslcheck, args...)
				after, afterCode := execute(t, osslcheck, append(slices.Clone(flags), in[name])...)
				if code != wantCode || afterCode != wantCode || sarifVersion(got) != sarifVersion(want) || after != got {
					t.Errorf("osslcheck exit %d (path last: %d), mage check exit %d\nosslcheck:\n%s\nmage check:\n%s", code, afterCode, wantCode, got, want)
				}
				if name == "missing" && code == 0 || name == "wheel" && code != 1 && !usage || usage && code != 2 {
					t.Errorf("exit %d", code)
				}
			})
		}
	}
}

// TestSARIFSchema validates -format=sarif against the SARIF 2.1.0 schema
// (@microsoft/jest-sarif's copy of the OASIS one, from the npm registry);
// testdata/script/verdicts.txtar holds it to one result per failing slice.
func TestSARIFSchema(t *testing.T) {
	osslcheck, _ := binaries(t)
	in := wheeltest.Inputs(t)
	schema := sarifSchema(t)
	// (A path that cannot be checked at all prints no log: exit 1 and the
	// error on stderr, as for every format.)
	for _, name := range []string{"wheel", "wheelhouse", "pe", "site-packages"} {
		out, _ := execute(t, osslcheck, in[name], "-format=sarif")
		var doc any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", name, err, out)
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("%s: SARIF does not validate: %v\n%s", name, err, out)
		}
	}
}

// TestCycloneDXSchema validates -format=cyclonedx against the CycloneDX
// 1.5 schema the cyclonedx-go module ships, and holds it to the same
// bytes on a second run.
func TestCycloneDXSchema(t *testing.T) {
	osslcheck, _ := binaries(t)
	in := wheeltest.Inputs(t)
	for _, name := range []string{"wheel", "wheelhouse", "pe", "site-packages"} {
		out, _ := execute(t, osslcheck, in[name], "-format=cyclonedx")
		again, _ := execute(t, osslcheck, in[name], "-format=cyclonedx")
		if out != again {
			t.Errorf("%s: two runs differ", name)
		}
		p := filepath.Join(t.TempDir(), "bom.json")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		doc := sbomtest.Validate(t, p)
		if comps, _ := doc["components"].([]any); len(comps) == 0 {
			t.Errorf("%s: no components:\n%s", name, out)
		}
	}
}

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	tgz := testfixture.Realworld(t, "@microsoft/jest-sarif", "1.0.0-beta.0")
	dir := t.TempDir()
	testfixture.RunIn(t, dir, "tar", "-xzf", tgz, "package/lib/schemas/sarif-2.1.0-rtm.5.json")
	p := filepath.Join(dir, "package/lib/schemas/sarif-2.1.0-rtm.5.json")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPython audits the real interpreter here: its _ssl and _hashlib
// load Debian's libssl.so.3 and libcrypto.so.3 (OpenSSL 3.0, -O2), which
// are judged; the modules themselves only hold the headers' version.
func TestPython(t *testing.T) {
	osslcheck, _ := binaries(t)
	testfixture.Tools(t, "python3")
	out, code := execute(t, osslcheck, "-python", "-json")
	var res struct {
		Path     string
		OK       bool
		Binaries []struct {
			Path   string
			Slices []struct {
				Status, Opt, Version string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s", code, err, out)
	}
	got := map[string]string{}
	for _, b := range res.Binaries {
		base := filepath.Base(b.Path)
		for _, prefix := range []string{"_ssl.", "_hashlib.", "libcrypto.so", "libssl.so"} {
			if strings.HasPrefix(base, prefix) && len(b.Slices) > 0 {
				got[prefix] = b.Slices[0].Status
			}
		}
	}
	want := map[string]string{"_ssl.": "not judged", "_hashlib.": "not judged", "libcrypto.so": "ok", "libssl.so": "ok"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: status %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if code != 0 || !res.OK || !strings.Contains(res.Path, "Python 3") {
		t.Errorf("exit %d, ok %v, path %q", code, res.OK, res.Path)
	}
}

// TestDependencies: osslcheck holds only what the check needs, and the
// module stays installable with go install pkg@version (which refuses a
// go.mod with replace or exclude directives).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/osslbuild/osslbuild/cmd/osslcheck").Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{"github.com/pelletier/go-toml/v2", "github.com/hashicorp/go-version", "github.com/CycloneDX/cyclonedx-go",
		"github.com/schollz/progressbar/v3", "github.com/magefile/mage", "github.com/osslbuild/osslbuild/internal/toolchain",
		"github.com/osslbuild/osslbuild/internal/source/unpack", "github.com/osslbuild/osslbuild/internal/recipe",
		"github.com/osslbuild/osslbuild/internal/configure", "github.com/osslbuild/osslbuild/internal/proc"} {
		if slices.Contains(deps, banned) {
			t.Errorf("osslcheck depends on %s", banned)
		}
	}
	var third []string
	for _, d := range deps {
		first, _, _ := strings.Cut(d, "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(d, "github.com/osslbuild/") {
			third = append(third, d)
		}
	}
	// x/arch decodes the instruction sets (x86-64 levels, arm64
	// extensions); x/term (with x/sys) gives the terminal's width the
	// table fits.
	want := []string{"golang.org/x/arch/arm64/arm64asm", "golang.org/x/arch/x86/x86asm", "golang.org/x/sys/unix", "golang.org/x/term"}
	if !slices.Equal(third, want) {
		t.Errorf("third-party packages %v, want %v", third, want)
	}
	mod, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "replace" || f[0] == "exclude") {
			t.Errorf("go.mod: %q: go install osslcheck@version refuses a module with it", line)
		}
	}
}
