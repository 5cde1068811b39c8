package check

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// job is one file to inspect.
type job struct {
	path     string
	explicit bool   // the path the user named: it must be something check understands
	root     *root  // the artifact directory holding it, nil when none
	rel      string // its path inside root, slash-separated
	res      jobResult
}

// collect turns the path the user named into jobs. A link the user passed
// is followed; anything but a regular file or directory is refused without
// being opened (opening a FIFO for reading blocks until a writer comes).
func (c *checker) collect(p string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		if st, err = os.Stat(p); err != nil {
			return fmt.Errorf("check: %s: %w", p, err)
		}
	}
	switch {
	case st.IsDir():
		if c.realRoot, err = filepath.EvalSymlinks(p); err != nil {
			return fmt.Errorf("check: %w", err)
		}
		return c.walkDir(p, nil, "", true)
	case st.Mode().IsRegular():
		c.add(job{path: p, explicit: true})
		return nil
	}
	return fmt.Errorf("check: %s is a %s, not a file or directory: refusing to read it", p, ctxio.Describe(p, st.Mode().Type()))
}

// walkDir lists dir in name order. Links are never followed: one pointing
// inside the checked directory reaches a file the walk checks anyway (the
// link is listed with it), one pointing outside is noted, so nothing is
// checked twice, nothing outside is read, and a loop cannot form. FIFOs,
// sockets and devices are noted and skipped without being opened. r is
// the osslbuild artifact holding dir, rel dir's path inside it.
func (c *checker) walkDir(dir string, r *root, rel string, top bool) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if top {
			return fmt.Errorf("check: %w", err)
		}
		return fmt.Errorf("check %s: %w", c.o.Path, err)
	}
	if i := slices.IndexFunc(entries, func(e fs.DirEntry) bool { return e.Name() == artifact.ManifestName }); i >= 0 {
		if nr := c.dirManifest(dir, entries[i]); nr != nil {
			r, rel = nr, ""
		}
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		erel := path.Join(rel, e.Name())
		t := e.Type()
		switch {
		case t.IsDir():
			if err := c.walkDir(p, r, erel, false); err != nil {
				return err
			}
		case t.IsRegular():
			if r != nil && erel == artifact.ManifestName && r.dir == dir {
				continue // the manifest itself, read already
			}
			c.add(job{path: p, root: r, rel: erel})
		default:
			if r != nil {
				r.found[erel] = artifact.Entry{Type: ctxio.Describe(p, t)}
			}
			if t&fs.ModeSymlink != 0 {
				c.link(p)
			} else {
				c.note(fmt.Sprintf("%s: %s, not a regular file: skipped without opening it", p, ctxio.Describe(p, t)))
			}
		}
	}
	return nil
}

// link handles a symlink met inside the directory.
func (c *checker) link(p string) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		// The reason alone: the message names the link already.
		c.note(fmt.Sprintf("%s: %s that cannot be resolved (%v): skipped", p, ctxio.Describe(p, fs.ModeSymlink), cmp.Or(errors.Unwrap(err), err)))
		return
	}
	if target != c.realRoot && !strings.HasPrefix(target, c.realRoot+string(filepath.Separator)) {
		c.note(fmt.Sprintf("%s: %s, outside %s: not followed (pass the link itself to check what it points to)", p, ctxio.Describe(p, fs.ModeSymlink), c.o.Path))
		return
	}
	if st, err := os.Stat(target); err == nil && st.Mode().IsRegular() {
		c.links[target] = append(c.links[target], p)
	}
}

// attachLinks lists, with each binary found in the directory, the links
// inside the directory that point to it.
func (c *checker) attachLinks() {
	for i := range c.res.Binaries {
		b := &c.res.Binaries[i]
		rel, err := filepath.Rel(c.o.Path, b.Path)
		if b.Member == "" && err == nil {
			b.Links = append(b.Links, c.links[filepath.Join(c.realRoot, rel)]...)
		}
	}
}
