package artifact

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
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

// Digests of a written tarball.
type Digests struct {
	SHA256    string `json:"sha256"`     // of the .tar.gz
	TarSHA256 string `json:"tar_sha256"` // of the uncompressed tar: stable even if Go's flate output changes
	Size      int64  `json:"size"`
}

// WriteTarball writes dir as a deterministic .tar.gz to out: entries sorted
// by path under the top-level name top, every mtime set to mtime, uid/gid 0
// with no names, modes normalised to 0755 (dirs and executables) or 0644,
// and a gzip header with no name and no time. The same tree gives the same
// bytes whatever the umask, owner, timestamps or directory order.
func WriteTarball(ctx context.Context, dir, top string, mtime time.Time, out io.Writer) (Digests, error) {
	gzSum, tarSum := sha256.New(), sha256.New()
	cw := &countWriter{w: io.MultiWriter(out, gzSum)}
	gz, err := gzip.NewWriterLevel(cw, gzip.BestCompression)
	if err != nil {
		return Digests{}, err
	}
	// Header fields left zero: no name, no ModTime, OS left at Go's default.
	if err := writeTar(ctx, dir, top, mtime, io.MultiWriter(gz, tarSum)); err != nil {
		return Digests{}, err
	}
	if err := gz.Close(); err != nil {
		return Digests{}, err
	}
	return Digests{SHA256: hex.EncodeToString(gzSum.Sum(nil)), TarSHA256: hex.EncodeToString(tarSum.Sum(nil)), Size: cw.n}, nil
}

// WriteTarballFile is WriteTarball into a new file at path.
func WriteTarballFile(ctx context.Context, dir, top string, mtime time.Time, path string) (Digests, error) {
	f, err := os.Create(path)
	if err != nil {
		return Digests{}, err
	}
	d, err := WriteTarball(ctx, dir, top, mtime, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return d, err
}

// ReadTarballStream reads the .tar.gz at path as osslbuild writes it: one
// gzip member with the header WriteTarball writes (no name, comment, time
// or extra field) and nothing after it. It returns the file's digests,
// TarSHA256 being the sha256 of the tar stream it unpacks to. The deflate
// encoding itself is not derived again: the bytes a reader unpacks are
// what SameStream holds to a tree. Apart from that comparison so that a
// cache hit unpacks the tarball while it derives the tree's stream.
func ReadTarballStream(ctx context.Context, path string) (Digests, error) {
	f, _, err := ctxio.OpenRegular(path, false)
	if err != nil {
		return Digests{}, err
	}
	defer f.Close()
	fileSum := sha256.New()
	read := &countWriter{w: fileSum}
	br := bufio.NewReader(io.TeeReader(ctxio.Reader(ctx, f), read))
	gz, err := gzip.NewReader(br)
	if err != nil {
		return Digests{}, fmt.Errorf("%s: %w", path, err)
	}
	gz.Multistream(false)
	if h := gz.Header; h.Name != "" || h.Comment != "" || !h.ModTime.IsZero() || len(h.Extra) > 0 {
		return Digests{}, fmt.Errorf("%s: its gzip header (name %q, comment %q, time %v, %d bytes extra) is not the one osslbuild writes", path, h.Name, h.Comment, h.ModTime, len(h.Extra))
	}
	ts := sha256.New()
	n, err := io.Copy(ts, io.LimitReader(gz, MaxTarStream+1))
	if err != nil {
		return Digests{}, fmt.Errorf("%s: %w", path, err)
	}
	if n > MaxTarStream {
		return Digests{}, fmt.Errorf("%s: unpacks to more than %d bytes, more than any artifact holds: not read further", path, int64(MaxTarStream))
	}
	if n, _ := io.Copy(io.Discard, br); n > 0 {
		return Digests{}, fmt.Errorf("%s: %d bytes after its gzip stream", path, n)
	}
	return Digests{SHA256: hex.EncodeToString(fileSum.Sum(nil)), TarSHA256: hex.EncodeToString(ts.Sum(nil)), Size: read.n}, nil
}

// MaxTarStream bounds what ReadTarballStream unpacks: a real artifact's
// tar stream is tens of megabytes; a gzip bomb in a cache entry is read
// no further than this.
const MaxTarStream = 2 << 30

// SameStream refuses a tarball (at path, read as d) whose tar stream is
// not the tree's, tarSum.
func SameStream(path string, d Digests, tarSum string) error {
	if d.TarSHA256 != tarSum {
		return fmt.Errorf("%s: its tar stream (sha256 %s) is not the tree's (%s)", path, d.TarSHA256, tarSum)
	}
	return nil
}

// writeTar writes dir's tar stream, as WriteTarball describes it, to w.
func writeTar(ctx context.Context, dir, top string, mtime time.Time, w io.Writer) error {
	nodes, err := tarOrder(ctx, dir)
	if err != nil {
		return fmt.Errorf("tarball %s: %w", dir, err)
	}
	tw := tar.NewWriter(w)
	mtime = tarTime(mtime)
	if err := tw.WriteHeader(dirHeader(top, mtime)); err != nil {
		return err
	}
	for _, n := range nodes {
		p := filepath.Join(dir, filepath.FromSlash(n.rel))
		name := top + "/" + n.rel
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			if err := tw.WriteHeader(dirHeader(name, mtime)); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := tw.WriteHeader(fileHeader(name, fi.Mode(), fi.Size(), mtime)); err != nil {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, ctxio.Reader(ctx, f))
			f.Close()
			if err != nil {
				return fmt.Errorf("tarball %s: %w", p, err)
			}
		default:
			return fmt.Errorf("tarball %s: %s is not a regular file or directory (%s)", dir, n.rel, fi.Mode().Type())
		}
	}
	return tw.Close()
}

