package check

import (
	"context"
	"strings"
	"testing"
)

// What the report says of each shape: the library family, whether the
// optimisation is known, and the sentence a person reads.
func TestShapeReports(t *testing.T) {
	want := map[string]struct {
		family, status string
		says           string // in a failure (when failing) or a note
		strictFails    bool
	}{
		"1: -O3 line and an empty compiler string elsewhere (arm64 program)": {"OpenSSL", "ok", "", false},
		"1: -O3 line and a decoy -O0 string elsewhere":                       {"OpenSSL", "ok", "", false},
		"2: BoringSSL compiler: n/a is unknown, reported, not failed": {"BoringSSL", "unknown",
			`boring.node arm64: BoringSSL: no compiler line recorded ("compiler: n/a"): how it was optimised cannot be shown; its machine code gives too little evidence (score 0.50 over 2 functions measured, 30 needed) (reported, not failed; -strict fails it)`, true},
		"2: LibreSSL information not available is unknown": {"LibreSSL", "unknown", `LibreSSL: no compiler line recorded ("compiler: information not available")`, true},
		"2: AWS-LC n/a is unknown":                         {"AWS-LC", "unknown", `AWS-LC: no compiler line recorded ("compiler: n/a")`, true},
		"3: a decoy -O3 elsewhere does not rescue it": {"OpenSSL", "below",
			`libcrypto-decoy.dylib arm64: compiler line has no -O flag (built without optimisation (-O0)), expected at least -O2: "cc -fPIC -arch arm64 -isysroot`, true},
		"-Os meets the default -minopt=2": {"OpenSSL", "ok", "", false},
		"two slices of two releases fail": {"OpenSSL", "ok",
			`libcrypto-mixed.a.o: slices embed different versions: x86_64 "OpenSSL 4.0.3 1 Oct 2026", arm64 "OpenSSL 4.0.2 25 Aug 2026"`, true},
	}
	for _, s := range shapes(t) {
		w, ok := want[s.name]
		if !ok {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			res, err := Check(context.Background(), Options{Path: s.path})
			if err != nil {
				t.Fatal(err)
			}
			for _, sl := range res.Binaries[0].Slices {
				if sl.Family != w.family || sl.OptStatus != w.status {
					t.Errorf("%s: family %q status %q, want %q %q", sl.Arch, sl.Family, sl.OptStatus, w.family, w.status)
				}
				if len(sl.Candidates) == 0 || !sl.Candidates[0].Chosen || sl.Candidates[0].Line != sl.Compiler {
					t.Errorf("%s: candidates %+v", sl.Arch, sl.Candidates)
				}
			}
			text := strings.Join(append(append([]string{}, res.Failures...), res.Notes...), "\n")
			if w.says != "" && !strings.Contains(text, w.says) {
				t.Errorf("report lacks %q:\n%s", w.says, text)
			}
			strict, err := Check(context.Background(), Options{Path: s.path, Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if strict.OK == w.strictFails {
				t.Errorf("-strict: OK = %v, failures %q", strict.OK, strict.Failures)
			}
		})
	}
}
