package e2e

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/osslbuild/osslbuild/internal/bench"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// RequireLinux skips (or fails with CI=true) when the native linux-x86_64
// build cannot run here: -short mode, a host that is not Linux x86-64, no
// cc, or a missing release fixture.
func RequireLinux(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end build skipped in -short mode")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the linux-x86_64 fixtures are built and run natively (this host is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	testfixture.Tools(t, "cc", "ar", "ranlib", "perl", "make")
	testfixture.Get(t, Version)
}

// BenchOptions are the options the linux-x86_64 fixtures build with. Both
// builds sit in the artifact cache of this Key (see Settings), so the
// benchmark report run (go test -run TestLibrary -args
// -library.report=...) reuses what the tests built.
func BenchOptions(t testing.TB) bench.Options {
	dir := filepath.Join(Dir(), Key(), "linux-x86_64")
	return bench.Options{
		Settings: Settings(t, dir),
		Runtime:  Runtime(t),
		Harness:  filepath.Join(testfixture.RepoRoot(), bench.DefaultHarness),
	}
}

// linuxBuilt remembers the fixtures this process has already obtained:
// asking the pipeline again would revalidate and republish the cached
// artifact (seconds each time) for nothing.
var linuxBuilt sync.Map // fixture name -> artifact directory

// linuxFixture returns the artifact directory get builds, once per process
// and, across processes, one at a time under a lock.
func linuxFixture(t testing.TB, name string, get func() (string, error)) string {
	t.Helper()
	RequireLinux(t)
	if dir, ok := linuxBuilt.Load(name); ok {
		return dir.(string)
	}
	unlock := lock(t, filepath.Join(Dir(), name+".lock"))
	defer unlock()
	dir, err := get()
	if err != nil {
		t.Fatalf("e2e fixture %s: %v", name, err)
	}
	linuxBuilt.Store(name, dir)
	return dir
}

// LinuxX8664 returns the artifact directory of osslbuild's linux-x86_64
// build of Version (pipeline.Slice: gate and validation included), built
// on first use.
func LinuxX8664(t testing.TB) string {
	t.Helper()
	return linuxFixture(t, "linux-x86_64", func() (string, error) {
		return bench.Osslbuild(context.Background(), BenchOptions(t))
	})
}

// PycaLinuxX8664 returns the artifact directory of the same build made the
// pyca way (CFLAGS in Configure's environment: libcrypto at -O0), built on
// first use.
func PycaLinuxX8664(t testing.TB) string {
	t.Helper()
	return linuxFixture(t, "linux-x86_64-pyca", func() (string, error) {
		return bench.PycaWay(context.Background(), BenchOptions(t))
	})
}
