package artifact

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/platform"
)

// TestLayoutShared lays out a staged install of shared libraries the way
// OpenSSL installs them on each platform (versioned files, unversioned
// links, archives, .pc and CMake files naming the links) and requires the
// artifact's own shape: the versioned files only, .pc and CMake naming
// them, a name that merely begins with the link's left alone.
func TestLayoutShared(t *testing.T) {
	for _, tt := range []struct {
		os, arch, crypto, ssl, link string
	}{
		{"macos", "arm64", "libcrypto.3.dylib", "libssl.3.dylib", "libcrypto.dylib"},
		{"linux", "x86_64", "libcrypto.so.3", "libssl.so.3", "libcrypto.so"},
	} {
		t.Run(tt.os, func(t *testing.T) {
			s := platform.Slice{OS: tt.os, Arch: tt.arch, Shared: &platform.Shared{InstallName: "@rpath", Version: "3"}}
			if got := s.Libraries(); !slices.Equal(got, []string{tt.crypto, tt.ssl}) {
				t.Fatalf("Libraries() = %v", got)
			}
			stage := t.TempDir()
			root := filepath.Join(stage, "opt", "x")
			write := func(rel, body string) {
				p := filepath.Join(root, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("include/openssl/ssl.h", "/* */\n")
			write("lib/"+tt.crypto, "crypto")
			write("lib/"+tt.ssl, "ssl")
			write("lib/libcrypto.a", "!<arch>\n")
			write("lib/pkgconfig/libcrypto.pc", "prefix=/opt/x\nlibdir=${prefix}/lib\nLibs: -L${libdir} -lcrypto\nLibs.private: -ldl -pthread\n")
			write("lib/cmake/OpenSSL/OpenSSLConfig.cmake",
				`set(OPENSSL_LIBCRYPTO_SHARED "${OPENSSL_LIBRARY_DIR}/`+tt.link+`")`+"\n"+
					`set(OTHER "${OPENSSL_LIBRARY_DIR}/`+tt.crypto+`")`+"\n")
			for _, n := range []string{"libcrypto", "libssl"} {
				to := tt.crypto
				if n == "libssl" {
					to = tt.ssl
				}
				if err := os.Symlink(to, filepath.Join(root, "lib", s.Format().SharedLink(n))); err != nil {
					t.Fatal(err)
				}
			}
			dst := filepath.Join(t.TempDir(), "a")
			files, err := Layout(stage, "/opt/x", dst, s)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"include/openssl/ssl.h", "lib/cmake/OpenSSL/OpenSSLConfig.cmake", "lib/" + tt.crypto, "lib/" + tt.ssl, "lib/pkgconfig/libcrypto.pc"}
			slices.Sort(files)
			slices.Sort(want)
			if !slices.Equal(files, want) {
				t.Errorf("laid out %v, want %v", files, want)
			}
			pc, _ := os.ReadFile(filepath.Join(dst, "lib/pkgconfig/libcrypto.pc"))
			if !strings.Contains(string(pc), "Libs: ${libdir}/"+tt.crypto+"\n") {
				t.Errorf("libcrypto.pc:\n%s", pc)
			}
			cm, _ := os.ReadFile(filepath.Join(dst, "lib/cmake/OpenSSL/OpenSSLConfig.cmake"))
			if want := `/` + tt.crypto + `")` + "\n" + `set(OTHER "${OPENSSL_LIBRARY_DIR}/` + tt.crypto + `")`; !strings.Contains(string(cm), want) {
				t.Errorf("OpenSSLConfig.cmake:\n%s", cm)
			}
			if fi, err := os.Stat(filepath.Join(dst, "lib", tt.crypto)); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("%s: %v %v", tt.crypto, fi, err)
			}
			// A link to anything but the versioned file is refused.
			os.Remove(filepath.Join(root, "lib", s.Format().SharedLink("libssl")))
			os.Symlink("/etc/passwd", filepath.Join(root, "lib", s.Format().SharedLink("libssl")))
			if _, err := Layout(stage, "/opt/x", filepath.Join(t.TempDir(), "b"), s); err == nil || !strings.Contains(err.Error(), s.Format().SharedLink("libssl")+` links to "/etc/passwd", want `+tt.ssl) {
				t.Errorf("a link elsewhere: %v", err)
			}
		})
	}
}

func TestReplaceName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"/lib/libcrypto.so"`, `"/lib/libcrypto.so.3"`},
		{`"/lib/libcrypto.so.3"`, `"/lib/libcrypto.so.3"`},
		{`/libcrypto.so /libcrypto.so_x /libcrypto.so`, `/libcrypto.so.3 /libcrypto.so_x /libcrypto.so.3`},
		{`/libcrypto.so`, `/libcrypto.so.3`},
	} {
		if got := string(replaceName([]byte(tt.in), "/libcrypto.so", "/libcrypto.so.3")); got != tt.want {
			t.Errorf("replaceName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
