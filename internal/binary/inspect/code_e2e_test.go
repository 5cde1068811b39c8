package inspect_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// TestCodeEvidenceFullBuilds is the code classifier's final check, on the
// full OpenSSL builds the end-to-end tests make (shared fixtures, built
// once per run): osslbuild's -O3 libraries are optimised from the code
// alone, libssl.a included (it carries no compiler line); the pyca-way
// builds (CFLAGS in Configure's environment, so no -O at all) are -O0-like,
// for macOS arm64 and x86_64 and for linux-x86_64.
func TestCodeEvidenceFullBuilds(t *testing.T) {
	for _, tc := range []struct {
		name string
		libs func(t *testing.T) []string
		want inspect.CodeClass
	}{
		{"osslbuild universal2 (-O3)", func(t *testing.T) []string {
			lib := filepath.Join(e2e.Universal2(t), "dist", "openssl-macos-universal2", "lib")
			return []string{filepath.Join(lib, "libcrypto.a"), filepath.Join(lib, "libssl.a")}
		}, inspect.CodeOptimised},
		{"osslbuild linux-x86_64 (-O3)", func(t *testing.T) []string {
			lib := filepath.Join(e2e.LinuxX8664(t), "lib")
			return []string{filepath.Join(lib, "libcrypto.a"), filepath.Join(lib, "libssl.a")}
		}, inspect.CodeOptimised},
		{"pyca way arm64 (no -O)", func(t *testing.T) []string {
			return []string{e2e.PycaArm64(t)}
		}, inspect.CodeO0},
		{"pyca way x86_64 (no -O)", func(t *testing.T) []string {
			lib := e2e.PycaX8664(t)
			return []string{filepath.Join(lib, "libcrypto.a"), filepath.Join(lib, "libssl.a")}
		}, inspect.CodeO0},
		{"pyca way linux-x86_64 (no -O)", func(t *testing.T) []string {
			lib := filepath.Join(e2e.PycaLinuxX8664(t), "lib")
			return []string{filepath.Join(lib, "libcrypto.a"), filepath.Join(lib, "libssl.a")}
		}, inspect.CodeO0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range tc.libs(t) {
				vs, err := inspect.CodeEvidenceFile(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs {
					t.Logf("%s: %s", filepath.Base(p), v)
					if v.Class != tc.want {
						t.Errorf("%s %s: %s, want %s", p, v.Arch, v.Class, tc.want)
					}
				}
			}
		})
	}
}
