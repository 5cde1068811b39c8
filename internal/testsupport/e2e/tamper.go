package e2e

import (
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// LinkOnlyMember is a libcrypto.a member only other members use (the
// time-stamp responder's TS_RESP_CTX_*): a library without it still
// validates and links the usual way, but not with every member loaded.
const LinkOnlyMember = "libcrypto-lib-ts_rsp_sign.o"

// DropLinkOnlyMember deletes LinkOnlyMember from the lib/libcrypto.a of the
// artifact directory dir (a copy: fixtures are shared).
func DropLinkOnlyMember(t testing.TB, dir string) {
	t.Helper()
	testfixture.Run(t, "llvm-ar-14", "d", filepath.Join(dir, "lib", "libcrypto.a"), LinkOnlyMember)
}
