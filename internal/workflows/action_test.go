package workflows

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/sbomtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/sigtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// pycaFlags is pyca/infra's OPENSSL_BUILD_FLAGS.
const pycaFlags = "no-zlib no-shared no-module no-comp no-apps no-docs no-sm2-precomp no-atexit enable-ec_nistp_64_gcc_128"

// actionUses lists the uses: references of action.yml's steps, checking
// each line's pin and version comment as TestPinned does for workflows.
func actionUses(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(actionPath())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		m := usesLineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if pinnedRe.FindStringSubmatch(m[1]) == nil || !versionCommentRe.MatchString(line) {
			t.Errorf("action.yml:%d: %q is not pinned to a commit with a version comment", i+1, strings.TrimSpace(line))
		}
		out = append(out, m[1])
	}
	return out
}

// TestActionMetadata: action.yml is a composite action with exactly the
// inputs and outputs documented, whose scripts take inputs only through
// their environment (an expression inside a script is a shell injection),
// and whose actions are pinned as the workflows' are.
func TestActionMetadata(t *testing.T) {
	a := loadAction(t)
	if a.Name == "" || a.Description == "" || a.Runs.Using != "composite" {
		t.Errorf("name %q, description %q, runs.using %q: want a described composite action", a.Name, a.Description, a.Runs.Using)
	}
	wantIn := []string{"arm64-artifact", "openssl-options", "openssl-sha256", "openssl-version", "output-dir", "recipe", "target", "x86_64-artifact"}
	if got := slices.Sorted(maps.Keys(a.Inputs)); !slices.Equal(got, wantIn) {
		t.Errorf("inputs %v, want %v", got, wantIn)
	}
	for name, in := range a.Inputs {
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
		if (name == "target") != in.Required {
			t.Errorf("input %s: required %v; only target is required", name, in.Required)
		}
		if !in.Required && in.Default == nil {
			t.Errorf("input %s: optional without a default", name)
		}
	}
	if d := a.Inputs["output-dir"].Default; d == nil || *d != "dist" {
		t.Errorf("output-dir default %v, want dist", d)
	}
	wantOut := []string{"artifact-dir", "sha256", "tarball"}
	if got := slices.Sorted(maps.Keys(a.Outputs)); !slices.Equal(got, wantOut) {
		t.Errorf("outputs %v, want %v", got, wantOut)
	}
	for name, o := range a.Outputs {
		if o.Value != "${{ steps.build.outputs."+name+" }}" || o.Description == "" {
			t.Errorf("output %s = %q, want the build step's output of that name, described", name, o.Value)
		}
	}
	ids := map[string]bool{}
	for i, st := range a.Runs.Steps {
		ids[st.ID] = true
		switch {
		case st.Uses != "":
			if strings.HasPrefix(st.Uses, "actions/setup-go@") && st.With["cache"] != "false" {
				t.Errorf("step %d: setup-go with cache %q: release outputs must not depend on a cache others can write", i, st.With["cache"])
			}
		case st.Run != "":
			if st.Shell != "bash" {
				t.Errorf("step %d (%s): shell %q, want bash", i, st.Name, st.Shell)
			}
			if strings.Contains(st.Run, "${{") {
				t.Errorf("step %d (%s): an expression inside run: is spliced into the script; pass it through env:", i, st.Name)
			}
		default:
			t.Errorf("step %d: neither uses nor run", i)
		}
	}
	if !ids["build"] || !ids["compile"] {
		t.Errorf("step ids %v: want compile and build", ids)
	}
	// What only a Mac can say of a recipe's dylibs, that macOS accepts
	// their signatures, is asked of codesign there, and a refusal fails
	// the job through the escaping writer (docs/building.md says so).
	codesign := false
	for _, st := range a.Runs.Steps {
		if i := strings.Index(st.Run, "codesign --verify --strict"); i >= 0 {
			codesign = strings.Contains(st.Run, `if [ "$(uname -s)" = Darwin ]`) && strings.Contains(st.Run, "lib/*.dylib") &&
				strings.Contains(st.Run[i:], `actions:error osslbuild "codesign --verify --strict refuses`)
		}
	}
	if !codesign {
		t.Error("action.yml does not run codesign --verify --strict on every dylib on macOS, failing on a refusal")
	}
	if len(actionUses(t)) == 0 {
		t.Error("action.yml uses no setup-go: nothing provides the Go it needs")
	}
}

