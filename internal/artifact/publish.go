package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Published says where an artifact went.
type Published struct {
	Dir     string  // out/<name>
	Tarball string  // out/<name>.tar.gz
	Digests Digests // of the tarball
}

// Publish makes out/<name>/, out/<name>.tar.gz and out/<name>.tar.gz.sha256
// from the finished tree dir. Everything is written under a private
// temporary directory inside out and renamed into place only when complete,
// under a lock on out so two builds publishing there cannot interleave.
// On error nothing new is left in out.
func Publish(ctx context.Context, dir, out, name string, mtime time.Time) (*Published, error) {
	return publish(ctx, dir, out, name, func(tgz string) (Digests, error) {
		f, err := os.Create(tgz)
		if err != nil {
			return Digests{}, err
		}
		d, err := WriteTarball(ctx, dir, name, mtime, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return d, err
	})
}

// PublishTarball is Publish with the tarball already made: a copy of
// tarball, whose digests d CheckTarball established against dir. The copy
// is hashed as it is made and refused unless it has d's sha256 and size:
// the file may have been replaced since it was checked.
func PublishTarball(ctx context.Context, dir, out, name, tarball string, d Digests) (*Published, error) {
	return publish(ctx, dir, out, name, func(tgz string) (Digests, error) {
		sum, n, err := copyFile(tarball, tgz)
		if err == nil && (sum != d.SHA256 || n != d.Size) {
			err = fmt.Errorf("%s changed since it was checked against the tree (sha256 %s, %d bytes; checked %s, %d bytes)", tarball, sum, n, d.SHA256, d.Size)
		}
		return d, err
	})
}

func publish(ctx context.Context, dir, out, name string, tarball func(tgz string) (Digests, error)) (*Published, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("publish %s: %w", name, err)
	}
	unlock, err := lock(out)
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", name, err)
	}
	defer unlock()
	tmp, err := os.MkdirTemp(out, ".tmp-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)

	tgz := filepath.Join(tmp, name+".tar.gz")
	d, err := tarball(tgz)
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", name, err)
	}
	if err := os.WriteFile(tgz+".sha256", []byte(ShaLine(d.SHA256, name+".tar.gz")), 0o644); err != nil {
		return nil, fmt.Errorf("publish %s: %w", name, err)
	}
	treeTmp := filepath.Join(tmp, name)
	if err := os.Rename(dir, treeTmp); err != nil {
		if err := os.CopyFS(treeTmp, os.DirFS(dir)); err != nil {
			return nil, fmt.Errorf("publish %s: %w", name, err)
		}
	}
	p := &Published{Dir: filepath.Join(out, name), Tarball: filepath.Join(out, name+".tar.gz"), Digests: d}
	// Replace any previous artifact: move old entries aside, move new ones in,
	// then delete the old. A crash in between leaves complete files only.
	old := filepath.Join(tmp, "old")
	if err := os.Mkdir(old, 0o755); err != nil {
		return nil, err
	}
	moves := [][2]string{{treeTmp, p.Dir}, {tgz, p.Tarball}, {tgz + ".sha256", p.Tarball + ".sha256"}}
	for i, mv := range moves {
		if _, err := os.Lstat(mv[1]); err == nil {
			if err := os.Rename(mv[1], filepath.Join(old, fmt.Sprint(i))); err != nil {
				return nil, fmt.Errorf("publish %s: %w", name, err)
			}
		}
	}
	for _, mv := range moves {
		if err := os.Rename(mv[0], mv[1]); err != nil {
			return nil, fmt.Errorf("publish %s: %w", name, err)
		}
	}
	return p, nil
}

// lock takes an exclusive flock on the directory dir itself, waiting for
// another holder: publishing into dir is serialised without leaving a lock
// file behind in it.
func lock(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// copyFile copies the regular file src to the new file dst and returns the
// sha256 and size of what it wrote.
func copyFile(src, dst string) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err != nil {
		out.Close()
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, out.Close()
}
