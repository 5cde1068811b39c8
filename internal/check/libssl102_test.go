package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// ssl102Version is 1.0.2's OPENSSL_VERSION_TEXT, which its ssl_lib.c
// compiles into libssl as SSL_version_str.
const ssl102Version = "OpenSSL 1.0.2u  20 Dec 2019"

// ssl102Source is a file of 1.0.2's libssl as its makefile compiles it:
// from inside ssl/, so that SSLerr's __FILE__ is the bare name, and with
// functions that take arguments and keep locals (what the classifier
// measures).
func ssl102Source(file string, funcs int) string {
	var b strings.Builder
	b.WriteString("void ERR_put_error(int lib, int func, int reason, const char *file, int line);\n")
	b.WriteString("#define SSLerr(f, r) ERR_put_error(20, (f), (r), __FILE__, __LINE__)\n")
	if file == "ssl_lib.c" {
		fmt.Fprintf(&b, "const char SSL_version_str[] = %q;\n", ssl102Version)
	}
	prefix := strings.TrimSuffix(file, ".c")
	for i := range funcs {
		fmt.Fprintf(&b, "int %s_f%d(int a, int b, const int *p) { int s = 0; if (a < 0) { SSLerr(%d, 65); return 0; } for (int i = 0; i < a; i++) s += p[i] * b + %d; return s ^ a; }\n", prefix, i, i, i)
	}
	return b.String()
}

// TestOpenSSL102Libssl: OpenSSL 1.0.2's libssl records no compiler line
// and no libcrypto build information, only the version string it holds
// as SSL_version_str and its bare source names (s3_clnt.c, ssl_lib.c).
// It is OpenSSL's code, judged like the others by its machine code: at -O0
// it fails, optimised it passes. 5392f1f's code took it for a program
// built against OpenSSL's headers and judged nothing. A program holding
// the version string alone is still not judged. Real static libraries,
// compiled here with clang-14 for macOS arm64 and x86_64 and with gcc for
// Linux, from ssl/ as 1.0.2's makefile compiles.
func TestOpenSSL102Libssl(t *testing.T) {
	k := newKit(t)
	for _, p := range []struct {
		name, target string
	}{
		{"arm64", "arm64-apple-macos11"},
		{"x86_64", "x86_64-apple-macos10.12"},
		{"linux-x86_64", ""},
	} {
		for _, tc := range []struct {
			opt, code, status, failure string
			ok                         bool
		}{
			{"-O0", "-O0-like", "below", "the machine code looks -O0", false},
			{"-O2", "optimised", "ok", "", true},
		} {
			t.Run(p.name+"/"+tc.opt, func(t *testing.T) {
				dir := filepath.Join(k.dir, p.name+tc.opt, "ssl")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				files := []string{"s3_clnt.c", "s3_srvr.c", "ssl_lib.c"}
				for _, f := range files {
					if err := os.WriteFile(filepath.Join(dir, f), []byte(ssl102Source(f, 20)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cc := []string{"gcc", tc.opt, "-c"}
				if p.target != "" {
					cc = []string{"clang-14", "-target", p.target, "-ffreestanding", tc.opt, "-c"}
				}
				testfixture.RunIn(t, dir, append(cc, files...)...)
				var objs []string
				for _, f := range files {
					objs = append(objs, filepath.Join(dir, strings.TrimSuffix(f, ".c")+".o"))
				}
				lib := k.ar(p.name+tc.opt+"-libssl.a", p.target != "", objs...)
				res, err := Check(context.Background(), Options{Path: lib, Now: dec1})
				if err != nil {
					t.Fatal(err)
				}
				s := res.Binaries[0].Slices[0]
				t.Logf("family %q, version %q, opt %q %q, code %+v; failures %q; notes %q", s.Family, s.Version, s.Opt, s.OptStatus, s.Code, res.Failures, res.Notes)
				if s.Family != "OpenSSL" || s.Version != ssl102Version || s.Opt != tc.code || s.OptStatus != tc.status || s.OptSource != "machine-code" {
					t.Errorf("family %q, version %q, opt %q, status %q, source %q: want OpenSSL's code, %s by its machine code (%s)", s.Family, s.Version, s.Opt, s.OptStatus, s.OptSource, tc.code, tc.status)
				}
				if res.OK != tc.ok || tc.failure != "" && !strings.Contains(strings.Join(res.Failures, "\n"), tc.failure) {
					t.Errorf("ok %v, failures %q: want ok %v, %q", res.OK, res.Failures, tc.ok, tc.failure)
				}
				var ev string
				for _, e := range s.Evidence {
					ev += e.Detail + "\n"
				}
				if !strings.Contains(ev, fmt.Sprintf("no compiler line; %q and the source path %q in the binary show OpenSSL's code", ssl102Version, "ssl_lib.c")) {
					t.Errorf("evidence %q: want the version string and the bare source name", ev)
				}
			})
		}
	}
	// The version string alone, in a program's own code: not judged.
	prog := k.macho("consumer.o", "arm64-apple-macos11", fmt.Sprintf("const char ver[] = %q;\n", ssl102Version)+manyFuncs(40))
	res, err := Check(context.Background(), Options{Path: prog, Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Binaries[0].Slices[0]; s.Status != StatusNotJudged || res.OK {
		t.Errorf("a program with 1.0.2's version string: status %q, ok %v; want not judged (and nothing judged fails)", s.Status, res.OK)
	}
}
