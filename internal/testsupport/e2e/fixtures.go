package e2e

import (
	"os"
	"slices"
	"testing"
)

// Fixture is one Shared fixture, as the fixture step builds it before the
// packages' tests start (cmd/fixtures, run by .ci/run and README.md's
// test command).
type Fixture struct {
	Name  string // its Shared name, the directory under Dir()/Key()
	Why   string // what it is and which tests use it
	Build func(t testing.TB)
}

// Fixtures lists every Shared fixture, in the order the fixture step builds
// them (the first is the one most packages wait for). A fixture built
// under CI=true that is not listed here fails the test that built it:
// the step did not build it first, so a package's timeout counted its
// build.
func Fixtures() []Fixture {
	return []Fixture{
		{"universal2", "build:universal2 of " + Version + ": the slice tests (Slice, Universal2) of pipeline, check, link, repro, magetest, workflows", func(t testing.TB) { Universal2(t) }},
		{"pbs-arm64", "arm64 by python-build-standalone's recipe (3.5.7): the consumer recipe tests", func(t testing.TB) { Consumer(t) }},
		{"shared-arm64", "arm64 dylibs of " + SharedRecipe + ": the shared-library tests", func(t testing.TB) { SharedArm64(t) }},
		{"shared-linux-x86_64", "ELF libraries of " + SharedRecipe + ", natively: smoke, check, repro", func(t testing.TB) { SharedLinux(t) }},
		{"linux-x86_64", "linux-x86_64 natively: bench, link, codeclass", func(t testing.TB) { LinuxX8664(t) }},
		{"linux-x86_64-pyca", "linux-x86_64 the pyca way (-O0): bench, codeclass, check", func(t testing.TB) { PycaLinuxX8664(t) }},
	}
}

// listed says whether Fixtures() (or, in the fixture step's own test,
// OSSLBUILD_E2E_SELFTEST's fixtures) names name.
func listed(name string) bool {
	return os.Getenv("OSSLBUILD_E2E_SELFTEST") == "1" ||
		slices.ContainsFunc(Fixtures(), func(f Fixture) bool { return f.Name == name })
}
