// Package e2e provides the expensive end-to-end fixtures (real OpenSSL
// slices cross-built by osslbuild) to tests in any package, building each
// at most once per key: go test runs package binaries in parallel, so
// builds are shared through a directory, serialised with a lock, and run
// one at a time on the machine (BuildSlot), two in the fixture step.
//
// The store is $OSSLBUILD_E2E_DIR, else <user cache dir>/osslbuild/
// test-fixtures: outside the clone, so a second CI run on the same machine
// reuses what did not change. Entries, and the artifact cache the builds
// use, are keyed by what decides their bytes (Key), and the current code
// proves an entry (Prove: its files against its manifest, then
// validation, code evidence and the link) the first time it meets it: the
// code that proved or built an entry (ProofKey) records so, with a digest
// of every file, and later processes of that code take the record while
// the files are unchanged. A change to check or to a rule therefore
// rebuilds nothing and is still exercised on real artifacts; an entry that
// no longer proves is rebuilt.
//
// This package is where every built fixture is declared, so tests share
// builds rather than each making its own: Universal2 and Slice (one
// build:universal2 run), Consumer (python-build-standalone's recipe),
// SharedArm64 and SharedLinux (dylibs and ELF libraries), and
// LinuxX8664 and PycaLinuxX8664 (native linux-x86_64 builds, for bench,
// link and code tests). Release tarballs and other downloaded fixtures are testfixture's.
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// Version is the release the end-to-end fixtures build.
const Version = "4.0.2"

// Dir is the fixture store (testfixture.Store).
func Dir() string { return testfixture.Store() }

var (
	keyOnce sync.Once
	key     string
)

// Verdicts are the packages whose code decides whether a build passes, not
// what it produces: they are left out of Key because Prove runs them over
// every fixture on every use.
var Verdicts = []string{
	"internal/binary/validate", "internal/binary/inspect", "internal/binary/codeclass", "internal/link",
}

// BuildPath lists, relative to the module root, the directories of the
// module's packages a fixture build runs through (go list -deps of the
// pipeline and the library benchmark's builds), without Verdicts, and
// this package, whose Settings and LinuxOptions say what the fixtures
// build.
func BuildPath(root string) ([]string, error) {
	out, err := goListDeps(root, "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./internal/pipeline", "./internal/bench")
	if err != nil {
		return nil, err
	}
	dirs := []string{"internal/testsupport/e2e"}
	for _, d := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, d)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // another module's: go.sum pins it
		}
		rel = filepath.ToSlash(rel)
		if !slices.Contains(Verdicts, rel) {
			dirs = append(dirs, rel)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// goListDeps runs go list -deps with args in root and returns its output.
func goListDeps(root string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"list", "-deps"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps: %v: %s", err, stderr.String())
	}
	return out, nil
}

