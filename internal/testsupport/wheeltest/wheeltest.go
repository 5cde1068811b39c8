// Package wheeltest builds what a wheel builder hands to check, small and
// real (clang-14 objects, lld-link-14 DLLs, zip files), for the tests of
// osslcheck and of the check action.
package wheeltest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// cversion is the build information crypto/cversion.c compiles into
// libcrypto, with the compiler line given.
func cversion(version, line, platform string) string {
	return fmt.Sprintf(`const char *OpenSSL_version(int t) {
	switch (t) {
	case 0: return %q;
	case 1: return "compiler: %s";
	case 2: return "built on: Thu Jan  1 00:00:00 1970 UTC";
	case 3: return "platform: %s";
	case 4: return "OPENSSLDIR: \"/usr/local/ssl\"";
	}
	return "";
}
`, version, line, platform)
}

// Inputs builds what a wheel builder meets: a wheel whose extension module
// carries an -O0 OpenSSL (the pyca bug), a wheelhouse holding it and a
// good one, a Windows DLL (PE/COFF) built with /O2, and a fake
// site-packages tree.
func Inputs(t testing.TB) map[string]string {
	testfixture.Tools(t, "clang-14", "lld-link-14")
	dir := t.TempDir()
	run := func(args ...string) { t.Helper(); testfixture.RunIn(t, dir, args...) }
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	macho := func(name, src string) []byte {
		t.Helper()
		c := write(name+".c", src)
		out := filepath.Join(dir, name+".o")
		run("clang-14", "-target", "arm64-apple-macos11", "-ffreestanding", "-c", c, "-o", out)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		b[12] = 8 // MH_BUNDLE: an extension module (there is no Mach-O linker here)
		return b
	}
	bad := macho("bad", cversion("OpenSSL 3.5.7 9 Jun 2026", "cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC", "darwin64-arm64-cc"))
	good := macho("good", cversion("OpenSSL 3.5.7 9 Jun 2026", "cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC", "darwin64-arm64-cc"))
	wheel := func(name string, module []byte) string {
		t.Helper()
		p := filepath.Join(dir, "wheelhouse", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		var b bytes.Buffer
		z := zip.NewWriter(&b)
		for n, data := range map[string][]byte{"pkg/_rust.abi3.so": module, "pkg/__init__.py": []byte("")} {
			w, _ := z.Create(n)
			w.Write(data)
		}
		z.Close()
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badWheel := wheel("pkg-1.0-cp311-abi3-macosx_11_0_arm64.whl", bad)
	wheel("ok-1.0-cp311-abi3-macosx_11_0_arm64.whl", good)
	pe := write("pe.c", cversion("OpenSSL 3.5.4 30 Sep 2025", "cl  /Zi /Fdossl_static.pdb /Gs0 /GF /Gy /MD /W3 /wd4090 /nologo /O2 -DL_ENDIAN -DOPENSSL_PIC", "VC-WIN64A"))
	run("clang-14", "-target", "x86_64-pc-windows-msvc", "-O2", "-c", pe, "-o", filepath.Join(dir, "pe.obj"))
	run("lld-link-14", "/dll", "/noentry", "/out:"+filepath.Join(dir, "libcrypto-3-x64.dll"), filepath.Join(dir, "pe.obj"))
	site := filepath.Join(dir, "site-packages", "cryptography", "hazmat", "bindings")
	os.MkdirAll(site, 0o755)
	os.WriteFile(filepath.Join(site, "_rust.abi3.so"), good, 0o755)
	os.WriteFile(filepath.Join(dir, "site-packages", "six.py"), []byte("# not a binary\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "site-packages", "data.json.gz"), gz(t, `{"a": 1}`), 0o644)
	os.WriteFile(filepath.Join(dir, "site-packages", "manifest.json"), []byte(`{"name": "someone else's"}`), 0o644)
	return map[string]string{"wheel": badWheel, "good-wheel": filepath.Join(dir, "wheelhouse", "ok-1.0-cp311-abi3-macosx_11_0_arm64.whl"), "wheelhouse": filepath.Join(dir, "wheelhouse"),
		"pe": filepath.Join(dir, "libcrypto-3-x64.dll"), "site-packages": filepath.Join(dir, "site-packages"), "missing": filepath.Join(dir, "missing.whl")}
}

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	cmd := exec.Command("gzip", "-c")
	cmd.Stdin, cmd.Stdout = strings.NewReader(s), &b
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
