package pipeline

import (
	"context"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/patch"
	"github.com/osslbuild/osslbuild/patches"
)

// fetchSource verifies the release tarball (sha256, size, OpenPGP signature
// against the pinned keys), once per invocation however many slices use it.
func fetchSource(ctx context.Context, j *job) (err error) {
	j.source, err = j.run.fetched(ctx, j.plan.Release, source.Fetch, "")
	return err
}

// unpackSource extracts the verified tarball into the private directory,
// applies the patches for this release, and holds the recipe's defines to
// the sources before Configure sees them.
func unpackSource(ctx context.Context, j *job) (err error) {
	j.tree, err = source.Unpack(ctx, j.source, filepath.Join(j.work, "src"), patches.FS)
	if err != nil {
		return err
	}
	return j.plan.CheckDefines(os.DirFS(j.tree.Dir))
}

// Patches are the patches this osslbuild applies to OpenSSL version, as a
// manifest records them (never nil: a manifest writes "[]").
func Patches(version string) ([]artifact.Patch, error) {
	ps, err := patch.Select(patches.FS, version)
	if err != nil {
		return nil, err
	}
	out := []artifact.Patch{}
	for _, x := range ps {
		out = append(out, artifact.Patch{Name: x.Name, SHA256: x.SHA256})
	}
	return out, nil
}
