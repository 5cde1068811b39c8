package testfixture

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Tool returns the path of name on PATH, skipping the test (failing it
// with CI=true) as Missing does when it is absent.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s not on PATH: %v", name, err)
	}
	return p
}

// Tools is Tool for tests that only need the programs on PATH.
func Tools(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		Tool(t, name)
	}
}

// Cross is the cross toolchain tests compile real Mach-O objects and
// archives with (environment.md section 2; scripts/setup-cross.sh).
type Cross struct{ Clang, Ar, Lipo string }

// NeedCross finds clang-14, llvm-ar-14 and llvm-lipo-14, skipping (failing
// with CI=true) when one is missing.
func NeedCross(t testing.TB) Cross {
	t.Helper()
	return Cross{Clang: Tool(t, "clang-14"), Ar: Tool(t, "llvm-ar-14"), Lipo: Tool(t, "llvm-lipo-14")}
}

// Run runs args[0] with the rest as its arguments, failing the test with
// its output.
func Run(t testing.TB, args ...string) {
	t.Helper()
	RunIn(t, "", args...)
}

// RunIn is Run in directory dir ("" for the test's own).
func RunIn(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// CopyFile copies src to dst (mode 0644) and returns dst.
func CopyFile(t testing.TB, src, dst string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// CopyTree copies the directory src to dst (which must not exist) and
// returns dst, for tests that tamper with a copy of a fixture.
func CopyTree(t testing.TB, src, dst string) string {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// CversionSource mimics OpenSSL's crypto/cversion.c with its generated
// buildinf.h: the compiler line as a char array (as mkbuildinf.pl writes
// it), the rest as string literals.
func CversionSource(compiler, platform string) string {
	var b strings.Builder
	b.WriteString("static const char compiler_flags[] = {")
	for _, c := range []byte("compiler: " + compiler) {
		b.WriteString("'")
		if c == '\'' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		b.WriteString("',")
	}
	b.WriteString("'\\0'};\n")
	b.WriteString(`const char *OpenSSL_version(int t) {
	switch (t) {
	case 0: return "OpenSSL 4.0.2 25 Aug 2026";
	case 2: return compiler_flags;
	case 3: return "built on: Thu Jan  1 00:00:00 1970 UTC";
	case 4: return "platform: ` + platform + `";
	}
	return "not available";
}
`)
	return b.String()
}

// StandInRelease replaces the [[release]] block of version real in recipe
// text with one for the older release older, downloadable from urls and
// signed by signer. Its sha256 and size pin no real tarball: nothing may
// download it (a series is judged by its newest pinned version).
func StandInRelease(t testing.TB, text, real, older string, urls []string, signer string) string {
	t.Helper()
	head := "[[release]]\nversion = \"" + real + "\"\n"
	i := strings.Index(text, head)
	if i < 0 {
		t.Fatalf("recipe has no block for %s", real)
	}
	end := strings.Index(text[i:], "\n\n")
	if end < 0 {
		end = len(text) - i - 1
	}
	sum := sha256.Sum256([]byte("stand-in for OpenSSL " + older + ", never downloaded"))
	block := fmt.Sprintf("[[release]]\nversion = %q\nsha256 = %q\nsize = 1\nurls = [\n  %q,\n  %q,\n]\nsigners = [%q]",
		older, hex.EncodeToString(sum[:]), urls[0], urls[1], signer)
	return text[:i] + block + text[i+end:]
}
