package ccflag

import (
	"slices"
	"testing"
)

// TestLine: the compiler lines clean builds embed name no refused flag
// (OpenSSL's own -Wa,--noexecstack and -Qunused-arguments on Linux,
// distributions' hardening flags), and each refused flag of a line is
// named once, the -O flags left to validation's optimisation rule.
func TestLine(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		want       []string
	}{
		{"osslbuild arm64", "cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DOPENSSL_BUILDING_OPENSSL -DNDEBUG", nil},
		{"osslbuild x86_64", "cc -fPIC -arch x86_64 -O3 -Wall -mmacosx-version-min=10.12 -march=core2 -DL_ENDIAN -DOPENSSL_PIC -DNDEBUG", nil},
		{"linux-x86_64", "gcc -fPIC -pthread -m64 -Wa,--noexecstack -Qunused-arguments -Wall -O3 -DL_ENDIAN -DOPENSSL_PIC -DOPENSSL_BUILDING_OPENSSL -DNDEBUG", nil},
		{"a distribution's hardened build", "gcc -fPIC -pthread -m64 -Wa,--noexecstack -Wall -fzero-call-used-regs=used-gpr -g -O2 -ffile-prefix-map=/build/src=. -fstack-protector-strong -fstack-clash-protection -Wformat -Werror=format-security -fcf-protection -DOPENSSL_USE_NODELETE -DL_ENDIAN -DOPENSSL_PIC -DOPENSSL_BUILDING_OPENSSL -DNDEBUG -Wdate-time -D_FORTIFY_SOURCE=2", nil},
		{"pyca's -O0", "cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -O0 -DNDEBUG", nil},
		{"sanitised, twice", "cc -O3 -fsanitize=address -fsanitize=address -fno-inline", []string{"-fsanitize=address", "-fno-inline"}},
		{"plugin through -Xclang", "clang -O3 -Xclang -load -Xclang /tmp/p.so", []string{"-Xclang", "-load"}},
		{"the compiler's name is not a flag", "-B/opt/cc -O3", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Line(tt.line) {
				got = append(got, f.Flag)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Line(%q) = %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}
