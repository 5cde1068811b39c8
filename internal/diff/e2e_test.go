package diff_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// The tests below compare the real OpenSSL artifacts of the end-to-end
// fixtures (full tier: e2e.Require).

// TestRealTargets: the real arm64 and x86_64 artifacts differ in their
// targets, deployment targets and -march, and the x86_64 one records its
// instruction-set level.
func TestRealTargets(t *testing.T) {
	r := compare(t, e2e.Slice(t, "arm64"), e2e.Slice(t, "x86_64"))
	if c := change(t, r, "target", "arch"); c.A != "arm64" || c.B != "x86_64" {
		t.Errorf("arch: %+v", c)
	}
	if c := change(t, r, "deployment targets", "min_os"); c.A == "" || c.B == "" || c.A == c.B {
		t.Errorf("min_os: %+v", c)
	}
	if c := change(t, r, "target", "flags"); strings.Contains(c.A, "-march") || !strings.Contains(c.B, "-march=") {
		t.Errorf("flags: %+v", c)
	}
	if section(r, "instruction set") == nil {
		t.Errorf("no instruction-set section:\n%s", diff.Text(r))
	}
}

// TestRealOwnTarball: a real artifact and its own tarball are identical.
func TestRealOwnTarball(t *testing.T) {
	dir := e2e.Slice(t, "arm64")
	r := compare(t, dir, dir+".tar.gz")
	if !r.Identical {
		t.Errorf("%s and its tarball differ:\n%s", dir, diff.Text(r))
	}
}

// TestRealReleases: the fixtures' 4.0.2 arm64 artifact and the consumer
// recipe's 3.5.7 one show the release, option and exported-symbol changes.
// (No fixture pair is two releases of one series; these are the two real
// releases the fixtures build.)
func TestRealReleases(t *testing.T) {
	old := filepath.Join(e2e.Consumer(t), "dist", "pbs-openssl-aarch64-apple-darwin")
	r := compare(t, old, e2e.Slice(t, "arm64"))
	if c := change(t, r, "release", "OpenSSL"); c.A != "3.5.7" || c.B != e2e.Version {
		t.Errorf("OpenSSL: %+v", c)
	}
	if s := section(r, "options"); s == nil {
		t.Errorf("no option changes:\n%s", diff.Text(r))
	}
	if s := section(r, "exported symbols of lib/libcrypto.a"); s == nil || len(s.Added)+len(s.Removed) == 0 {
		t.Errorf("no symbol changes in libcrypto.a:\n%s", diff.Text(r))
	}
}
