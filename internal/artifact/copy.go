package artifact

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// CopyVerified copies the artifact tree src to dst (made here; it must not
// exist) and verifies the copy as Verify does, in one pass over the bytes:
// each regular file is hashed as it is written, so what dst holds is what
// was verified, and the tar stream WriteTarball writes for dst under the
// top-level name top is derived on the way (its sha256 is returned, as
// Digests.TarSHA256 records it). A cache hit so reads each file once instead of
// three times (copy, verify, tar stream). Only directories and regular
// files are copied: a link, FIFO, socket or device in src is never
// followed or opened, and is a mismatch as in Verify.
func CopyVerified(ctx context.Context, src, dst, top string) (*Manifest, string, error) {
	if fi, err := os.Lstat(src); err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", src, err)
	} else if !fi.IsDir() {
		return nil, "", fmt.Errorf("verify %s: %s, expected a directory: %w", src, ctxio.Describe(src, fi.Mode().Type()), ErrMismatch)
	}
	m, mb, err := readManifestFile(ctx, src, ManifestName)
	if err != nil {
		return nil, "", err
	}
	nodes, err := tarOrder(ctx, src)
	if err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", src, err)
	}
	if err := os.Mkdir(dst, 0o777); err != nil {
		return nil, "", err
	}
	stream := sha256.New()
	tw := tar.NewWriter(stream)
	mtime := tarTime(time.Unix(m.SourceDateEpoch, 0))
	if err := tw.WriteHeader(dirHeader(top, mtime)); err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", src, err)
	}
	found := map[string]Entry{}
	buf := make([]byte, 256<<10)
	for _, n := range nodes {
		from := filepath.Join(src, filepath.FromSlash(n.rel))
		to := filepath.Join(dst, filepath.FromSlash(n.rel))
		switch {
		case n.typ.IsDir():
			if err := os.Mkdir(to, 0o777); err != nil {
				return nil, "", err
			}
			if err := tw.WriteHeader(dirHeader(top+"/"+n.rel, mtime)); err != nil {
				return nil, "", fmt.Errorf("verify %s: %s: %w", src, n.rel, err)
			}
		case n.typ.IsRegular() && n.rel != ManifestName && m.Files[n.rel] == "":
			// Not listed: hashed for the message, never copied (an
			// entry cannot fill the disk with files it does not list).
			sum, err := ctxio.SHA256(ctx, from, false)
			if err != nil {
				return nil, "", fmt.Errorf("verify %s: %w", src, err)
			}
			found[n.rel] = Entry{SHA256: sum}
		case n.typ.IsRegular():
			sum, err := copyHashed(ctx, from, to, top+"/"+n.rel, mtime, tw, buf)
			if err != nil {
				return nil, "", err
			}
			found[n.rel] = Entry{SHA256: sum}
		default:
			// Not copied and not in the stream: the comparison below
			// refuses it by name.
			found[n.rel] = Entry{Type: ctxio.Describe(from, n.typ)}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", src, err)
	}
	// The manifest copied must be the one parsed above.
	if got, want := found[ManifestName].SHA256, sha256.Sum256(mb); got != hex.EncodeToString(want[:]) {
		return nil, "", fmt.Errorf("verify %s: %s changed while it was copied: %w", src, ManifestName, ErrMismatch)
	}
	if err := holdFiles(src, m, found); err != nil {
		return m, "", err
	}
	return m, hex.EncodeToString(stream.Sum(nil)), nil
}

// copyHashed copies the regular file from to the new file to, writing it
// as the tar member name too, and returns its sha256. The member's size is
// the size the open file had, so a file that grows or shrinks while it is
// copied fails instead of giving a stream another reader would not see;
// its mode is the copy's, as writeTar reads it.
func copyHashed(ctx context.Context, from, to, name string, mtime time.Time, tw *tar.Writer, buf []byte) (string, error) {
	in, st, err := ctxio.OpenRegular(from, false)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666|st.Mode()&0o777)
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", from, err)
	}
	defer out.Close()
	ost, err := out.Stat()
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", from, err)
	}
	if err := tw.WriteHeader(fileHeader(name, ost.Mode(), st.Size(), mtime)); err != nil {
		return "", fmt.Errorf("copy %s: %w", from, err)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(out, h, tw), ctxio.Reader(ctx, in), buf)
	if err == nil && n != st.Size() {
		err = fmt.Errorf("%d bytes read, %d when it was opened: it changed while it was copied", n, st.Size())
	}
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", from, err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("copy %s: %w", from, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
