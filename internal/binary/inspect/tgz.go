package inspect

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

func isGzip(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b, 0x08}) }

// WalkTarGz offers every regular file of the gzip-compressed tar stream r
// to fn, in archive order, reading r once from start to end. Skipped member
// bytes are still inflated by gunzip, so the total and ratio limits count
// the whole decompressed stream, not only what fn reads.
func WalkTarGz(ctx context.Context, name string, r io.Reader, lim Limits, fn WalkFunc) error {
	return walkTarGz(ctx, name, r, lim, false, fn)
}

// WalkTarGzEntries is WalkTarGz for every entry: directories, links and
// special files too (their stream is empty), each with its full header in
// Member.Tar. Extraction and reproducibility checks read archives through
// it, so every reader of a .tar.gz shares the same limits.
func WalkTarGzEntries(ctx context.Context, name string, r io.Reader, lim Limits, fn WalkFunc) error {
	return walkTarGz(ctx, name, r, lim, true, fn)
}

func walkTarGz(ctx context.Context, name string, r io.Reader, lim Limits, all bool, fn WalkFunc) error {
	lim = lim.withDefaults()
	cr := &countReader{r: r, ctx: ctx}
	gz, err := gzip.NewReader(cr)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return &FormatError{Path: name, Msg: "gzip: " + strings.TrimPrefix(err.Error(), "gzip: ")}
	}
	defer gz.Close()
	stream := &streamLimit{r: gz, name: name, lim: lim, in: cr}
	if err := walkTar(ctx, stream, all, fn); err != nil {
		return err
	}
	// The tar end marker may come before the end of the gzip stream: read
	// on, so gzip checks its length and CRC-32 trailer (a truncated
	// download fails here).
	if _, err := io.Copy(io.Discard, stream); err != nil {
		if errors.Is(err, ErrLimit) || ctx.Err() != nil {
			return err
		}
		return &FormatError{Path: name, Offset: stream.out, Msg: "gzip: after the last entry: " + err.Error()}
	}
	return nil
}

// walkTar reads the tar stream (bounded by stream, which counts what it
// read) and offers its entries to fn. Every entry counts toward
// MaxMembers, pax global headers too.
func walkTar(ctx context.Context, stream *streamLimit, all bool, fn WalkFunc) error {
	name, lim := stream.name, stream.lim
	tr := tar.NewReader(stream)
	var total int64 // bytes offered to fn (sparse holes included)
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if errors.Is(err, ErrLimit) || ctx.Err() != nil {
				return err
			}
			if n == 0 && (errors.Is(err, tar.ErrHeader) || err == io.ErrUnexpectedEOF) {
				// Not even one header: a gzip file of something else (data,
				// a .json.gz), not a broken tarball.
				return &FormatError{Path: name, Offset: stream.out, Msg: "tar: " + err.Error(), notTar: true}
			}
			return &FormatError{Path: name, Offset: stream.out, Msg: "tar: " + err.Error()}
		}
		if n >= lim.MaxMembers {
			return fmt.Errorf("inspect %s: %w: more than %d entries", location(name, hdr.Name, ""), ErrLimit, lim.MaxMembers)
		}
		if !all {
			switch hdr.Typeflag {
			case tar.TypeReg:
			case tar.TypeDir, tar.TypeXGlobalHeader:
				continue
			default:
				// Named, never opened: check reports what it skipped.
				if err := fn(Member{Name: hdr.Name, Type: tarType(hdr), Tar: hdr}, bytes.NewReader(nil)); err != nil {
					return err
				}
				continue
			}
		}
		where := location(name, hdr.Name, "")
		if hdr.Size > lim.MaxMemberBytes {
			return fmt.Errorf("inspect %s: %w: member declares %d bytes (per-member limit %d)", where, ErrLimit, hdr.Size, lim.MaxMemberBytes)
		}
		mr := &memberReader{r: tr, ctx: ctx, where: where, lim: lim, total: &total}
		if err := fn(Member{Name: hdr.Name, Size: hdr.Size, Tar: hdr}, mr); err != nil {
			return err
		}
	}
}

// countReader counts compressed bytes and stops on cancellation.
type countReader struct {
	r   io.Reader
	ctx context.Context
	n   int64
}

func (c *countReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// streamLimit bounds the whole inflated stream: total bytes and the
// inflated/compressed ratio.
type streamLimit struct {
	r    io.Reader
	name string
	lim  Limits
	in   *countReader
	out  int64 // bytes read
}

func (s *streamLimit) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.out += int64(n)
	switch {
	case s.out > s.lim.MaxTotalBytes:
		return n, fmt.Errorf("inspect %s: %w: archive stream is longer than %d bytes (total limit)", s.name, ErrLimit, s.lim.MaxTotalBytes)
	case s.in != nil && s.out > RatioFloor && s.out/max(s.in.n, 1) > s.lim.MaxRatio:
		return n, fmt.Errorf("inspect %s: %w: %d compressed bytes inflate to more than %d (ratio above %d:1, a gzip bomb?)", s.name, ErrLimit, s.in.n, s.out, s.lim.MaxRatio)
	}
	return n, err
}

// tarType names a tar entry that is not a regular file or directory.
func tarType(h *tar.Header) string {
	switch h.Typeflag {
	case tar.TypeSymlink:
		return "symlink to " + h.Linkname
	case tar.TypeLink:
		return "hard link to " + h.Linkname
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "named pipe (FIFO)"
	}
	return fmt.Sprintf("tar entry of type %q", h.Typeflag)
}
