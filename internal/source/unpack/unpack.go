// Package unpack extracts a release .tar.gz into a directory, safely.
//
// The archive is untrusted input even after its signature checked out (a
// verified tarball can still be hostile, and fuzzers and tests feed this
// package directly), so extraction:
//
//   - writes into a fresh temporary directory beside dest and renames it to
//     dest only when every entry succeeded: dest never holds a half tree, and
//     dest must not exist beforehand;
//   - strips the archive's single top-level directory (openssl-X.Y.Z/) and
//     refuses any member outside it, any absolute name and any ".." component;
//   - creates symlinks last, after checking that each one, resolved through
//     every other symlink in the archive, stays inside the tree; since no
//     symlink exists on disk while files are written, no write can be
//     redirected through one, and no member may sit below a symlink;
//   - allows hard links only to regular files already extracted;
//   - refuses devices, FIFOs and other special types (archive/tar expands
//     sparse files, whose full size counts against the limit);
//   - caps total file bytes and entry count (Options), pax global headers
//     included: archive/tar reads up to 1 MiB for each, so a run of them
//     would otherwise be unbounded work that extracts nothing;
//   - keeps only the executable bit of modes (0755 or 0644; directories,
//     the root included, 0755) and restores modification times, the root's
//     too, so make sees the shipped generated files as up to date.
//
// Extract reports the newest modification time in the archive, which the
// build uses as SOURCE_DATE_EPOCH.
package unpack

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// Defaults for Options; an OpenSSL 4.0 tarball holds about 140 MB in 6,400
// entries.
const (
	DefaultMaxBytes   = 512 << 20
	DefaultMaxEntries = 100_000
)

// maxLinkDepth bounds symlink expansion while checking targets (as Linux's
// 40 bounds path lookups), so a loop is refused rather than followed forever.
const maxLinkDepth = 40

// Sentinel errors for errors.Is.
var (
	ErrExists      = errors.New("destination already exists")
	ErrUnsafePath  = errors.New("unsafe path")
	ErrLayout      = errors.New("not a single top-level directory")
	ErrUnsupported = errors.New("unsupported entry type")
	ErrTooLarge    = inspect.ErrLimit // the archive breaks a bound of Options.Limits
	ErrDuplicate   = errors.New("duplicate entry")
)

// Options bound what an archive may hold.
type Options struct {
	// Limits are the archive walker's, shared with every other reader of a
	// .tar.gz: MaxTotalBytes bounds the whole decompressed stream (headers,
	// pax records and skipped bytes included; default DefaultMaxBytes),
	// MaxMembers every entry, pax global headers included (default
	// DefaultMaxEntries).
	Limits inspect.Limits
	TopDir string // if set, the required name of the top-level directory
}

// Result describes a completed extraction.
type Result struct {
	TopDir string    // name of the stripped top-level directory
	Newest time.Time // newest modification time of any member (UTC)
	Bytes  int64     // bytes of regular files written
}

// Extract unpacks the .tar.gz file archive into dest (see the package doc).
func Extract(ctx context.Context, archive, dest string, opts Options) (_ Result, err error) {
	f, _, err := ctxio.OpenRegular(archive, true)
	if err != nil {
		return Result{}, fmt.Errorf("unpack: %w", err)
	}
	defer f.Close()
	name := filepath.Base(archive)
	if opts.Limits.MaxTotalBytes <= 0 {
		opts.Limits.MaxTotalBytes = DefaultMaxBytes
	}
	if opts.Limits.MaxMembers <= 0 {
		opts.Limits.MaxMembers = DefaultMaxEntries
	}
	dest = filepath.Clean(dest)
	if _, err := os.Lstat(dest); err == nil {
		return Result{}, fmt.Errorf("unpack %s: %s: %w", name, dest, ErrExists)
	} else if !errors.Is(err, os.ErrNotExist) {
		return Result{}, fmt.Errorf("unpack %s: %w", name, err)
	}
	// Beside dest, so the final rename stays on one filesystem.
	tmp, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".unpack-")
	if err != nil {
		return Result{}, fmt.Errorf("unpack %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()

	x := &extractor{
		ctx:   ctx,
		name:  name,
		root:  tmp,
		opts:  opts,
		links: map[string]string{},
		files: map[string]bool{},
		dirs:  map[string]time.Time{},
	}
	if err := x.run(f); err != nil {
		return Result{}, err
	}
	// MkdirTemp made the root 0700; the tree's root is the archive's
	// top-level directory and gets a directory's mode like the others.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Result{}, fmt.Errorf("unpack %s: %w", name, err)
	}
	if _, err := os.Lstat(dest); err == nil {
		return Result{}, fmt.Errorf("unpack %s: %s: %w", name, dest, ErrExists)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return Result{}, fmt.Errorf("unpack %s: %w", name, err)
	}
	return x.res, nil
}

