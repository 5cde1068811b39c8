package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/source/release"
	"github.com/osslbuild/osslbuild/internal/source/unpack"
)

// Files reads the tarball of release rel at path (the source cache's copy)
// once, as a stream, without unpacking it: it returns the bytes of the
// regular files keep selects and the name of every regular file, each
// relative to the top-level directory. The bytes are hashed as they are
// read, and nothing is returned unless they are the whole tarball the
// release pins (its sha256, and its size when known): what a caller reads
// is the release, whatever the cache holds.
func Files(ctx context.Context, rel release.Release, path string, keep func(rel string) bool) (files map[string][]byte, names []string, err error) {
	name := rel.FileName()
	f, _, err := ctxio.OpenRegular(path, true) // a FIFO in the cache must not block
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	h := sha256.New()
	n := &counter{}
	files = map[string][]byte{}
	err = inspect.WalkTarGz(ctx, name, io.TeeReader(f, io.MultiWriter(h, n)), identityLimits, func(m inspect.Member, body io.Reader) error {
		_, rel, err := unpack.SplitName(m.Name)
		if err != nil {
			return fmt.Errorf("member %q: %w", m.Name, err)
		}
		names = append(names, rel)
		if !keep(rel) {
			return nil
		}
		files[rel], err = io.ReadAll(body)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	// The bytes after the gzip stream, if any, count too.
	if _, err := io.Copy(io.MultiWriter(h, n), f); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(sum, rel.SHA256) || rel.Size != 0 && n.n != rel.Size {
		return nil, nil, fmt.Errorf("read %s: %s holds %d bytes with sha256 %s, not the release's %d bytes with sha256 %s", name, path, n.n, sum, rel.Size, rel.SHA256)
	}
	return files, names, nil
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
