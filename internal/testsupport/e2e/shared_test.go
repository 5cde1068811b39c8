package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestSharedProvesAndRebuilds: a fixture is built once; an entry reused by
// a later process is proved first, unless the same code (ProofKey) proved
// or built it when it held what it holds now; one that no longer proves (a
// corrupt file) or that is partial (no completion mark) is built again,
// under the machine's build slot.
func TestSharedProvesAndRebuilds(t *testing.T) {
	t.Setenv("OSSLBUILD_E2E_DIR", t.TempDir())
	t.Setenv("OSSLBUILD_E2E_KEY", "test-key")
	t.Setenv("OSSLBUILD_E2E_SELFTEST", "1") // its fixture "x" is in no list
	keyOnce, key = sync.Once{}, ""
	setProofKey := func(k string) {
		proofKeyOnce = sync.Once{}
		proofKeyOnce.Do(func() {})
		proofKey = k
	}
	t.Cleanup(func() { keyOnce, key = sync.Once{}, ""; proofKeyOnce, proofKey = sync.Once{}, "" })
	setProofKey("code-a")
	builds, proofs := 0, 0
	build := func(dir string) error {
		builds++
		return os.WriteFile(filepath.Join(dir, "lib"), []byte("good"), 0o644)
	}
	prove := func(t testing.TB, dir string) error {
		proofs++
		b, err := os.ReadFile(filepath.Join(dir, "lib"))
		if err != nil || string(b) != "good" {
			return errors.New("lib does not prove")
		}
		return nil
	}
	newProcess := func() { proved = sync.Map{} }

	dir := Shared(t, "x", build, prove)
	if builds != 1 || proofs != 0 {
		t.Fatalf("first use: %d builds, %d proofs", builds, proofs)
	}
	Shared(t, "x", build, prove)
	newProcess()
	Shared(t, "x", build, prove)
	if builds != 1 || proofs != 0 {
		t.Fatalf("reuse by the code that built it: %d builds, %d proofs, want 1 and 0", builds, proofs)
	}
	// Other code proves it again, once per process, and records that it did.
	setProofKey("code-b")
	newProcess()
	Shared(t, "x", build, prove)
	Shared(t, "x", build, prove)
	newProcess()
	Shared(t, "x", build, prove)
	if builds != 1 || proofs != 1 {
		t.Fatalf("reuse by other code: %d builds, %d proofs, want 1 and 1", builds, proofs)
	}
	// A file changed since the proof: the record no longer vouches for it.
	os.WriteFile(filepath.Join(dir, "lib"), []byte("good"), 0o600)
	os.WriteFile(filepath.Join(dir, "extra"), nil, 0o644)
	newProcess()
	if Shared(t, "x", build, prove); builds != 1 || proofs != 2 {
		t.Fatalf("a file added since the proof: %d builds, %d proofs, want 1 and 2", builds, proofs)
	}
	os.WriteFile(filepath.Join(dir, "lib"), []byte("corrupt"), 0o644)
	newProcess()
	if Shared(t, "x", build, prove); builds != 2 {
		t.Errorf("a corrupt entry was not built again (%d builds)", builds)
	}
	os.Remove(filepath.Join(dir, ".done"))
	newProcess()
	if Shared(t, "x", build, prove); builds != 3 {
		t.Errorf("a partial entry was not built again (%d builds)", builds)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "lib")); string(b) != "good" {
		t.Errorf("entry holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(Dir(), "build.slot")); err != nil {
		t.Errorf("no build slot was taken: %v", err)
	}
}

// TestUnlistedFixtureFails: under CI=true, building a fixture that is not
// in Fixtures() fails the test that built it (the fixture step would not
// have built it first, so a package's timeout counted its build); locally
// it only builds.
func TestUnlistedFixtureFails(t *testing.T) {
	if os.Getenv("OSSLBUILD_E2E_UNLISTED") == "1" {
		keyOnce, key = sync.Once{}, ""
		Shared(t, "unlisted", func(dir string) error { return nil }, func(testing.TB, string) error { return nil })
		return
	}
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnlistedFixtureFails$", "-test.count=1")
		cmd.Env = append(os.Environ(), "OSSLBUILD_E2E_UNLISTED=1", "OSSLBUILD_E2E_DIR="+t.TempDir(), "OSSLBUILD_E2E_KEY=k", "OSSLBUILD_E2E_SELFTEST=", "CI="+ci)
		out, err := cmd.CombinedOutput()
		if fails := err != nil; fails != (ci == "true") || (ci == "true" && !strings.Contains(string(out), "fixture unlisted is not in e2e.Fixtures")) {
			t.Errorf("CI=%q: err %v\n%s", ci, err, out)
		}
	}
}
