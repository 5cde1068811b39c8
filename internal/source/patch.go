package source

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/osslbuild/osslbuild/internal/source/patch"
)

// applyPatches applies the patches in fsys that match version to dir.
func applyPatches(ctx context.Context, fsys fs.FS, version, dir string) ([]AppliedPatch, error) {
	ps, err := patch.Apply(ctx, fsys, version, dir)
	if err != nil {
		return nil, fmt.Errorf("patch openssl-%s: %w", version, err)
	}
	out := make([]AppliedPatch, 0, len(ps))
	for _, p := range ps {
		out = append(out, AppliedPatch{Name: p.Name, SHA256: p.SHA256})
	}
	return out, nil
}
