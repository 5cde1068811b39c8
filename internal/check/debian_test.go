package check

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

const debianLibcrypto = "/usr/lib/x86_64-linux-gnu/libcrypto.so.3"

// Debian builds libcrypto with gcc at -O2: it passes the default policy and
// fails -minopt=3.
func TestDebianLibcrypto(t *testing.T) {
	testfixture.Declare(t, testfixture.TierGate, "Debian's own OpenSSL libraries", testfixture.LinuxNative)
	if _, err := os.Stat(debianLibcrypto); err != nil {
		testfixture.Missing(t, "%s (apt-get install libssl3)", debianLibcrypto)
	}
	res, err := Check(context.Background(), Options{Path: debianLibcrypto})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || len(res.Binaries) != 1 || len(res.Binaries[0].Slices) != 1 {
		t.Fatalf("default policy: %+v", res)
	}
	s := res.Binaries[0].Slices[0]
	if s.Arch != "x86_64" || s.Opt != "-O2" || s.OptFlag != "-O2" || !strings.HasPrefix(s.Compiler, "gcc ") ||
		!s.Libcrypto || !strings.HasPrefix(s.Version, "OpenSSL 3.") || s.Platform != "debian-amd64" || s.BuiltOn == "" || s.MinOS != "" {
		t.Errorf("slice facts: %+v", s)
	}

	var out bytes.Buffer
	err = Run(context.Background(), Options{Path: debianLibcrypto, MinOpt: "3", Stdout: &out, Env: noEnv})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("minopt 3: err = %v, want ErrFailed", err)
	}
	for _, want := range []string{"optimises at -O2", "expected at least -O3", "FAIL (optimisation)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())
}

// noEnv is an empty environment: no GitHub Actions.
func noEnv(string) string { return "" }

// Debian's libssl.so.3 records no version string and no compiler line:
// OpenSSL's source paths name it and its machine code (gcc -O2) decides.
func TestDebianLibssl(t *testing.T) {
	testfixture.Declare(t, testfixture.TierGate, "Debian's own OpenSSL libraries", testfixture.LinuxNative)
	const p = "/usr/lib/x86_64-linux-gnu/libssl.so.3"
	if _, err := os.Stat(p); err != nil {
		testfixture.Missing(t, "%s (apt-get install libssl3)", p)
	}
	for _, tc := range []struct {
		strict bool
	}{{false}, {true}} {
		res, err := Check(context.Background(), Options{Path: p, MinOpt: "3", Strict: tc.strict})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK || len(res.Binaries) != 1 || len(res.Binaries[0].Slices) != 1 {
			t.Fatalf("strict %v: %+v", tc.strict, res)
		}
		s := res.Binaries[0].Slices[0]
		if s.Family != "OpenSSL" || s.Compiler != "" || s.Opt != "optimised" || s.OptSource != "machine-code" ||
			s.Code == nil || s.Code.Class != "optimised" || s.Code.Functions < 100 {
			t.Errorf("strict %v: slice facts: %+v, code %+v", tc.strict, s, s.Code)
		}
	}
}
