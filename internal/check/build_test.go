package check

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// Build-info lines as OpenSSL embeds them.
const (
	lineArmO3  = "cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC"
	lineArmO0  = "cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC" // pyca's
	lineX86O3  = "cc -fPIC -arch x86_64 -O3 -Wall -mmacosx-version-min=10.12 -march=core2 -DL_ENDIAN"
	lineGccO2  = "gcc -fPIC -pthread -m64 -Wall -g -O2 -DOPENSSL_PIC"
	versionTxt = "OpenSSL 4.0.2 25 Aug 2026"
)

// cversion is a C file holding what crypto/cversion.c puts into libcrypto:
// the compiler line (omitted when line is ""), platform, built-on, version.
func cversion(line, platform string) string {
	var b strings.Builder
	if line != "" {
		fmt.Fprintf(&b, "const char compiler_flags[] = \"compiler: %s\";\n", line)
	}
	fmt.Fprintf(&b, "const char plat[] = \"platform: %s\";\n", platform)
	b.WriteString("const char built[] = \"built on: Thu Jan  1 00:00:00 1970 UTC\";\n")
	b.WriteString("const char dir[] = \"OPENSSLDIR: \\\"/opt/homebrew/etc/openssl@3\\\"\";\n")
	fmt.Fprintf(&b, "const char ver[] = %q;\n", versionTxt)
	return b.String()
}

// consumer is a program compiled against OpenSSL's headers: the version
// macro, no build info (as Debian's /usr/bin/openssl).
const consumer = "const char ver[] = \"" + versionTxt + "\";\nint main(void) { return ver[0] == 0; }\n"

const plain = "int plain(int x) { return x + 1; }\n"

// kit compiles test objects into one directory per test.
type kit struct {
	t   testing.TB
	dir string
	n   int
}

func newKit(t testing.TB) *kit {
	t.Helper()
	testfixture.Tools(t, "clang-14", "llvm-ar-14", "llvm-lipo-14", "gcc", "ar")
	return &kit{t: t, dir: t.TempDir()}
}

func (k *kit) path(name string) string { return filepath.Join(k.dir, name) }

// source writes src to a fresh .c file of the kit.
func (k *kit) source(src string) string {
	k.t.Helper()
	k.n++
	c := k.path(fmt.Sprintf("src%d.c", k.n))
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		k.t.Fatal(err)
	}
	return c
}

// macho compiles src for a clang target ("arm64-apple-macos11") into an
// object named name. -ffreestanding: no macOS headers are needed.
func (k *kit) macho(name, target, src string) string {
	k.t.Helper()
	c := k.source(src)
	out := k.path(name)
	testfixture.RunIn(k.t, k.dir, "clang-14", "-target", target, "-ffreestanding", "-c", c, "-o", out)
	return out
}

// elf compiles src with gcc; extra picks the kind ("-c", "-shared -fPIC", "").
func (k *kit) elf(name, src string, extra ...string) string {
	k.t.Helper()
	c := k.source(src)
	out := k.path(name)
	testfixture.RunIn(k.t, k.dir, append(append([]string{"gcc"}, extra...), c, "-o", out)...)
	return out
}

// ar makes a static library; darwin selects BSD format with llvm-ar.
func (k *kit) ar(name string, darwin bool, objs ...string) string {
	k.t.Helper()
	out := k.path(name)
	args := []string{"llvm-ar-14", "rcs"}
	if darwin {
		args = append(args, "--format=darwin")
	} else {
		args = append(args, "--format=gnu")
	}
	testfixture.RunIn(k.t, k.dir, append(append(args, out), objs...)...)
	return out
}

func (k *kit) lipo(name string, in ...string) string {
	k.t.Helper()
	out := k.path(name)
	testfixture.RunIn(k.t, k.dir, append(append([]string{"llvm-lipo-14", "-create"}, in...), "-output", out)...)
	return out
}

// retype copies a Mach-O object and sets its filetype (6 MH_DYLIB,
// 8 MH_BUNDLE, 2 MH_EXECUTE): there is no Mach-O linker here, and check
// treats every file type alike.
func (k *kit) retype(name, obj string, filetype uint32) string {
	k.t.Helper()
	b, err := os.ReadFile(obj)
	if err != nil {
		k.t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[12:], filetype)
	out := k.path(name)
	if err := os.WriteFile(out, b, 0o755); err != nil {
		k.t.Fatal(err)
	}
	return out
}
