package testfixture

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Toolchain is the cross toolchain tests compile real Mach-O and ELF
// objects with (environment.md section 2). One copy serves inspect,
// codeclass and validate, so they compile their inputs alike.
type Toolchain struct{ Clang, Ar, Lipo string }

// NeedToolchain finds clang-14, llvm-ar-14 and llvm-lipo-14, skipping the
// test without them (failing it when CI=true), as Missing does.
func NeedToolchain(t testing.TB) Toolchain {
	t.Helper()
	return Toolchain{Clang: Tool(t, "clang-14"), Ar: Tool(t, "llvm-ar-14"), Lipo: Tool(t, "llvm-lipo-14")}
}

// RunEnv runs name with args, env added to the environment, and fails the
// test with the output when it fails.
func RunEnv(t testing.TB, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// Compile writes src to dir/name.c and compiles it for target
// ("arm64-apple-macos11", "x86_64-apple-macos10.12"); returns the .o path.
func (tc Toolchain) Compile(t testing.TB, dir, target, name, src string) string {
	t.Helper()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := filepath.Join(dir, name+".o")
	RunEnv(t, nil, tc.Clang, "-target", target, "-nostdinc", "-O1", "-c", c, "-o", o)
	return o
}

// Archive runs llvm-ar with --format=format ("darwin", "gnu", "" for default).
// sym64 forces the 64-bit symbol table (__.SYMDEF_64 or /SYM64/).
func (tc Toolchain) Archive(t testing.TB, format string, sym64 bool, out string, objs ...string) string {
	t.Helper()
	args := []string{}
	if format != "" {
		args = append(args, "--format="+format)
	}
	args = append(args, "rc", out)
	args = append(args, objs...)
	var env []string
	if sym64 {
		env = []string{"SYM64_THRESHOLD=0"}
	}
	RunEnv(t, env, tc.Ar, args...)
	return out
}

// LipoCreate merges thin files into the universal file out.
func (tc Toolchain) LipoCreate(t testing.TB, out string, ins ...string) string {
	t.Helper()
	RunEnv(t, nil, tc.Lipo, append(append([]string{"-create"}, ins...), "-output", out)...)
	return out
}

// CVersionSrc mimics crypto/cversion.c with buildinf.h: the compiler line
// as a char array (as mkbuildinf.pl writes it), the rest as string literals.
func CVersionSrc(compiler, platform string) string {
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

// PlainSrc is a C file with one function and no build information.
const PlainSrc = "int ossl_add(int a, int b) { return a + b; }\n"

// LongName is longer than the 16 bytes an ar header holds, to exercise
// "#1/N" and "//" long names.
const LongName = "libcrypto-lib-a_very_long_member_name"

// Arm64Line is the compiler line RealSeeds embeds.
const Arm64Line = "cc -O0 -arch arm64"
