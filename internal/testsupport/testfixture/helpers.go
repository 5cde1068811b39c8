package testfixture

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Tool returns the path of name on PATH, skipping the test (failing it
// with CI=true) as Missing does when it is absent. An external tool puts
// the test in the gate tier, and one only setup-cross.sh's Linux machine
// has (clang-14, qemu-user...) on LinuxCross.
func Tool(t testing.TB, name string) string {
	t.Helper()
	NeedTier(t, TierGate, "the external tool "+name)
	if crossTool(name) {
		On(t, LinuxCross)
	}
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

// WriteTree writes files (relative name to content) under dir, making the
// directories they need.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ExitCode runs cmd and returns its exit status; a command that cannot be
// run at all fails the test.
func ExitCode(t testing.TB, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}
