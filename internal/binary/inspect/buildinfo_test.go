package inspect

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

func TestScanBuildInfo(t *testing.T) {
	long := "compiler: cc " + strings.Repeat("-DX ", MaxBuildInfoLen/4)
	tests := []struct {
		name  string
		in    string
		kinds []BuildInfoKind
		texts []string
	}{
		{"nul-terminated", "\x00\x01compiler: cc -O3\x00platform: darwin64-arm64-cc\x00",
			[]BuildInfoKind{InfoCompiler, InfoPlatform}, []string{"cc -O3", "darwin64-arm64-cc"}},
		{"at start and end of stream", "built on: Thu Jan  1 00:00:00 1970 UTC\x00\x00OpenSSL 4.0.2 25 Aug 2026",
			[]BuildInfoKind{InfoBuiltOn, InfoVersion}, []string{"Thu Jan  1 00:00:00 1970 UTC", "OpenSSL 4.0.2 25 Aug 2026"}},
		{"prefix not at string start", "\x00xcompiler: cc\x00the compiler: cc\x00", nil, nil},
		// Real layout of 4.0.2's arm64 cversion.o: a jump table's last
		// byte, '$', runs into compiler_flags.
		{"stray constant bytes before prefix", "\x15\x18$compiler: cc -O3\x00\x01%(platform: x\x00",
			[]BuildInfoKind{InfoCompiler, InfoPlatform}, []string{"cc -O3", "x"}},
		{"version variants", "\x00OpenSSL 1.1.1w  11 Sep 2023\x00OpenSSL 3.6.0-alpha1 xx XXX xxxx\x00OpenSSL 3.0.19+quic 27 Jan 2026\x00OpenSSL 3.0 is great\x00OpenSSL 3.0.0\x00",
			[]BuildInfoKind{InfoVersion, InfoVersion, InfoVersion}, []string{"OpenSSL 1.1.1w  11 Sep 2023", "OpenSSL 3.6.0-alpha1 xx XXX xxxx", "OpenSSL 3.0.19+quic 27 Jan 2026"}},
		{"dirs", "\x00OPENSSLDIR: \"/opt/homebrew/etc/openssl@3\"\x00MODULESDIR: \"/x/lib/ossl-modules\"\x00ENGINESDIR: N/A\x00",
			[]BuildInfoKind{InfoOpenSSLDir, InfoModulesDir, InfoEnginesDir}, []string{`"/opt/homebrew/etc/openssl@3"`, `"/x/lib/ossl-modules"`, "N/A"}},
		{"tab inside", "\x00compiler: cc\t-O2\x00", []BuildInfoKind{InfoCompiler}, []string{"cc\t-O2"}},
		{"too long is truncated", "\x00" + long + "\x00", []BuildInfoKind{InfoCompiler}, []string{long[len("compiler: "):MaxBuildInfoLen]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// OneByteReader also checks runs that straddle reads.
			for _, r := range []func() *bytes.Reader{func() *bytes.Reader { return bytes.NewReader([]byte(tt.in)) }} {
				for _, rd := range []interface{ Read([]byte) (int, error) }{r(), iotest.OneByteReader(r())} {
					got, err := ScanBuildInfo(rd)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(tt.kinds) {
						t.Fatalf("found %d strings %+v, want %d", len(got), got, len(tt.kinds))
					}
					for i, b := range got {
						if b.Kind != tt.kinds[i] || b.Value != tt.texts[i] {
							t.Errorf("[%d] = %s %q, want %s %q", i, b.Kind, b.Value, tt.kinds[i], tt.texts[i])
						}
						if !strings.HasPrefix(tt.in[b.Offset:], b.Text) {
							t.Errorf("[%d] offset %d does not hold %q", i, b.Offset, b.Text)
						}
						if b.Truncated != (len(b.Text) == MaxBuildInfoLen) {
							t.Errorf("[%d] truncated = %v with %d bytes", i, b.Truncated, len(b.Text))
						}
					}
				}
			}
		})
	}
}

func TestScanBuildInfoReadError(t *testing.T) {
	_, err := ScanBuildInfo(iotest.TimeoutReader(bytes.NewReader(make([]byte, 100<<10))))
	if err == nil || !strings.Contains(err.Error(), "scan for build info at offset") {
		t.Errorf("err = %v", err)
	}
}
