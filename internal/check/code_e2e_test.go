package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// check judges libssl.a, which carries no compiler line, from its machine
// code alone: osslbuild's -O3 builds are optimised and pass -minopt=3; the
// pyca-way build (CFLAGS in Configure's environment, so no -O) is
// -O0-like and fails it (linux-x86_64; macOS -O0 code is the code
// corpus's, e2e.CodeBuilds says why).
// Their libcrypto.a, whose line has no -O, agrees with its code: it fails
// on the line, with no contradiction.
func TestE2ECodeAlone(t *testing.T) {
	for _, tc := range e2e.CodeBuilds {
		t.Run(tc.Name, func(t *testing.T) {
			dir := tc.Lib(t)
			// libssl.a alone, copied out of its artifact: no manifest, no
			// compiler line, nothing but its code to go by.
			p := filepath.Join(t.TempDir(), "libssl.a")
			b, err := os.ReadFile(filepath.Join(dir, "libssl.a"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Check(context.Background(), Options{Path: p, MinOpt: "3"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Binaries) != 1 || len(res.Binaries[0].Slices) != len(tc.Archs) {
				t.Fatalf("%s: %+v", p, res.Binaries)
			}
			for _, s := range res.Binaries[0].Slices {
				t.Logf("libssl.a %s: opt %q (%s), code %+v", s.Arch, s.Opt, s.OptSource, s.Code)
				if s.Compiler != "" || s.Code == nil || s.Code.Class != string(tc.Want) || s.OptSource != "machine-code" || s.Opt != string(tc.Want) {
					t.Errorf("libssl.a %s: compiler %q, opt %q from %q, code %+v; want %s from the machine code", s.Arch, s.Compiler, s.Opt, s.OptSource, s.Code, tc.Want)
				}
			}
			want := tc.Want == inspect.CodeOptimised
			if res.OK != want {
				t.Errorf("libssl.a: ok %v, want %v: %q", res.OK, want, res.Failures)
			}
			if !want && !strings.Contains(strings.Join(res.Failures, "\n"), "the machine code looks -O0 (score ") {
				t.Errorf("libssl.a: failures do not name the machine code: %q", res.Failures)
			}

			// libcrypto.a: its line and its code agree.
			res, err = Check(context.Background(), Options{Path: filepath.Join(dir, "libcrypto.a"), MinOpt: "3"})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range res.Binaries[0].Slices {
				t.Logf("libcrypto.a %s: opt %q (%s), code %+v", s.Arch, s.Opt, s.OptSource, s.Code)
				if s.Code == nil || s.Code.Class != string(tc.Want) {
					t.Errorf("libcrypto.a %s: code %+v, want %s", s.Arch, s.Code, tc.Want)
				}
			}
			if all := strings.Join(res.Failures, "\n"); strings.Contains(all, "but the machine code looks") || res.OK != want {
				t.Errorf("libcrypto.a: ok %v, want %v, no contradiction: %q", res.OK, want, res.Failures)
			}
		})
	}
}