// treeNode is one entry below a tree's root: its slash-separated path
// relative to the root and its type.
type treeNode struct {
	rel string
	typ fs.FileMode
}

// tarOrder lists every entry below dir, without following links, in the
// order of its tar stream: by slash path, so a directory precedes its
// files. writeTar and CopyVerified share it, so a tarball written from a
// tree and the stream derived while copying one cannot differ in order.
func tarOrder(ctx context.Context, dir string) ([]treeNode, error) {
	var nodes []treeNode
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		nodes = append(nodes, treeNode{filepath.ToSlash(rel), d.Type()})
		return nil
	})
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].rel < nodes[j].rel })
	return nodes, err
}

// tarTime is every entry's mtime: UTC, whole seconds.
func tarTime(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// dirHeader and fileHeader are the tar stream's headers: no owner, PAX,
// modes normalised to 0755 (directories, and files with any execute bit)
// or 0644.
func dirHeader(name string, mtime time.Time) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}
}

func fileHeader(name string, mode fs.FileMode, size int64, mtime time.Time) *tar.Header {
	m := int64(0o644)
	if mode&0o111 != 0 {
		m = 0o755
	}
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: m, Size: size, ModTime: mtime, Format: tar.FormatPAX}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// HashTree returns the sha256 of every regular file under dir, keyed by
// slash-separated relative path (Entries), refusing anything else.
func HashTree(ctx context.Context, dir string) (map[string]string, error) {
	entries, err := Entries(ctx, dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for rel, e := range entries {
		if e.Type != "" {
			return nil, fmt.Errorf("hash %s: %s: %s, expected a regular file", dir, rel, e.Type)
		}
		out[rel] = e.SHA256
	}
	return out, nil
}

// SHA256 is the hex sha256 of b.
func SHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ShaLine is the content of a .sha256 file, in sha256sum's format.
func ShaLine(sum, name string) string {
	return sum + "  " + strings.TrimPrefix(filepath.Base(name), "/") + "\n"
}