type extractor struct {
	ctx   context.Context
	name  string
	root  string
	opts  Options
	res   Result
	links map[string]string    // deferred symlinks: tree path -> target
	files map[string]bool      // regular files written (hard-link targets)
	dirs  map[string]time.Time // directory members and their mtimes ("." is the root)
}

func (x *extractor) fail(member string, err error) error {
	return &memberError{fmt.Errorf("unpack %s: member %q: %w", x.name, member, err)}
}

// memberError is a failure already located at its member.
type memberError struct{ err error }

func (e *memberError) Error() string { return e.err.Error() }
func (e *memberError) Unwrap() error { return e.err }

func (x *extractor) run(archive io.Reader) error {
	entries := 0
	err := inspect.WalkTarGzEntries(x.ctx, x.name, archive, x.opts.Limits, func(m inspect.Member, r io.Reader) error {
		entries++
		hdr := m.Tar
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			// git archive's pax_global_header: metadata, nothing to
			// extract; the walker counted it as an entry and its bytes.
			return nil
		}
		if err := x.entry(r, hdr); err != nil {
			return x.fail(hdr.Name, err)
		}
		return nil
	})
	if _, ok := errors.AsType[*memberError](err); ok {
		return err
	}
	if err != nil {
		return fmt.Errorf("unpack %s: after %d members: %w", x.name, entries, err)
	}
	if x.res.TopDir == "" {
		return fmt.Errorf("unpack %s: %w: archive is empty", x.name, ErrLayout)
	}
	return x.finish()
}

