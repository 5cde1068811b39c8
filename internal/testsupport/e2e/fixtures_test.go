package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFixtures builds (or proves) every fixture, one subtest each: the
// fixture step (cmd/fixtures) runs it with no timeout before the
// packages' tests, which then find them built; with OSSLBUILD_E2E_CLAIMS
// (a directory) in several processes at once, each fixture built by the
// one that claims it first. With
// OSSLBUILD_E2E_SELFTEST=1 it builds small stand-ins instead, for the
// step's own test.
func TestFixtures(t *testing.T) {
	fixtures := Fixtures()
	if os.Getenv("OSSLBUILD_E2E_SELFTEST") == "1" {
		fixtures = selftestFixtures()
	}
	claims := os.Getenv("OSSLBUILD_E2E_CLAIMS")
	for _, f := range fixtures {
		// Workers of the fixture step share the list: each fixture goes to
		// the first to claim it.
		if claims != "" {
			c, err := os.OpenFile(filepath.Join(claims, f.Name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
		}
		t.Run(f.Name, func(t *testing.T) {
			t.Logf("why: %s", f.Why)
			f.Build(t)
		})
	}
}

// selftestFixtures are two Shared fixtures that take a second to build,
// and one that fails when OSSLBUILD_E2E_SELFTEST_FAIL=1.
func selftestFixtures() []Fixture {
	small := func(name string, fail bool) Fixture {
		return Fixture{name, "a stand-in of " + name, func(t testing.TB) {
			Shared(t, name, func(dir string) error {
				time.Sleep(time.Second)
				if fail {
					return errors.New("the stand-in failed as asked")
				}
				return os.WriteFile(filepath.Join(dir, "lib"), []byte(name), 0o644)
			}, func(t testing.TB, dir string) error {
				_, err := os.Stat(filepath.Join(dir, "lib"))
				return err
			})
		}}
	}
	return []Fixture{small("small-a", false), small("small-b", os.Getenv("OSSLBUILD_E2E_SELFTEST_FAIL") == "1")}
}
