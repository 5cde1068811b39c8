package inspect

import (
	"bytes"
	"testing"
)

func TestFamilyByMarker(t *testing.T) {
	for _, tc := range []struct {
		name   string
		data   string
		family Family
		marker string
	}{
		{"Bun's vendored BoringSSL", "\x00../../vendor/boringssl/crypto/fipsmodule/bn/add.cc.inc\x00", FamilyBoringSSL, "boringssl/crypto/"},
		{"WebRTC's BoringSSL", "x\x00../../download/src/third_party/boringssl/src/crypto/asn1/a_bitstr.c\x00y", FamilyBoringSSL, "boringssl/src/crypto/"},
		{"BoringSSL's libssl", "\x00/b/boringssl/ssl/handshake.cc\x00", FamilyBoringSSL, "boringssl/ssl/"},
		{"AWS-LC", "\x00/home/build/aws-lc/crypto/fipsmodule/bn/bn.c\x00", FamilyAWSLC, "aws-lc/crypto/"},
		{"a later occurrence is the marker", "boringssl/docs\x00 /boringssl/crypto/err/err.c\x00", FamilyBoringSSL, "boringssl/crypto/"},
		// Bazel's module directories: workerd's BoringSSL (Bazel 8), Bazel 7
		// and older canonical names, a module extension's repository.
		{"Bazel 8 module", "\x00external/boringssl+/crypto/asn1/a_int.cc\x00", FamilyBoringSSL, "boringssl+/crypto/"},
		{"Bazel 7 module", "\x00bazel-out/../external/boringssl~/src/ssl/ssl_lib.cc\x00", FamilyBoringSSL, "boringssl~/src/ssl/"},
		{"Bazel 6 versioned module", "\x00external/boringssl~0.20240530.0/crypto/bytestring/cbs.c\x00", FamilyBoringSSL, "boringssl~0.20240530.0/crypto/"},
		{"a module extension's repository", "\x00external/_main~deps~boringssl/crypto/err/err.c\x00", FamilyBoringSSL, "boringssl/crypto/"},
		{"AWS-LC as a Bazel module", "\x00external/aws-lc+/crypto/fipsmodule/bn/bn.c\x00", FamilyAWSLC, "aws-lc+/crypto/"},
		// MSVC's __FILE__: backslashes (Signal's Windows modules).
		{"a Windows build", "\x00C:\\a\\_temp\\build\\boring-sys-2a15\\out\\boringssl\\ssl\\ssl_lib.cc\x00", FamilyBoringSSL, "boringssl\\ssl\\"},
		// Not markers: a program that names the fork.
		{"a longer directory name ending in the fork's", "\x00/src/notboringssl/crypto/asn1/a_int.cc\x00", "", ""},
		{"a longer directory name starting with the fork's", "\x00/src/boringsslx/crypto/asn1/a_int.cc\x00", "", ""},
		{"a Bazel suffix without a directory after it", "\x00boringssl+crypto/asn1/a_int.cc\x00", "", ""},
		{"Go string constants end to end", "aws-lc/crypto/ssl/boringssl/src/crypto/", "", ""},
		{"an error message", "\x00An unknown BoringSSL error occurred: \x00", "", ""},
		{"a directory, no source file", "\x00/opt/boringssl/crypto/\x00", "", ""},
		{"OpenSSL's libssl", "\x00crypto/evp/digest.c\x00ssl/ssl_lib.c\x00", FamilyOpenSSL, "ssl/ssl_lib.c"},
		{"OpenSSL's libssl.a by GCC: the path opens the string section, after code", "\x31\xc0\xc3ssl/ssl_lib.c\x00IP ", FamilyOpenSSL, "ssl/ssl_lib.c"},
		{"OpenSSL built out of tree", "\x00../ssl/statem/statem.c\x00", FamilyOpenSSL, "ssl/statem/statem.c"},
		{"a fork keeps OpenSSL's paths", "\x00crypto/err/err.c\x00/s/boringssl/crypto/err/err.c\x00", FamilyBoringSSL, "boringssl/crypto/"},
		{"OpenSSL's path inside another", "\x00openssl_ssl/ssl_lib.c\x00", "", ""},
		{"OpenSSL's path without its NUL", "\x00ssl/ssl_lib.cc\x00", "", ""},
		{"OpenSSL's path as a Go constant", "crypto/cryptlib.cssl/ssl_lib.c", "", ""},
		// OpenSSL 1.0.2: its makefiles compile in each directory (bare
		// names), its Windows makefiles from the top (ssleay32.dll's).
		{"1.0.2's libssl", "\x00s3_srvr.c\x00s3_clnt.c\x00", FamilyOpenSSL, "s3_clnt.c"},
		{"1.0.2's libssl.a by GCC", "\x31\xc0\xc3s23_clnt.c\x00IP ", FamilyOpenSSL, "s23_clnt.c"},
		{"1.0.2's ssleay32.dll", "\x00.\\ssl\\s3_pkt.c\x00.\\ssl\\s3_clnt.c\x00", FamilyOpenSSL, "ssl\\s3_clnt.c"},
		{"1.0.2 inside Node.js's tree", "\x00../deps/openssl/openssl/ssl/s3_srvr.c\x00", FamilyOpenSSL, "ssl/s3_srvr.c"},
		{"1.0.2's libcrypto without its version string", "\x00eng_lib.c\x00", FamilyOpenSSL, "eng_lib.c"},
		{"a bare name another project's directory holds", "\x00/src/tls/s3_clnt.c\x00", "", ""},
		{"a bare name inside a longer one", "\x00mys3_clnt.c\x00", "", ""},
		{"a bare name after a backslash", "\x00src\\o_fips.c\x00", "", ""},
		{"nothing", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, m, _ := familyByMarker([]byte(tc.data), nil)
			if f != tc.family || m != tc.marker {
				t.Errorf("familyByMarker = %q, %q; want %q, %q", f, m, tc.family, tc.marker)
			}
		})
	}
}

// A marker across two of familyByMarkerAt's reads is still found, however
// the file falls into chunks.
func TestFamilyByMarkerAtChunks(t *testing.T) {
	path := "../../vendor/boringssl/crypto/fipsmodule/bn/add.cc.inc\x00"
	for _, at := range []int{0, 1, 4000, 4096 - 30, 4096 - 10, 4096 + 5, 9000} {
		data := bytes.Repeat([]byte{0xff}, 10000)
		copy(data[at:], path)
		f, m, _, err := familyByMarkerAt(bytes.NewReader(data), int64(len(data)), make([]byte, 4096), nil)
		if err != nil || f != FamilyBoringSSL || m != "boringssl/crypto/" {
			t.Errorf("marker at %d: %q, %q, %v", at, f, m, err)
		}
	}
	f, _, _, err := familyByMarkerAt(bytes.NewReader(make([]byte, 10000)), 10000, make([]byte, 4096), nil)
	if f != "" || err != nil {
		t.Errorf("no marker: %q, %v", f, err)
	}
}