// SplitName splits an archive member's name into its top-level directory
// and the path below it ("" for the directory itself), refusing anything
// that could leave the tree (ErrUnsafePath). Other readers of release
// tarballs use it so that they see the names Extract would write.
func SplitName(name string) (top, rel string, err error) {
	if name == "" {
		return "", "", fmt.Errorf("%w: empty name", ErrUnsafePath)
	}
	if strings.HasPrefix(name, "/") {
		return "", "", fmt.Errorf("%w: absolute path", ErrUnsafePath)
	}
	var parts []string
	for _, p := range strings.Split(name, "/") {
		switch p {
		case "", ".":
			continue
		case "..":
			return "", "", fmt.Errorf("%w: %q component", ErrUnsafePath, "..")
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "", "", fmt.Errorf("%w: names no file", ErrUnsafePath)
	}
	return parts[0], path.Join(parts[1:]...), nil
}

// underLink reports a recorded symlink that is rel or a parent of rel.
func (x *extractor) underLink(rel string) (string, bool) {
	for p := rel; p != "." && p != ""; p = path.Dir(p) {
		if _, ok := x.links[p]; ok {
			return p, true
		}
	}
	return "", false
}

func (x *extractor) entry(tr io.Reader, hdr *tar.Header) error {
	if hdr.Typeflag != tar.TypeReg && hdr.Typeflag != tar.TypeRegA && hdr.Size != 0 {
		// Only regular files carry data; anything else with a size would be
		// decompressed and skipped for nothing.
		return fmt.Errorf("%w: %d bytes of data on a member of type %q", ErrUnsupported, hdr.Size, hdr.Typeflag)
	}
	top, rel, err := SplitName(hdr.Name)
	if err != nil {
		return err
	}
	switch {
	case x.res.TopDir == "":
		if x.opts.TopDir != "" && top != x.opts.TopDir {
			return fmt.Errorf("%w: top-level directory %q, want %q", ErrLayout, top, x.opts.TopDir)
		}
		x.res.TopDir = top
	case top != x.res.TopDir:
		return fmt.Errorf("%w: outside %s/", ErrLayout, x.res.TopDir)
	}
	if mt := hdr.ModTime.UTC(); mt.After(x.res.Newest) {
		x.res.Newest = mt
	}
	if rel == "" {
		// The top-level directory itself.
		if hdr.Typeflag != tar.TypeDir {
			return fmt.Errorf("%w: top-level member is not a directory", ErrLayout)
		}
		x.dirs["."] = hdr.ModTime
		return nil
	}
	if l, ok := x.underLink(rel); ok {
		if l == rel {
			return fmt.Errorf("%w: %s is already a symlink", ErrDuplicate, rel)
		}
		return fmt.Errorf("%w: below symlink %s", ErrUnsafePath, l)
	}
	dst := filepath.Join(x.root, filepath.FromSlash(rel))
	// A directory member makes itself, any other member its directory. A
	// repeated directory member is harmless; MkdirAll fails if a file
	// already holds the name.
	dir := filepath.Dir(dst)
	if hdr.Typeflag == tar.TypeDir {
		dir = dst
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	switch hdr.Typeflag {
	case tar.TypeDir:
		x.dirs[rel] = hdr.ModTime
	case tar.TypeReg, tar.TypeRegA:
		if hdr.Size < 0 || x.res.Bytes+hdr.Size > x.opts.Limits.MaxTotalBytes {
			return fmt.Errorf("%w: %d bytes would pass the limit of %d", ErrTooLarge, x.res.Bytes+hdr.Size, x.opts.Limits.MaxTotalBytes)
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%w: %s", ErrDuplicate, rel)
			}
			return err
		}
		// Only the executable bit carries meaning; the rest is
		// normalised so umask and archive owner do not leak in.
		mode := os.FileMode(0o644)
		if hdr.Mode&0o111 != 0 {
			mode = 0o755
		}
		n, err := io.CopyN(f, tr, hdr.Size)
		x.res.Bytes += n
		if err := errors.Join(err, f.Chmod(mode), f.Close()); err != nil {
			return err
		}
		if err := os.Chtimes(dst, hdr.ModTime, hdr.ModTime); err != nil {
			return err
		}
		x.files[rel] = true
	case tar.TypeSymlink:
		if hdr.Linkname == "" || strings.HasPrefix(hdr.Linkname, "/") {
			return fmt.Errorf("%w: symlink to %q", ErrUnsafePath, hdr.Linkname)
		}
		if _, err := os.Lstat(dst); err == nil {
			return fmt.Errorf("%w: %s", ErrDuplicate, rel)
		}
		// Checked and created in finish, once every link is known.
		x.links[rel] = hdr.Linkname
	case tar.TypeLink:
		ltop, lrel, err := SplitName(hdr.Linkname)
		if err != nil {
			return fmt.Errorf("hard link target %q: %w", hdr.Linkname, err)
		}
		if ltop != x.res.TopDir || !x.files[lrel] {
			return fmt.Errorf("%w: hard link to %q, which is not a regular file extracted before it", ErrUnsafePath, hdr.Linkname)
		}
		if err := os.Link(filepath.Join(x.root, filepath.FromSlash(lrel)), dst); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%w: %s", ErrDuplicate, rel)
			}
			return err
		}
	default:
		return fmt.Errorf("%w: type %q", ErrUnsupported, hdr.Typeflag)
	}
	return nil
}

