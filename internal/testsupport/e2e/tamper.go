package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// LinkOnlyMember is a libcrypto.a member only other members use (the
// time-stamp responder's TS_RESP_CTX_*): a library without it still
// validates and links the usual way, but not with every member loaded.
const LinkOnlyMember = "libcrypto-lib-ts_rsp_sign.o"

// linkOnlyFeature is the Configure option that would leave LinkOnlyMember
// out of the build: a fixture that link's tests drop it from keeps it.
const linkOnlyFeature = "no-ts"

// DropLinkOnlyMember deletes LinkOnlyMember from the lib/libcrypto.a of the
// artifact directory dir (a copy: fixtures are shared).
func DropLinkOnlyMember(t testing.TB, dir string) {
	t.Helper()
	testfixture.Run(t, "llvm-ar-14", "d", filepath.Join(dir, "lib", "libcrypto.a"), LinkOnlyMember)
}

// ForeignSources are zlib's file names: code that no OpenSSL release holds,
// as an outside probe put it into a cache entry (#56).
var ForeignSources = []string{"adler32", "compress", "crc32", "deflate", "gzclose", "gzlib", "gzread", "gzwrite",
	"infback", "inffast", "inflate", "inftrees", "trees", "uncompr", "zutil", "zcrc"}

// Foreign compiles an object dir/name.o at -O0 for the clang target
// ("arm64-apple-macos11", "x86_64-apple-macos10.12"): one small function,
// too little code for the machine code to say how it was compiled.
func Foreign(t testing.TB, dir, target, name string) string {
	t.Helper()
	tc := testfixture.NeedToolchain(t)
	c, o := filepath.Join(dir, name+".c"), filepath.Join(dir, name+".o")
	src := fmt.Sprintf("int %s_z(int a, int b) { int s = 0; for (int i = 0; i < a; i++) s += i * b; return s; }\n", name)
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	testfixture.RunEnv(t, nil, tc.Clang, "-target", target, "-nostdinc", "-O0", "-c", c, "-o", o)
	return o
}

// CVersionMember is the libcrypto.a member that carries the build's
// compiler line, a release's and the mini tree's alike.
const CVersionMember = "libcrypto-lib-cversion.o"

// Payloads makes, from the genuine libcrypto.a of a slice built for the
// clang target, the two libraries the probe resealed into an entry: (a)
// the foreign -O0 objects beside the genuine cversion object (whose
// compiler line still says -O3), and (b) the genuine archive with one
// foreign -O0 member, zutil.o, added.
func Payloads(t testing.TB, genuine, target string) (a, b string) {
	t.Helper()
	tc := testfixture.NeedToolchain(t)
	dir := t.TempDir()
	testfixture.RunIn(t, dir, tc.Ar, "x", genuine, CVersionMember)
	var objs []string
	for _, n := range ForeignSources {
		objs = append(objs, Foreign(t, dir, target, n))
	}
	a = tc.Archive(t, "darwin", false, filepath.Join(dir, "a.a"), append(objs, filepath.Join(dir, CVersionMember))...)
	b = testfixture.CopyFile(t, genuine, filepath.Join(dir, "b.a"))
	testfixture.RunEnv(t, nil, tc.Ar, "rs", b, filepath.Join(dir, "zutil.o"))
	return a, b
}
