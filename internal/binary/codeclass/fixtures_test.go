package codeclass

import "testing"

// TestFixtures builds (or finds) the code corpus: the fixture step
// (internal/testsupport/cmd/fixtures) runs it with no timeout before the
// packages' tests, so this package's own timeout never counts its build.
func TestFixtures(t *testing.T) {
	t.Run("code-corpus", func(t *testing.T) {
		t.Log("why: OpenSSL's C files at every -O level for 3 targets: the machine-code classifier's calibration")
		codeCorpus(t)
	})
}
