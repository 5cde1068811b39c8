// Package buildinfo is the version a Go binary of this module records of
// itself: the VCS revision the go command read from the checkout, else
// what go install stamped (a module version); and, for a binary Go did
// not stamp (the magefile, which mage compiles from a file list), the
// revision of the checkout it runs from, by the same rule (Checkout).
package buildinfo

import (
	"context"
	"os"
	"runtime/debug"
	"sync"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// Version is the VCS revision when the binary was built from a checkout,
// "+dirty." and a digest for one with changes, else the module version
// ("v0.3.0", a pseudo-version) when it was built as a module at a version;
// "" when the binary records neither.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return version(bi, executableDigest)
}

// version prefers the full revision: since Go 1.24 a build in a checkout
// also stamps the main module with a pseudo-version
// (v0.0.0-20261202104512-df65f29abcde), which holds only 12 digits of the
// commit, and the revision rule of verify:rebuild needs all 40.
//
// Go's vcs.modified is Checkout's rule (git status --porcelain lists
// something), so a clean stamp is the revision Checkout gives; a modified
// one says nothing of what differs, so the digest is the binary's own
// (digest): two binaries of different changes differ.
func version(bi *debug.BuildInfo, digest func() string) string {
	var rev string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case rev != "" && modified:
		return rev + "+dirty." + digest()
	case rev != "":
		return rev
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return ""
}

// executableDigest is 16 hex digits of the running binary's sha256.
var executableDigest = sync.OnceValue(func() string {
	p, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	sum, err := ctxio.SHA256(context.Background(), p, true)
	if err != nil {
		return "unknown"
	}
	return sum[:16]
})
