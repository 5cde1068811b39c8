package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
)

// A build warns of a release whose series has ended, as before, and of
// one with a known high or critical advisory, naming the release that
// fixes it or saying no public one does; a release with neither gets no
// warning.
func TestReleaseWarnings(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		version string
		want    []string // each in its own warning, in order
	}{
		{"3.5.7", []string{"OpenSSL 3.5.7: "}}, // CVE-2026-84782, fixed in 3.5.9
		{"3.0.22", []string{"OpenSSL 3.0.22: the 3.0 series (LTS) reached its end of life on 2026-09-07", "OpenSSL 3.0.22: "}},
		{"4.0.3", nil},
	} {
		got := releaseWarnings(tc.version, day, advisory.Warning)
		if len(got) != len(tc.want) {
			t.Errorf("%s: warnings %q, want %d", tc.version, got, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: warning %q, want it to start %q", tc.version, got[i], w)
			}
		}
	}
	if got := releaseWarnings("3.5.7", day, advisory.Warning); len(got) != 1 || !strings.Contains(got[0], "CVE-2026-84782 (high, 2026-09-29)") || !strings.Contains(got[0], "fixed in 3.5.") {
		t.Errorf("3.5.7: %q", got)
	}
	if got := releaseWarnings("3.0.22", day, advisory.Warning); len(got) != 2 || !strings.Contains(got[1], "CVE-2026-84782 (high, 2026-09-29)") || !strings.Contains(got[1], "no public fix (3.0.23: premium support only)") {
		t.Errorf("3.0.22: %q", got)
	}
}
