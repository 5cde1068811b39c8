package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/bench"
	"github.com/osslbuild/osslbuild/internal/pipeline"
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

// BenchOptions are the options the linux-x86_64 fixtures build with. Both
// builds sit in the artifact cache of this Key (see Settings), so the
// benchmark report run (go test -run TestLibrary -args
// -library.report=...) reuses what the tests built. Output and work go to
// a directory of the caller's own: a benchmark that publishes there must
// not write into a Shared fixture's entry, which another test binary may
// be proving (and would rebuild on finding a stranger in it).
func BenchOptions(t testing.TB) bench.Options {
	dir := t.TempDir()
	return bench.Options{
		Settings: Settings(t, dir),
		Runtime:  Runtime(t),
		Harness:  filepath.Join(testfixture.RepoRoot(), bench.DefaultHarness),
	}
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
		o := BenchOptions(t)
		o.Settings = Settings(t, dir)
		p, err := build(context.Background(), o)
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