// The slices and what names them.
var sliceArtifacts = map[string]string{"arm64": "openssl-macos-arm64", "x86_64": "openssl-macos-x86-64"}

// TestActionRuns runs the action's own scripts the way GitHub Actions runs
// them, for the workflow in docs/pyca-infra.md fed with a pyca-style
// openssl-version.sh (openssl-4.0.2, its sha256, pyca's flags), in cross
// mode, each job in a workspace of its own outside the action checkout
// (this repository). It runs the jobs every trigger of pyca's file
// starts (the same for schedule, pull_request and push): the build
// matrix's two slice jobs at once, from one action checkout, then the
// universal2 job on what they uploaded, downloaded as pyca's steps do; they
// must upload pyca's three artifacts, laid out as the page's
// side-by-side table says. Beside them run jobs that must fail: a flag as
// an option, a hostile target input, a hostile recipe, a recipe outside
// the workspace; and the consumer's release keys: the release signed by a
// key only pyca's recipe pins (it builds, and the manifest names the key
// file), a key file that is not the fingerprint the recipe writes, and a
// signer nobody pins (each refused, naming why, with nothing published).
// The artifact cache is the end-to-end fixtures' (one build per slice per
// source state), with the fixtures' revision stamped into the binary so
// the builds they made are served.
func TestActionRuns(t *testing.T) {
	e2e.Require(t)
	e2e.Universal2(t) // builds the slices once, into the shared artifact cache
	fx := testfixture.Get(t, e2e.Version)
	a := loadAction(t)
	w := loadDocWorkflow(t)
	vf := pycaVersionFile(e2e.Version, fx.SHA256, pycaFlags)
	env := jobEnv(
		"OSSLBUILD_MIRROR="+testfixture.Dir(),
		"OSSLBUILD_OFFLINE=1",
		"OSSLBUILD_TOOLCHAIN=cross",
		"OSSLBUILD_CACHE="+e2e.Settings(t, t.TempDir()).Fetch.CacheDir,
		// pyca's example recipe plans what the embedded one does: its
		// slices restore the fixtures' make output instead of building.
		"OSSLBUILD_MAKE_CACHE="+e2e.Settings(t, t.TempDir()).MakeCache,
		"OSSLBUILD_REVISION=test-"+e2e.Key(),
	)
	recipeText, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), pycaRecipe))
	if err != nil {
		t.Fatal(err)
	}
	newJob := func(name string, inputs map[string]string) invocation {
		// A workspace and runner temp of its own, outside the checkout,
		// holding pyca's recipe where the page puts it.
		j := invocation{name: name, inputs: inputs, workspace: t.TempDir(), temp: t.TempDir(), env: env}
		testfixture.WriteTree(t, j.workspace, map[string]string{pycaRecipePath: string(recipeText)})
		return j
	}
	buildInputs := func(row map[string]string) map[string]string {
		return osslbuildInputs(t, w, "build", map[string]string{"ARCH.NAME": row["NAME"], "ARCH.ARTIFACT_NAME": row["ARTIFACT_NAME"]}, vf)
	}
	arm64 := buildInputs(map[string]string{"NAME": "arm64", "ARTIFACT_NAME": "arm64"})

	// The jobs that must fail, all at once.
	var refused []invocation
	bad := maps.Clone(arm64)
	bad["openssl-options"] = "no-zlib -O0"
	refused = append(refused, newJob("flag as option", bad))
	// A target input with a newline: the refusal goes through osslbuild's
	// escaping writer, and starts no workflow command of its own.
	hostile := maps.Clone(arm64)
	hostile["target"] = "a\n::warning title=INJ::b"
	refused = append(refused, newJob("hostile target", hostile))
	// A recipe with an -O0 flag in the caller's workspace, and one
	// outside it.
	j := newJob("hostile recipe", maps.Clone(arm64))
	testfixture.WriteTree(t, j.workspace, map[string]string{pycaRecipePath: strings.Replace(string(recipeText),
		`flags = []`, `flags = ["-O0"]`, 1)})
	refused = append(refused, j)
	outside := maps.Clone(arm64)
	outside["recipe"] = "../" + filepath.Base(pycaRecipePath)
	refused = append(refused, newJob("recipe outside the workspace", outside))
	// The consumer's release keys: the real 4.0.2 signed by a key only
	// pyca's recipe pins, from a mirror of its own and an empty fetch and
	// artifact cache (the shared cache holds OpenSSL's own signature).
	consumer, other, stranger := sigtest.NewKey(t, "OpenSSL next"), sigtest.NewKey(t, "someone else"), sigtest.NewKey(t, "not OpenSSL")
	keysEntry := fmt.Sprintf("release_keys = [{ path = \"keys/openssl-next.asc\", fingerprint = %q }]\n", consumer.Fingerprint())
	keysLine := strings.Count(string(recipeText)[:strings.Index(string(recipeText), "schema = 1\n")], "\n") + 3 // schema, a blank line, release_keys
	keyed := func(name string, signer, inFile *sigtest.Key) invocation {
		j := newJob(name, maps.Clone(arm64))
		mirror := t.TempDir()
		testfixture.CopyFile(t, fx.Tarball, filepath.Join(mirror, filepath.Base(fx.Tarball)))
		if err := os.WriteFile(filepath.Join(mirror, filepath.Base(fx.Tarball)+".asc"), signer.Sign(t, fx.Tarball), 0o644); err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(recipeText), "schema = 1\n", "schema = 1\n\n"+keysEntry, 1)
		testfixture.WriteTree(t, j.workspace, map[string]string{pycaRecipePath: text, filepath.Join(filepath.Dir(pycaRecipePath), "keys", "openssl-next.asc"): string(inFile.Armored(t))})
		j.env = append(slices.Clone(env), "OSSLBUILD_MIRROR="+mirror, "OSSLBUILD_CACHE="+t.TempDir())
		return j
	}
	consumerJob := keyed("consumer-pinned key", consumer, consumer)
	refused = append(refused, keyed("fingerprint mismatch", consumer, other), keyed("unknown signer", stranger, consumer))
	jobs := append([]invocation{consumerJob}, refused...)

	results := runJobs(a, jobs)
	nothing := func(j invocation) {
		if _, err := os.Stat(filepath.Join(j.workspace, "dist")); !os.IsNotExist(err) {
			t.Errorf("%s: the refused build created %s/dist", j.name, j.workspace)
		}
	}
	for i, j := range jobs {
		res := results[i]
		switch j.name {
		case "hostile target":
			if res.err == nil || !strings.Contains(res.log, `::error title=osslbuild::target "a%0A::warning title=INJ::b": want arm64, x86_64, universal2 or merge`) {
				t.Errorf("a hostile target input: err %v\n%s", res.err, tail(res.log))
			}
			for _, l := range strings.Split(res.log, "\n") {
				if strings.HasPrefix(strings.TrimLeft(l, " \t"), "::warning title=INJ") {
					t.Errorf("a hostile target input started a workflow command: %q", l)
				}
			}
		case "hostile recipe":
			if res.err == nil || !strings.Contains(res.log, pycaRecipePath+":") || !strings.Contains(res.log, `targets.arm64.flags[0]: flag "-O0": optimisation is OpenSSL's own -O3`) {
				t.Errorf("a recipe with -O0: err %v\n%s", res.err, tail(res.log))
			}
			nothing(j)
		case "recipe outside the workspace":
			if res.err == nil || !strings.Contains(res.log, "want a path relative to the workspace, inside it") {
				t.Errorf("a recipe outside the workspace: err %v\n%s", res.err, tail(res.log))
			}
		case "flag as option":
			if res.err == nil || !strings.Contains(res.log, `option "-O0": optimisation is OpenSSL's own -O3`) || !strings.Contains(res.log, "instead, leave it out") {
				t.Errorf("a build given -O0 as an option: err %v\n%s", res.err, tail(res.log))
			}
			nothing(j)
		case "fingerprint mismatch":
			if want := fmt.Sprintf("%s:%d: release_keys[0].fingerprint: the file keys/openssl-next.asc holds the primary key %s, not %s", pycaRecipePath, keysLine, other.Fingerprint(), consumer.Fingerprint()); res.err == nil || !strings.Contains(res.log, want) {
				t.Errorf("a key file holding another key: err %v, want %q\n%s", res.err, want, tail(res.log))
			}
			nothing(j)
		case "unknown signer":
			if res.err == nil || !strings.Contains(res.log, "key id "+stranger.SigningKeyID()) || !strings.Contains(res.log, signature.PublishedAt) {
				t.Errorf("a release signed by a key nobody pins: err %v\n%s", res.err, tail(res.log))
			}
			nothing(j)
		case "consumer-pinned key":
			if res.err != nil {
				t.Fatalf("a release signed by the recipe's own key: %v\n%s", res.err, tail(res.log))
			}
			dir := checkJob(t, j, res, "openssl-macos-arm64", "arm64", fx.SHA256)
			m, err := artifact.LoadManifest(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			want := artifact.KeyRef{Fingerprint: consumer.Fingerprint(), Origin: "recipe", Path: "keys/openssl-next.asc", SHA256: sha256Of(consumer.Armored(t))}
			if m.OpenSSL.Signer != consumer.Fingerprint() || m.OpenSSL.SignerKey == nil || *m.OpenSSL.SignerKey != want {
				t.Errorf("the manifest's source %+v, key %+v; want verified with %+v", m.OpenSSL, m.OpenSSL.SignerKey, want)
			}
		}
	}
	if t.Failed() {
		return
	}

	// Every trigger of pyca's file (schedule, pull_request, push) runs
	// every job, with the same inputs: no job or upload step has an if
	// (TestPycaInfraDoc holds the file to that), so one run of the
	// jobs is what each trigger runs.
	uploaded := map[string]string{}
	var matrix []invocation
	for _, row := range w.Jobs["build"].Strategy.Matrix["ARCH"] {
		matrix = append(matrix, newJob(row["NAME"], buildInputs(row)))
	}
	for i, res := range runJobs(a, matrix) {
		j := matrix[i]
		if res.err != nil {
			t.Fatalf("job %s: %v\n%s", j.name, res.err, tail(res.log))
		}
		uploaded[sliceArtifacts[j.name]] = checkJob(t, j, res, sliceArtifacts[j.name], j.name, fx.SHA256)
	}
	// The universal2 job, needs: [ build ]: pyca's download steps
	// put the slices' artifacts in its workspace.
	u := newJob("universal2", osslbuildInputs(t, w, "universal2", nil, vf))
	for name, dir := range map[string]string{"x86-64": uploaded["openssl-macos-x86-64"], "arm64": uploaded["openssl-macos-arm64"]} {
		if err := os.CopyFS(filepath.Join(u.workspace, name), os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
	}
	res := runJobs(a, []invocation{u})[0]
	if res.err != nil {
		t.Fatalf("universal2: %v\n%s", res.err, tail(res.log))
	}
	dir := checkJob(t, u, res, "openssl-macos-universal2", "universal2", fx.SHA256)
	uploaded["openssl-macos-universal2"] = dir
	f, err := inspect.Inspect(filepath.Join(dir, "lib", "libcrypto.a"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Slices) != 2 {
		t.Errorf("universal2 libcrypto.a has %d slices", len(f.Slices))
	}
	if got := slices.Sorted(maps.Keys(uploaded)); !slices.Equal(got, slices.Sorted(slices.Values(pycaInfra.Artifacts))) {
		t.Errorf("the jobs upload %v, want pyca's %v", got, pycaInfra.Artifacts)
	}
	// The layouts the side-by-side table gives.
	for name, dir := range uploaded {
		present, absent := layoutClaims(t, name == "openssl-macos-universal2")
		for _, p := range present {
			if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
				t.Errorf("the page says the drop-in's %s holds %s: %v", name, p, err)
			}
		}
		for _, p := range absent {
			if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
				t.Errorf("the page says the drop-in's %s has no %s", name, p)
			}
		}
	}

	// Nothing of the runs is left in the action's checkout.
	if left, _ := filepath.Glob(filepath.Join(testfixture.RepoRoot(), ".mage-*")); len(left) > 0 {
		t.Errorf("left in the action checkout: %v", left)
	}
}

