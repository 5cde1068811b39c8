package e2e

import (
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// CodeBuild is one full build whose machine code the code classifier's
// end-to-end tests judge (codeclass on the libraries, check on the
// command): osslbuild's -O3 builds look optimised, the pyca-way builds
// (CFLAGS in Configure's environment, so no -O at all) -O0-like.
type CodeBuild struct {
	Name  string
	Lib   func(t testing.TB) string // the lib directory, holding libcrypto.a and libssl.a
	Archs []string                  // the slices of each library, in order
	Want  inspect.CodeClass
}

// CodeBuilds are the builds, each made once per key (see Shared). No
// pyca-way macOS build is among them: the code corpus
// (codeclass.TestCodeCalibration) proves arm64 and x86_64 -O0 code of
// OpenSSL's own sources -O0-like for macOS and Linux, so a full build of
// either would prove nothing more.
var CodeBuilds = []CodeBuild{
	{"osslbuild universal2 -O3", func(t testing.TB) string {
		return filepath.Join(Universal2(t), "dist", "openssl-macos-universal2", "lib")
	}, []string{"x86_64", "arm64"}, inspect.CodeOptimised},
	{"osslbuild linux-x86_64 -O3", func(t testing.TB) string {
		return filepath.Join(LinuxX8664(t), "lib")
	}, []string{"x86_64"}, inspect.CodeOptimised},
	{"pyca way linux-x86_64", func(t testing.TB) string {
		return filepath.Join(PycaLinuxX8664(t), "lib")
	}, []string{"x86_64"}, inspect.CodeO0},
}
