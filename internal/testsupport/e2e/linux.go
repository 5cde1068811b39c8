package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/osslbuild/osslbuild/internal/bench"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// RequireLinux declares that t runs on LinuxNative (the linux-x86_64
// fixtures are built and run natively), in the full tier; it skips
// elsewhere and when cc or the release fixture is missing (failing with
// CI=true).
func RequireLinux(t testing.TB) {
	t.Helper()
	testfixture.NeedTier(t, testfixture.TierFull, "a real OpenSSL build (an end-to-end fixture)")
	testfixture.On(t, testfixture.LinuxNative)
	testfixture.Tools(t, "cc", "ar", "ranlib", "perl", "make")
	testfixture.Get(t, Version)
}

// BenchOptions are the options the linux-x86_64 fixtures build with:
// the embedded recipe with LinuxOptions. Both builds sit in the artifact
// cache of this Key (see Settings), so the benchmark's tests reuse what
// the fixture step built. Output and work go to a directory of the
// caller's own: a benchmark that publishes there must not write into a
// Shared fixture's entry, which another test binary may be proving (and
// would rebuild on finding a stranger in it).
func BenchOptions(t testing.TB) bench.Options { return benchOptions(t, t.TempDir()) }

func benchOptions(t testing.TB, dir string) bench.Options {
	s := Settings(t, dir)
	s.Options = LinuxOptions(t)
	return bench.Options{
		Settings: s,
		Runtime:  Runtime(t),
		Harness:  filepath.Join(testfixture.RepoRoot(), bench.DefaultHarness),
	}
}

// LinuxOptions are the Configure options of the linux-x86_64 fixtures:
// the embedded recipe's for Version, with SharedRecipe's feature cuts
// that Version's Configure knows, but for the one that leaves
// LinkOnlyMember out (link's TestUnresolvedMember drops it). What
// smoke and the benchmark's harness use stays (SharedRecipe says what),
// and each build compiles about a quarter fewer objects. The published
// benchmark report builds the embedded recipe as it is (TestLibrary with
// -library.report).
func LinuxOptions(t testing.TB) []string {
	t.Helper()
	emb, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := emb.Release(Version)
	if err != nil {
		t.Fatal(err)
	}
	own, err := emb.PlanFor(rel, "linux-x86_64", nil)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := recipe.Load(filepath.Join(testfixture.RepoRoot(), SharedRecipe))
	if err != nil {
		t.Fatal(err)
	}
	// SharedRecipe's options for Version: its version limits decide.
	cuts, err := sh.PlanFor(rel, "linux-x86_64", nil)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat(own.Slice.Options, slices.DeleteFunc(cuts.Slice.Options, func(o string) bool { return o == linkOnlyFeature }))
}

// LinuxX8664 returns the artifact directory of osslbuild's linux-x86_64
// build of Version (pipeline.Slice: gate and validation included), built
// on first use.
func LinuxX8664(t testing.TB) string {
	t.Helper()
	return linux(t, "linux-x86_64", bench.Osslbuild, pipeline.Osslbuild)
}

// PycaLinuxX8664 returns the artifact directory of the same build made the
// pyca way (CFLAGS in Configure's environment: libcrypto at -O0), built on
// first use.
func PycaLinuxX8664(t testing.TB) string {
	t.Helper()
	return linux(t, "linux-x86_64-pyca", bench.PycaWay, pipeline.PycaWay)
}

// linux is the Shared fixture name, built with build as the benchmark
// builds it (so the benchmark's runs hit the same artifact cache), and
// proved as variant v; it returns the artifact directory.
func linux(t testing.TB, name string, build func(context.Context, bench.Options) (string, error), v *pipeline.Variant) string {
	t.Helper()
	RequireLinux(t)
	var published string
	dir := Shared(t, name, func(dir string) error {
		p, err := build(context.Background(), benchOptions(t, dir))
		published = filepath.Base(p)
		return err
	}, proveDist(v))
	if published == "" {
		ents, _ := os.ReadDir(filepath.Join(dir, "dist"))
		for _, e := range ents {
			if e.IsDir() {
				published = e.Name()
			}
		}
	}
	return filepath.Join(dir, "dist", published)
}