// KeyOf digests, under root, the non-test Go files of dirs, the recipes,
// patches, keys and smoke program, go.mod and go.sum, read with read (a
// test gives an edited view of the tree), and the identity of the tools
// (toolchains, lines of their --version).
func KeyOf(root string, dirs []string, tools []string, read func(path string) ([]byte, error)) string {
	h := sha256.New()
	file := func(rel string) {
		b, err := read(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return
		}
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	for _, d := range dirs {
		ents, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(d)))
		for _, e := range ents {
			if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				file(d + "/" + n)
			}
		}
	}
	for _, d := range []string{"recipes", "patches", "keys", "smoke", "testdata/recipes"} {
		filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				file(filepath.ToSlash(rel))
			}
			return nil
		})
	}
	file("go.mod")
	file("go.sum")
	for _, t := range tools {
		fmt.Fprintf(h, "tool\x00%s\x00", t)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Key digests what decides a fixture's bytes (KeyOf over BuildPath and the
// identities of the cross and native toolchains), so no fixture built by
// other code or tools is reused. OSSLBUILD_E2E_KEY overrides it, to reuse
// fixtures while editing the build.
func Key() string {
	keyOnce.Do(func() {
		if k := os.Getenv("OSSLBUILD_E2E_KEY"); k != "" {
			key = k
			return
		}
		root := testfixture.RepoRoot()
		dirs, err := BuildPath(root)
		if err != nil {
			panic("e2e: " + err.Error())
		}
		key = KeyOf(root, dirs, toolIdentities(), os.ReadFile)
	})
	return key
}

// toolIdentities are the first lines of the fixture tools' --version, as
// manifests record them (a missing tool is a missing fixture, said by
// Require, not here).
func toolIdentities() []string {
	var out []string
	for _, tool := range []string{"clang-14", "llvm-ar-14", "llvm-lipo-14", "ld64.lld-14", "cc", "ar", "perl", "make"} {
		b, err := exec.Command(tool, "--version").Output()
		line, _, _ := strings.Cut(string(b), "\n")
		if err != nil {
			line = "missing"
		}
		out = append(out, tool+": "+strings.TrimSpace(line))
	}
	return out
}

// Require declares that t runs on LinuxCross, where the end-to-end
// fixtures are cross-built, in the full tier; it skips elsewhere (naming
// the platform and the tier) and when the cross toolchain or the release
// fixture is missing (failing with CI=true).
func Require(t testing.TB) {
	t.Helper()
	testfixture.NeedTier(t, testfixture.TierFull, "a real OpenSSL build (an end-to-end fixture)")
	testfixture.On(t, testfixture.LinuxCross)
	if _, err := toolchain.New("cross"); err != nil {
		testfixture.Missing(t, "%v", err)
	}
	testfixture.Get(t, Version)
}

// Settings are what the fixtures build with: the release fixtures as an
// offline mirror, output and work under dir, and an artifact cache of
// their own per Key (test binaries cannot tell osslbuild's revision, so a
// cache shared across source states could serve slices built by older
// code).
func Settings(t testing.TB, dir string) pipeline.Settings {
	s := pipeline.Settings{
		Version: Version,
		Out:     filepath.Join(dir, "dist"),
		Work:    filepath.Join(dir, "work"),
		Jobs:    runtime.NumCPU(),
	}
	s.Fetch.Mirror = testfixture.Dir()
	s.Fetch.Offline = true
	s.Fetch.CacheDir = filepath.Join(Dir(), Key(), "cache")
	// Configure and make's output, by plan and across keys: a change to
	// the code after make rebuilds a fixture in seconds (pipeline's make
	// cache); the reproducibility proofs' second builds have one of their
	// own (hostileSettings).
	s.MakeCache = filepath.Join(Dir(), "make")
	return s
}

// Runtime logs to t and records the fixture key as osslbuild's revision.
func Runtime(t testing.TB) pipeline.Runtime {
	return pipeline.Runtime{Log: &testLog{t: t}, Revision: "test-" + Key()}
}

// Universal2 returns the fixture directory holding, under dist/, the
// arm64, x86_64 and universal2 artifacts of one build:universal2 run, built
// on first use. Every slice test shares it: one real build per run.
func Universal2(t testing.TB) string {
	t.Helper()
	Require(t)
	return Shared(t, "universal2", func(dir string) error {
		_, err := pipeline.Universal2(context.Background(), Settings(t, dir), Runtime(t))
		return err
	}, proveDist(pipeline.Osslbuild))
}

// PBSRecipe is python-build-standalone's recipe among the examples, a
// consumer recipe nobody here wrote the targets of.
const PBSRecipe = "recipes/examples/python-build-standalone.toml"

// Consumer returns the fixture directory holding, under dist/, the arm64
// artifact PBSRecipe builds from its default release (the real 3.5.7),
// given as a file the way -recipe=FILE gives it.
func Consumer(t testing.TB) string {
	return recipeFixture(t, "pbs-arm64", PBSRecipe, func(s pipeline.Settings) error {
		_, err := pipeline.Slice(context.Background(), s, Runtime(t), "arm64", nil)
		return err
	})
}

// recipeFixture is the shared fixture name that build makes with recipe
// (a path under the repository, given as a file the way -recipe=FILE
// gives it) and the recipe's default release, proved with that recipe.
func recipeFixture(t testing.TB, name, recipe string, build func(pipeline.Settings) error) string {
	t.Helper()
	Require(t)
	return Shared(t, name, func(dir string) error {
		s := Settings(t, dir)
		s.Recipe, s.Version = filepath.Join(testfixture.RepoRoot(), recipe), ""
		return build(s)
	}, proveDistWith(recipe, pipeline.Osslbuild))
}

// SharedRecipe is the end-to-end tests' recipe of shared libraries.
const SharedRecipe = "testdata/recipes/shared.toml"

// SharedArm64 returns the fixture directory holding, under dist/, the
// arm64 artifact of dylibs SharedRecipe makes from the real 3.5.7. One
// slice: the x86_64 dylibs and their merge are the mini tree's
// (pipeline's TestMiniSharedUniversal2), where nothing but the compiler's
// output differs from a real build.
func SharedArm64(t testing.TB) string {
	return recipeFixture(t, "shared-arm64", SharedRecipe, func(s pipeline.Settings) error {
		_, err := pipeline.Slice(context.Background(), s, Runtime(t), "arm64", nil)
		return err
	})
}

// SharedLinux returns the fixture directory holding, under dist/, the
// linux-x86_64 artifact of ELF shared libraries SharedRecipe makes from
// the real 3.5.7, built natively.
func SharedLinux(t testing.TB) string {
	RequireLinux(t)
	return recipeFixture(t, "shared-linux-x86_64", SharedRecipe, func(s pipeline.Settings) error {
		_, err := pipeline.Slice(context.Background(), s, Runtime(t), "linux-x86_64", nil)
		return err
	})
}

// Slice returns the published artifact directory of target (a recipe
// target of universal2: arm64 or x86_64), from the Universal2 fixture.
func Slice(t testing.TB, target string) string {
	t.Helper()
	dist := filepath.Join(Universal2(t), "dist")
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := r.Target(target)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dist, tt.Artifact)
}

