package inspect

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// The cross toolchain the tests compile real Mach-O objects with
// (environment.md section 2). Tests skip without it, and fail when CI=true.
type toolchain struct{ clang, ar, lipo string }

func needToolchain(t testing.TB) toolchain {
	t.Helper()
	c := testfixture.NeedCross(t)
	return toolchain{c.Clang, c.Ar, c.Lipo}
}

func run(t testing.TB, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// compile writes src to dir/name.c and compiles it for target
// ("arm64-apple-macos11", "x86_64-apple-macos10.12"); returns the .o path.
func (tc toolchain) compile(t testing.TB, dir, target, name, src string) string {
	t.Helper()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := filepath.Join(dir, name+".o")
	run(t, nil, tc.clang, "-target", target, "-nostdinc", "-O1", "-c", c, "-o", o)
	return o
}

// archive runs llvm-ar with --format=format ("darwin", "gnu", "" for default).
// sym64 forces the 64-bit symbol table (__.SYMDEF_64 or /SYM64/).
func (tc toolchain) archive(t testing.TB, format string, sym64 bool, out string, objs ...string) string {
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
	run(t, env, tc.ar, args...)
	return out
}

func (tc toolchain) lipoCreate(t testing.TB, out string, ins ...string) string {
	t.Helper()
	run(t, nil, tc.lipo, append(append([]string{"-create"}, ins...), "-output", out)...)
	return out
}

const plainSrc = "int ossl_add(int a, int b) { return a + b; }\n"

// longName is longer than the 16 bytes an ar header holds, to exercise
// "#1/N" and "//" long names.
const longName = "libcrypto-lib-a_very_long_member_name"
