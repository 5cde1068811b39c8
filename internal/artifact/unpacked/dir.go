// Package unpacked turns an artifact given as a directory or a tarball into
// a directory, apart from package artifact so that reading manifests (check)
// needs no unpacker.
package unpacked

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/source/unpack"
)

// Dir returns an artifact directory for path: the directory path names
// (a symlink given as the path is resolved once, here, as check resolves
// its argument; links inside the artifact are still refused by Verify),
// else the .tar.gz unpacked under work (which must not exist yet), after
// checking it against the .sha256 beside it when there is one. Nothing in
// the result is trusted yet: Verify it.
func Dir(ctx context.Context, path, work string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("artifact %s: %w", path, err)
	}
	if fi.IsDir() {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", fmt.Errorf("artifact %s: %w", path, err)
		}
		return real, nil
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("artifact %s: %s, want a directory or a .tar.gz (not opened)", path, "a "+ctxio.Describe(path, fi.Mode().Type()))
	}
	// Opened without waiting: a FIFO beside the tarball is refused, not
	// waited on past every signal.
	want, err := ctxio.ReadFile(ctx, path+".sha256", true, 1<<10)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("artifact %s: %w", path, err)
	default:
		fields := strings.Fields(string(want))
		got, err := ctxio.SHA256(ctx, path, true)
		if err != nil {
			return "", err
		}
		if len(fields) == 0 || fields[0] != got {
			return "", fmt.Errorf("artifact %s: sha256 %s does not match %s.sha256 (%s)", path, got, filepath.Base(path), strings.TrimSpace(string(want)))
		}
	}
	if _, err := unpack.Extract(ctx, path, work, unpack.Options{Limits: inspect.Limits{MaxTotalBytes: 1 << 30}}); err != nil {
		return "", fmt.Errorf("artifact %s: %w", path, err)
	}
	return work, nil
}