// finish checks and creates the deferred symlinks, then restores directory
// times (creating entries changed them).
func (x *extractor) finish() error {
	names := slices.Sorted(maps.Keys(x.links))
	for _, l := range names {
		if err := x.checkLink(l); err != nil {
			return x.fail(x.res.TopDir+"/"+l, err)
		}
	}
	for _, l := range names {
		if err := os.Symlink(x.links[l], filepath.Join(x.root, filepath.FromSlash(l))); err != nil {
			return x.fail(x.res.TopDir+"/"+l, err)
		}
	}
	// Check again on disk, where the filesystem decides which names are the
	// same (macOS folds case and Unicode normalisation, so "X/sub" may be the
	// symlink "x/SUB" that the model above did not follow). Nothing is
	// written after this point, and a failure removes the tree without
	// following any link.
	for _, l := range names {
		if err := resolveOnDisk(x.root, l); err != nil {
			return x.fail(x.res.TopDir+"/"+l, err)
		}
	}
	for d, mt := range x.dirs {
		if err := os.Chtimes(filepath.Join(x.root, filepath.FromSlash(d)), mt, mt); err != nil {
			return x.fail(x.res.TopDir+"/"+d, err)
		}
	}
	return nil
}

// checkLink resolves symlink l through every archived symlink, refusing it
// if any step climbs above the tree's root. Paths that do not exist are
// fine: nothing else will be created in the tree.
func (x *extractor) checkLink(l string) error {
	var stack []string // resolved components so far, from the root
	if d := path.Dir(l); d != "." {
		stack = strings.Split(d, "/")
	}
	isLink := func(stack []string) bool {
		_, ok := x.links[strings.Join(stack, "/")]
		return ok
	}
	target := func(stack []string) (string, error) {
		t := x.links[strings.Join(stack, "/")]
		if strings.HasPrefix(t, "/") {
			return "", fmt.Errorf("%w: symlink to %q goes through absolute symlink", ErrUnsafePath, x.links[l])
		}
		return t, nil
	}
	switch err := walkLinks(stack, strings.Split(x.links[l], "/"), isLink, target); err {
	case errLeaves:
		return fmt.Errorf("%w: symlink to %q leaves the tree", ErrUnsafePath, x.links[l])
	case errTooDeep:
		return fmt.Errorf("%w: symlink to %q: too many levels of symlinks", ErrUnsafePath, x.links[l])
	default:
		return err
	}
}

// resolveOnDisk follows the path rel below root through the symlinks that
// exist on disk, tolerating a missing tail, and fails if it climbs out.
func resolveOnDisk(root, rel string) error {
	onDisk := func(stack []string) string { return filepath.Join(append([]string{root}, stack...)...) }
	isLink := func(stack []string) bool {
		fi, err := os.Lstat(onDisk(stack))
		return err == nil && fi.Mode()&os.ModeSymlink != 0
	}
	target := func(stack []string) (string, error) {
		t, err := os.Readlink(onDisk(stack))
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(t) {
			return "", fmt.Errorf("%w: symlink %s is absolute", ErrUnsafePath, strings.Join(stack, "/"))
		}
		return t, nil
	}
	switch err := walkLinks(nil, strings.Split(rel, "/"), isLink, target); err {
	case errLeaves:
		return fmt.Errorf("%w: symlink resolves outside the tree", ErrUnsafePath)
	case errTooDeep:
		return fmt.Errorf("%w: too many levels of symlinks", ErrUnsafePath)
	default:
		return err
	}
}

// How walkLinks fails on its own; its callers say it in their words.
var (
	errLeaves  = errors.New("leaves the tree")
	errTooDeep = errors.New("too many levels of symlinks")
)

// walkLinks resolves the slash path todo from the directory stack (its
// components from the root), one component at a time. When the path so far
// isLink, its target (relative to the link's directory) takes its place:
// errTooDeep after maxLinkDepth of those, errLeaves if ".." climbs above
// the root. target's errors are returned as they are.
func walkLinks(stack, todo []string, isLink func([]string) bool, target func([]string) (string, error)) error {
	for expansions := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return errLeaves
			}
			stack = stack[:len(stack)-1]
			continue
		}
		stack = append(stack, c)
		if !isLink(stack) {
			continue
		}
		if expansions++; expansions > maxLinkDepth {
			return errTooDeep
		}
		t, err := target(stack)
		if err != nil {
			return err
		}
		// Replace the link by its target, relative to the link's directory.
		stack = stack[:len(stack)-1]
		todo = append(strings.Split(t, "/"), todo...)
	}
	return nil
}
