package inspect

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

func isZip(b []byte) bool {
	// Local file header, or the end-of-central-directory record of an empty zip.
	return bytes.HasPrefix(b, []byte("PK\x03\x04")) || bytes.HasPrefix(b, []byte("PK\x05\x06"))
}

// WalkZip offers every regular file of the zip archive r (size bytes,
// named name in messages) to fn, in central-directory order. It uses
// archive/zip, which reads only the central directory up front (its
// allocation is bounded by the file's size), and decompresses a member only
// as far as fn reads it.
func WalkZip(ctx context.Context, name string, r io.ReaderAt, size int64, lim Limits, fn WalkFunc) error {
	lim = lim.withDefaults()
	zr, err := zip.NewReader(r, size)
	if err != nil && !(errors.Is(err, zip.ErrInsecurePath) && zr != nil) {
		// An insecure name ("../x") is harmless here: nothing is extracted
		// by name, members are spooled to temporary files.
		return &FormatError{Path: name, Msg: err.Error()} // "zip: ..."
	}
	if len(zr.File) > lim.MaxMembers {
		return fmt.Errorf("inspect %s: %w: %d entries, limit %d", name, ErrLimit, len(zr.File), lim.MaxMembers)
	}
	var total int64
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch mode := f.Mode(); {
		case mode.IsDir():
			continue
		case !mode.IsRegular():
			// A zip stores a symlink's target as its data; it is not read.
			typ := "special file (" + mode.Type().String() + ")"
			if mode&fs.ModeSymlink != 0 {
				typ = "symlink"
			}
			if err := fn(Member{Name: f.Name, Type: typ}, bytes.NewReader(nil)); err != nil {
				return err
			}
			continue
		}
		where := location(name, f.Name, "")
		if f.UncompressedSize64 > uint64(lim.MaxMemberBytes) {
			return fmt.Errorf("inspect %s: %w: member declares %d decompressed bytes (per-member limit %d)", where, ErrLimit, f.UncompressedSize64, lim.MaxMemberBytes)
		}
		rc, err := f.Open()
		if err != nil {
			return &FormatError{Path: name, Member: f.Name, Msg: err.Error()}
		}
		comp := int64(min(f.CompressedSize64, uint64(size)))
		if f.Method == zip.Store {
			comp = 0 // stored: no ratio to judge
		} else if comp == 0 {
			comp = 1
		}
		mr := &memberReader{r: rc, ctx: ctx, where: where, lim: lim, total: &total, compressed: comp}
		err = fn(Member{Name: f.Name, Size: int64(f.UncompressedSize64)}, mr)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
