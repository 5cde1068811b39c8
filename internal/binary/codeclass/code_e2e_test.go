package codeclass_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// TestCodeEvidenceFullBuilds is the code classifier's final check, on the
// full OpenSSL builds the end-to-end tests make (shared fixtures, built
// once per run): osslbuild's -O3 libraries are optimised from the code
// alone, libssl.a included (it carries no compiler line); the pyca-way
// build (CFLAGS in Configure's environment, so no -O at all) is -O0-like.
// macOS -O0 code is the code corpus's (e2e.CodeBuilds says why).
func TestCodeEvidenceFullBuilds(t *testing.T) {
	for _, tc := range e2e.CodeBuilds {
		t.Run(tc.Name, func(t *testing.T) {
			lib := tc.Lib(t)
			for _, p := range []string{filepath.Join(lib, "libcrypto.a"), filepath.Join(lib, "libssl.a")} {
				vs, err := codeclass.EvidenceFile(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs {
					t.Logf("%s: %s", filepath.Base(p), v)
					if v.Class != tc.Want {
						t.Errorf("%s %s: %s, want %s", p, v.Arch, v.Class, tc.Want)
					}
				}
			}
		})
	}
}
