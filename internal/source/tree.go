package source

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/osslbuild/osslbuild/internal/source/patch"
	"github.com/osslbuild/osslbuild/internal/source/unpack"
)

// Tree is an unpacked, patched source tree.
type Tree struct {
	Dir string
	// SourceDateEpoch is the newest mtime in the release tarball: fixed by
	// the release, so "built on:" and archive dates do not follow the clock.
	SourceDateEpoch int64
	Patches         []patch.Patch // applied to the tree, in order
}

// Unpack extracts the verified tarball into dest (which must not exist) and
// applies the patches in patchFS that match the release.
func Unpack(ctx context.Context, v *Verified, dest string, patchFS fs.FS) (*Tree, error) {
	res, err := unpack.Extract(ctx, v.Tarball.Path, dest, unpack.Options{TopDir: "openssl-" + v.Release.Version})
	if err != nil {
		return nil, err // already "unpack <file>: ..."
	}
	ps, err := patch.Apply(ctx, patchFS, v.Release.Version, dest)
	if err != nil {
		os.RemoveAll(dest)
		return nil, fmt.Errorf("patch openssl-%s: %w", v.Release.Version, err)
	}
	return &Tree{Dir: dest, SourceDateEpoch: res.Newest.Unix(), Patches: ps}, nil
}