// runJobs runs jobs at once, as a runner machine shared by several jobs
// would, and returns their results in order.
func runJobs(a *actionYML, jobs []invocation) []result {
	results := make([]result, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = a.run(context.Background(), j)
		}()
	}
	wg.Wait()
	return results
}

func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkJob holds one successful job to what the action promises and
// returns its artifact directory: the outputs name the published
// artifact, its tarball and the tarball's sha256; the layout is pyca's
// plus manifest.json; the SBOM validates and says what pyca's says; the
// step summary has the build's and check's tables; the workspace holds
// nothing else.
func checkJob(t *testing.T, j invocation, res result, name, arch, sourceSHA string) string {
	t.Helper()
	dist := filepath.Join(j.workspace, "dist")
	want := map[string]string{
		"artifact-dir": filepath.Join(dist, name),
		"tarball":      filepath.Join(dist, name+".tar.gz"),
	}
	for k, v := range want {
		if res.outputs[k] != v {
			t.Errorf("%s: output %s = %q, want %q", j.name, k, res.outputs[k], v)
		}
	}
	tb, err := os.ReadFile(want["tarball"])
	if err != nil {
		t.Fatalf("%s: %v", j.name, err)
	}
	sum := sha256.Sum256(tb)
	side, _ := os.ReadFile(want["tarball"] + ".sha256")
	if res.outputs["sha256"] != hex.EncodeToString(sum[:]) || !strings.HasPrefix(string(side), res.outputs["sha256"]+" ") {
		t.Errorf("%s: output sha256 %q; tarball's %x; %s.sha256 says %q", j.name, res.outputs["sha256"], sum, name, side)
	}
	dir := want["artifact-dir"]
	var top []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		top = append(top, e.Name())
	}
	if !slices.Equal(top, []string{"include", "lib", "manifest.json", "sbom.json"}) {
		t.Errorf("%s: artifact holds %v, want include, lib, manifest.json, sbom.json", j.name, top)
	}
	for _, f := range []string{"include/openssl/ssl.h", "include/openssl/opensslv.h", "lib/libcrypto.a", "lib/libssl.a",
		"lib/pkgconfig/libcrypto.pc", "lib/pkgconfig/libssl.pc", "lib/pkgconfig/openssl.pc", "lib/cmake/OpenSSL/OpenSSLConfig.cmake"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: artifact lacks %s", j.name, f)
		}
	}
	doc := sbomtest.Validate(t, filepath.Join(dir, artifact.SBOMName))
	sbomtest.CheckPyca(t, doc, sbomtest.Pyca{Version: e2e.Version, SHA256: sourceSHA, OS: "macos", Arch: arch, Flags: pycaFlags})
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Osslbuild != "test-"+e2e.Key() || strings.Join(m.Target.Options, " ") != pycaFlags {
		t.Errorf("%s: manifest says osslbuild %q, options %v", j.name, m.Osslbuild, m.Target.Options)
	}
	// The caller's recipe, by the path the workflow gave.
	if m.Recipe.Origin != "file" || m.Recipe.Path != pycaRecipePath {
		t.Errorf("%s: manifest recipe %+v, want the workspace's %s", j.name, m.Recipe, pycaRecipePath)
	}
	// The build's table (one row per slice) and check's.
	if strings.Count(res.summary, "### ") < 2 || !strings.Contains(res.summary, "| "+e2e.Version+" |") ||
		!strings.Contains(res.summary, "-O3") {
		t.Errorf("%s: step summary lacks the build's and check's tables:\n%s", j.name, res.summary)
	}
	// Smoke linked every slice of the artifact (here it cannot run them, and
	// says so).
	arches := []string{arch}
	if arch == "universal2" {
		arches = []string{"arm64", "x86_64"}
	}
	for _, a := range arches {
		re := regexp.MustCompile(`(?m)^### smoke: .* ` + a + ` \(macOS [0-9.]+\): linked, not run$`)
		if !re.MatchString(res.summary) {
			t.Errorf("%s: step summary lacks smoke's %s link:\n%s", j.name, a, res.summary)
		}
	}
	// The consumer's workspace gets the artifacts and nothing else.
	var ws []string
	ents, _ = os.ReadDir(j.workspace)
	for _, e := range ents {
		ws = append(ws, e.Name())
	}
	if !slices.Contains(ws, "dist") || slices.Contains(ws, "build") {
		t.Errorf("%s: workspace holds %v", j.name, ws)
	}
	return dir
}

// tail is the end of a long log, for failure messages.
func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 60 {
		lines = append([]string{"..."}, lines[len(lines)-60:]...)
	}
	return strings.Join(lines, "\n")
}
