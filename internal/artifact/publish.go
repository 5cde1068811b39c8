package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Published says where an artifact went.
type Published struct {
	Dir     string  // out/<name>
	Tarball string  // out/<name>.tar.gz
	Digests Digests // of the tarball
}

// Item is one finished artifact tree to publish.
type Item struct {
	Dir   string    // the validated tree; it is moved (or copied) into out
	Name  string    // out/<Name>, out/<Name>.tar.gz
	Mtime time.Time // of every tarball entry (the manifest's SOURCE_DATE_EPOCH)
	// Tarball, when set, is the tree's .tar.gz already made (the artifact
	// cache's), whose digests Digests ReadTarballStream established against Dir:
	// it is copied, hashed as it is copied, and written anew from Dir if
	// the copy is not those bytes (the file may have been replaced since).
	Tarball string
	Digests Digests
	// Rewritten, when set, hears that the cached Tarball was not usable
	// and is being written again.
	Rewritten func(err error)
}

// PublishAll puts every item into out, or none of them: a universal2 build
// publishes its two slices and their merge together, so a failure or an
// interrupt at any point leaves out as it was. Everything is written under
// a private temporary directory inside out first (the context is honoured
// until then); then, under a lock on out so two builds publishing there
// cannot interleave, the previous artifacts of those names are moved aside
// and the new ones moved in, by renames within out that are not
// interrupted, and rolled back if one of them fails. A crash (SIGKILL,
// power) between two renames leaves complete files only.
func PublishAll(ctx context.Context, out string, items []Item) (_ []*Published, err error) {
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.Name
	}
	fail := func(err error) error { return fmt.Errorf("publish %s: %w", strings.Join(names, ", "), err) }
	unlock, created, err := lock(out)
	if err != nil {
		return nil, fail(err)
	}
	defer func() {
		// A directory this call made goes again when nothing was
		// published, while the lock is still held: another publisher
		// waiting for it then finds the directory gone and makes its
		// own (lock), instead of writing into one removed under it.
		if err != nil && created {
			os.Remove(out) // only if nothing else put anything there
		}
		unlock()
	}()
	tmp, err := os.MkdirTemp(out, ".tmp-publish-")
	if err != nil {
		return nil, fail(err)
	}
	defer os.RemoveAll(tmp)

	var moves [][2]string
	pubs := make([]*Published, len(items))
	for i, it := range items {
		stage := filepath.Join(tmp, fmt.Sprint(i))
		if err := os.Mkdir(stage, 0o755); err != nil {
			return nil, fail(err)
		}
		tgz := filepath.Join(stage, it.Name+".tar.gz")
		d, err := it.tarball(ctx, tgz)
		if err != nil {
			return nil, fmt.Errorf("publish %s: %w", it.Name, err)
		}
		if err := os.WriteFile(tgz+".sha256", []byte(ShaLine(d.SHA256, it.Name+".tar.gz")), 0o644); err != nil {
			return nil, fmt.Errorf("publish %s: %w", it.Name, err)
		}
		tree := filepath.Join(stage, it.Name)
		if err := os.Rename(it.Dir, tree); err != nil {
			if err := os.CopyFS(tree, os.DirFS(it.Dir)); err != nil {
				return nil, fmt.Errorf("publish %s: %w", it.Name, err)
			}
		}
		p := &Published{Dir: filepath.Join(out, it.Name), Tarball: filepath.Join(out, it.Name+".tar.gz"), Digests: d}
		pubs[i] = p
		moves = append(moves, [2]string{tree, p.Dir}, [2]string{tgz, p.Tarball}, [2]string{tgz + ".sha256", p.Tarball + ".sha256"})
	}
	// The last moment to stop: from here on only renames inside out.
	if err := ctx.Err(); err != nil {
		return nil, fail(err)
	}
	if err := commit(moves, filepath.Join(tmp, "old")); err != nil {
		return nil, fail(err)
	}
	return pubs, nil
}

// commit moves each new entry (from, to) into place, first moving whatever
// is at to into old. If a rename fails, what was moved is moved back, so out
// holds either every new entry or its previous contents.
func commit(moves [][2]string, old string) error {
	if err := os.Mkdir(old, 0o755); err != nil {
		return err
	}
	type done struct{ from, to, aside string }
	var did []done
	rollback := func() {
		for i := len(did) - 1; i >= 0; i-- {
			d := did[i]
			if d.from != "" {
				os.Rename(d.to, d.from)
			}
			if d.aside != "" {
				os.Rename(d.aside, d.to)
			}
		}
	}
	for i, mv := range moves {
		d := done{to: mv[1]}
		if _, err := os.Lstat(mv[1]); err == nil {
			d.aside = filepath.Join(old, fmt.Sprint(i))
			if err := os.Rename(mv[1], d.aside); err != nil {
				rollback()
				return err
			}
		}
		did = append(did, d)
		if err := os.Rename(mv[0], mv[1]); err != nil {
			rollback()
			return err
		}
		did[len(did)-1].from = mv[0]
	}
	return nil
}

// tarball makes the item's tarball at tgz: a copy of the cached one when it
// is still the bytes that were checked, else written from the tree.
func (it Item) tarball(ctx context.Context, tgz string) (Digests, error) {
	if it.Tarball != "" {
		sum, n, err := copyFile(tgz, it.Tarball)
		if err == nil && (sum != it.Digests.SHA256 || n != it.Digests.Size) {
			err = fmt.Errorf("%s changed since it was checked against the tree (sha256 %s, %d bytes; checked %s, %d bytes)", it.Tarball, sum, n, it.Digests.SHA256, it.Digests.Size)
		}
		if err == nil {
			return it.Digests, nil
		}
		if ctx.Err() != nil {
			return Digests{}, ctx.Err()
		}
		if it.Rewritten != nil {
			it.Rewritten(err)
		}
		os.Remove(tgz)
	}
	return WriteTarballFile(ctx, it.Dir, it.Name, it.Mtime, tgz)
}

// lock makes dir if it is missing (created says so) and takes an
// exclusive flock on the directory itself, waiting for another holder:
// publishing into dir is serialised without leaving a lock file behind in
// it. A holder that made dir removes it again, under the lock, when it
// published nothing; a waiter that then gets the lock on the removed
// directory lets go and starts again on the path's new one.
func lock(dir string) (unlock func(), created bool, _ error) {
	for {
		_, serr := os.Stat(dir)
		made := errors.Is(serr, os.ErrNotExist)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, false, err
		}
		f, err := os.Open(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, false, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, false, fmt.Errorf("lock %s: %w", dir, err)
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(dir)
		unlock := func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return unlock, made, nil
		}
		unlock()
	}
}

// copyFile copies the regular file src to the new file dst and returns the
// sha256 and size of what it wrote.
func copyFile(dst, src string) (string, int64, error) {
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
