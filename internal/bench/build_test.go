package bench_test

import (
	"testing"

	"github.com/osslbuild/osslbuild/internal/bench"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// TestOsslbuildBuildIsO3: the artifact osslbuild built for linux-x86_64 says
// -O3 in libcrypto's compiler line.
func TestOsslbuildBuildIsO3(t *testing.T) {
	cl, err := bench.LibcryptoCompilerLine(e2e.LinuxX8664(t))
	if err != nil {
		t.Fatal(err)
	}
	if cl.Opt != inspect.O3 || cl.OptFlag != "-O3" {
		t.Errorf("osslbuild libcrypto: effective %s (flag %q), want -O3: compiler: %s", cl.Opt, cl.OptFlag, cl.Raw)
	}
}

// TestPycaWayBuildHasNoOptFlag: the pyca-way build really reproduces the
// bug: no -O flag at all in libcrypto's compiler line, so -O0, and the
// environment CFLAGS is what is there instead of "-Wall -O3".
func TestPycaWayBuildHasNoOptFlag(t *testing.T) {
	cl, err := bench.LibcryptoCompilerLine(e2e.PycaLinuxX8664(t))
	if err != nil {
		t.Fatal(err)
	}
	if cl.OptFlag != "" || cl.Opt != inspect.O0 {
		t.Errorf("pyca-way libcrypto: -O flag %q (effective %s), want none: compiler: %s", cl.OptFlag, cl.Opt, cl.Raw)
	}
	if !cl.Has(bench.PycaCFLAGS) || cl.Has("-Wall") {
		t.Errorf("pyca-way libcrypto: want %s in place of -Wall -O3: compiler: %s", bench.PycaCFLAGS, cl.Raw)
	}
}
