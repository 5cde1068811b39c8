package artifact

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// CopyVerified copies the artifact tree src to dst (made here; it must not
// exist) and verifies the copy as Verify does, in one pass over the bytes:
// each regular file is hashed as it is written, so what dst holds is what
// was verified, and the tar stream WriteTarball writes for dst under the
// top-level name top is derived on the way (its sha256 is returned, as
// TarSHA256 gives it). A cache hit so reads each file once instead of
// three times (copy, verify, tar stream). Only directories and regular
// files are copied: a link, FIFO, socket or device in src is never
// followed or opened, and is a mismatch as in Verify.
func CopyVerified(ctx context.Context, src, dst, top string) (*Manifest, string, error) {
	if fi, err := os.Lstat(src); err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", src, err)
	} else if !fi.IsDir() {
		return nil, "", fmt.Errorf("verify %s: %s, expected a directory: %w", src, Describe(src, fi.Mode().Type()), ErrMismatch)
	}
	mb, err := readRegular(ctx, filepath.Join(src, ManifestName), MaxManifestSize)
	if err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", src, err)
	}
	m, err := ParseManifest(mb)
	if err != nil {
		return nil, "", fmt.Errorf("verify %s: %s: %w", src, ManifestName, err)
	}
	if m.Schema != Schema {
		return nil, "", fmt.Errorf("verify %s: %s: schema %q, expected %q", src, ManifestName, m.Schema, Schema)
	}
	type node struct {
		rel string // slash-separated, relative to src
		typ fs.FileMode
	}
	var nodes []node
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == src {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		nodes = append(nodes, node{filepath.ToSlash(rel), d.Type()})
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", src, err)
	}
	// writeTar's order: by slash path, so a directory precedes its files.
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].rel < nodes[j].rel })

	if err := os.Mkdir(dst, 0o777); err != nil {
		return nil, "", err
	}
	stream := sha256.New()
	tw := tar.NewWriter(stream)
	mtime := time.Unix(m.SourceDateEpoch, 0).UTC().Truncate(time.Second)
	writeDir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX})
	}
	if err := writeDir(top); err != nil {
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
			if err := writeDir(top + "/" + n.rel); err != nil {
				return nil, "", fmt.Errorf("verify %s: %s: %w", src, n.rel, err)
			}
		case n.typ.IsRegular() && n.rel != ManifestName && m.Files[n.rel] == "":
			// Not listed: hashed for the message, never copied (an
			// entry cannot fill the disk with files it does not list).
			sum, err := hashRegular(ctx, from)
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
			found[n.rel] = Entry{Type: Describe(from, n.typ)}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", src, err)
	}
	// The manifest copied must be the one parsed above.
	if got, want := found[ManifestName].SHA256, sha256.Sum256(mb); got != hex.EncodeToString(want[:]) {
		return nil, "", fmt.Errorf("verify %s: %s changed while it was copied: %w", src, ManifestName, ErrMismatch)
	}
	delete(found, ManifestName)
	if ps := CompareFiles(m.Files, found); len(ps) > 0 {
		return m, "", &VerifyError{Dir: src, Problems: ps}
	}
	if ps := VerifyManifest(m); len(ps) > 0 {
		return m, "", fmt.Errorf("verify %s: %s: %s: %w", src, ManifestName, strings.Join(ps, "; "), ErrMismatch)
	}
	return m, hex.EncodeToString(stream.Sum(nil)), nil
}

// copyHashed copies the regular file from to the new file to, writing it
// as the tar member name too, and returns its sha256. The member's size is
// the size the open file had, so a file that grows or shrinks while it is
// copied fails instead of giving a stream another reader would not see;
// its mode is the copy's, as writeTar reads it.
func copyHashed(ctx context.Context, from, to, name string, mtime time.Time, tw *tar.Writer, buf []byte) (string, error) {
	in, st, err := OpenRegular(from)
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
	mode := int64(0o644)
	if ost.Mode()&0o111 != 0 {
		mode = 0o755
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: st.Size(), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
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