// proveDist proves every artifact directory under dir/dist with the
// current code, as variant v's proof stages (or the universal2 merge's)
// would.
func proveDist(v *pipeline.Variant) func(t testing.TB, dir string) error {
	return proveDistWith("", v)
}

// proveDistWith is proveDist for artifacts of recipe (a path under the
// repository; "" for the embedded one).
func proveDistWith(recipe string, v *pipeline.Variant) func(t testing.TB, dir string) error {
	return func(t testing.TB, dir string) error {
		ents, err := os.ReadDir(filepath.Join(dir, "dist"))
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			s := Settings(t, t.TempDir())
			if recipe != "" {
				s.Recipe = filepath.Join(testfixture.RepoRoot(), recipe)
			}
			if err := pipeline.Prove(context.Background(), s, Runtime(t), filepath.Join(dir, "dist", e.Name()), v); err != nil {
				return err
			}
		}
		return nil
	}
}

// proved are the fixture directories this process has proved.
var proved sync.Map

var (
	proofKeyOnce sync.Once
	proofKey     string
)

// ProofKey digests the code that proves a fixture, with Key: the Go and
// embedded files (as go list names them for this platform) of every
// package of this module that the pipeline, the library benchmark and
// this package run, the verdict packages Key leaves out among them. A
// fixture this code proved once, byte for byte as it is now, is proved
// for every process of the same ProofKey (provedBefore): each test
// binary need not validate, classify and link it again.
func ProofKey() string {
	proofKeyOnce.Do(func() {
		root := testfixture.RepoRoot()
		files, err := proofFiles(root)
		if err != nil {
			panic("e2e: " + err.Error())
		}
		h := sha256.New()
		fmt.Fprintf(h, "key\x00%s\x00", Key())
		for _, rel := range files {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil {
				panic("e2e: " + err.Error())
			}
			fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
			h.Write(b)
		}
		proofKey = hex.EncodeToString(h.Sum(nil))[:16]
	})
	return proofKey
}

