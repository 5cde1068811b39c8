package ctxio

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// OpenRegular opens p for reading only if it is a regular file. It opens
// with O_NONBLOCK: open(2) of a FIFO otherwise waits for a writer, where
// no context can reach it, so a FIFO (or a device, or a socket) in place
// of a file would hold a build, and its cleanup, for ever. fstat then
// refuses anything but a regular file by name; a regular file reads as
// ever (O_NONBLOCK means nothing to it). follow says whether a symlink as
// the last component is followed (a path a user named) or refused (a file
// of a tree or a cache, which osslbuild wrote without links).
func OpenRegular(p string, follow bool) (*os.File, fs.FileInfo, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(p, flags, 0)
	if err != nil {
		if !follow && errors.Is(err, syscall.ELOOP) {
			return nil, nil, fmt.Errorf("%s: symlink, %w: not followed", p, ErrNotRegular)
		}
		if st, serr := os.Stat(p); errors.Is(err, syscall.ENXIO) && serr == nil {
			return nil, nil, notRegular(p, st) // a socket cannot be opened at all
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(p, st)
	}
	return f, st, nil
}

// ErrNotRegular is matched (errors.Is) by OpenRegular's refusal of
// anything but a regular file.
var ErrNotRegular = errors.New("expected a regular file")

func notRegular(p string, st fs.FileInfo) error {
	return fmt.Errorf("%s: %s, %w: not read", p, Describe(p, st.Mode().Type()), ErrNotRegular)
}

// ReadFile reads the regular file p (OpenRegular) of at most max bytes,
// stopping when ctx ends. A missing file's error matches fs.ErrNotExist.
func ReadFile(ctx context.Context, p string, follow bool, max int64) ([]byte, error) {
	f, _, err := OpenRegular(p, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(ctx, f, p, max)
}

// ReadAll reads r, named name in errors, to its end: at most max bytes,
// stopping when ctx ends.
func ReadAll(ctx context.Context, r io.Reader, name string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(Reader(ctx, r), max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, max)
	}
	return b, nil
}

// WriteFile writes data to p with mode perm through a temporary file in
// p's directory, renamed into place: p appears whole or not at all.
func WriteFile(p string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = cmp.Or(err, f.Chmod(perm), f.Close()); err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// SHA256 is the hex sha256 of the regular file p (OpenRegular), stopping
// when ctx ends.
func SHA256(ctx context.Context, p string, follow bool) (string, error) {
	f, _, err := OpenRegular(p, follow)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, Reader(ctx, f)); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Describe names a non-regular file type for messages: "symlink to X",
// "named pipe (FIFO)", "socket", "character device".
func Describe(p string, t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		if target, err := os.Readlink(p); err == nil {
			return "symlink to " + target
		}
		return "symlink"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "block device"
	case t.IsDir():
		return "directory"
	}
	return "irregular file (" + t.String() + ")"
}