// proofFiles lists, relative to root and sorted, the Go and embedded files
// of this module's packages that ./internal/pipeline, ./internal/bench
// and this package depend on.
func proofFiles(root string) ([]string, error) {
	out, err := goListDeps(root, "-json=Dir,Standard,GoFiles,EmbedFiles", "./internal/pipeline", "./internal/bench", "./internal/testsupport/e2e")
	if err != nil {
		return nil, err
	}
	var files []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			Dir                 string
			Standard            bool
			GoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list -deps: %w", err)
		}
		rel, err := filepath.Rel(root, p.Dir)
		if p.Standard || err != nil || strings.HasPrefix(rel, "..") {
			continue // the toolchain's or another module's: go.sum pins it
		}
		for _, f := range slices.Concat(p.GoFiles, p.EmbedFiles) {
			files = append(files, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	sort.Strings(files)
	return files, nil
}

// provedFile, in a fixture directory, records the ProofKey of the code
// that last proved (or built) it and the digest of every file it then held.
const provedFile = ".proved"

// treeDigest digests every file under dir but provedFile, by path and
// content.
func treeDigest(dir string) (string, error) {
	sums, err := artifact.HashTree(context.Background(), dir)
	if err != nil {
		return "", err
	}
	delete(sums, provedFile)
	h := sha256.New()
	for _, rel := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(h, "%s\x00%s\x00", rel, sums[rel])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// provedBefore says whether this ProofKey proved dir (or built it) when it
// held exactly what it holds now.
func provedBefore(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, provedFile))
	if err != nil {
		return false
	}
	key, digest, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !ok || key != ProofKey() {
		return false
	}
	now, err := treeDigest(dir)
	return err == nil && now == digest
}

// markProved records that this ProofKey proved dir as it is now; a failure
// only costs a later process the proof.
func markProved(t testing.TB, dir string) {
	digest, err := treeDigest(dir)
	if err != nil {
		t.Logf("e2e: %s: not recorded as proved: %v", dir, err)
		return
	}
	tmp := filepath.Join(dir, provedFile+".tmp")
	if err := os.WriteFile(tmp, []byte(ProofKey()+" "+digest+"\n"), 0o644); err == nil {
		err = os.Rename(tmp, filepath.Join(dir, provedFile))
	}
	if err != nil {
		os.Remove(tmp)
		t.Logf("e2e: %s: not recorded as proved: %v", dir, err)
	}
}

// Shared runs build once for name (per Key), in a fresh directory that is
// renamed into place only when build succeeds, and returns that directory.
// Concurrent callers, in this process or another, wait for the first; the
// build itself waits for the machine's build slot. An entry built before
// is proved with the current code (prove, once per process) unless a
// process of the same ProofKey proved or built it holding exactly what it
// holds now: one that no longer proves, or that is incomplete, is built
// again (its failure, if the fault is the code's, then names it).
func Shared(t testing.TB, name string, build func(dir string) error, prove func(t testing.TB, dir string) error) string {
	t.Helper()
	root := filepath.Join(Dir(), Key())
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(root, name)
	if _, ok := proved.Load(final); ok {
		return final
	}
	unlock := lock(t, final+".lock")
	defer unlock()
	if _, err := os.Stat(filepath.Join(final, ".done")); err == nil {
		if provedBefore(final) {
			t.Logf("e2e: fixture %s: proved before by this code (proof key %s), unchanged since", name, ProofKey())
			proved.Store(final, true)
			return final
		}
		err := prove(t, final)
		if err == nil {
			markProved(t, final)
			proved.Store(final, true)
			return final
		}
		t.Logf("e2e: fixture %s does not prove with the current code; building it again: %v", name, err)
	}
	os.RemoveAll(final)
	tmp, err := os.MkdirTemp(root, "."+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if !listed(name) && os.Getenv("CI") == "true" {
		t.Errorf("e2e: fixture %s is not in e2e.Fixtures: the fixture step does not build it first, so this package's timeout counts its build", name)
	}
	release := BuildSlot(t)
	t.Logf("e2e: building shared fixture %s in %s", name, tmp)
	err = build(tmp)
	release()
	if err != nil {
		t.Fatalf("e2e fixture %s: %v", name, err)
	}
	os.WriteFile(filepath.Join(tmp, ".done"), nil, 0o644)
	if err := os.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	markProved(t, final)
	proved.Store(final, true) // the build's own stages just proved it
	return final
}

// BuildSlot is testfixture.BuildSlot.
func BuildSlot(t testing.TB) (release func()) { return testfixture.BuildSlot(t) }

func lock(t testing.TB, path string) func() { return testfixture.Lock(t, path) }

// testLog forwards pipeline output to t.Log line by line.
type testLog struct {
	t  testing.TB
	mu sync.Mutex
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
