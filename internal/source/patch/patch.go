// Package patch selects and applies the project's source patches to an
// unpacked OpenSSL tree, in pure Go (go-gitdiff; no patch binary).
//
// # Convention
//
// A patch set is the files named *.patch at the top of a directory, given as
// an fs.FS so the project can embed patches/. Each is a git-style diff
// (git format-patch or git diff output, paths with a/ and b/ prefixes, i.e.
// -p1 from the top of the tree) whose leading comment, before the first
// "diff --git" line, holds exactly one line
//
//	Applies-To: >= 3.0.0, < 3.2.0 || >= 3.5.0, < 3.6.0
//
// Each alternative between "||" is a hashicorp/go-version constraint (comma
// means "and", constraint.Constraint); the patch applies to a release matching
// any alternative. Letters are refused in the header, and selecting
// patches for a letter release (1.1.1w) is an error naming the patch:
// go-version would order it as a pre-release. A
// patch without that line, with two of them, or with an unparsable one is an
// error naming the patch, whether or not it would have been selected, so a
// typo cannot silently drop a patch. The header is case-insensitive in its
// key only.
//
// Selected patches are applied in lexical order of their names (prefix them
// 0001-, 0002-, ...). Hunks must match exactly at their stated lines: there is
// no offset or fuzz, so a patch that no longer fits a release fails loudly
// instead of landing somewhere else. Patches may modify, create and delete
// text or binary files; renames and copies are refused (say it with a delete
// and a create). Every patch is applied in memory first; files are written
// only when the whole set applied, each through a temporary file renamed
// over the original, and all access goes through an os.Root so no path in a
// patch can reach outside the tree.
package patch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/internal/osslver/constraint"
)

// Header is the leading-comment key that states which releases a patch is for.
const Header = "Applies-To"

// Sentinel errors for errors.Is.
var (
	ErrHeader       = errors.New("missing or invalid " + Header + " header")
	ErrDoesNotApply = errors.New("patch does not apply")
	ErrUnsupported  = errors.New("unsupported patch")
)

// Patch describes one patch of a set.
type Patch struct {
	Name      string   // file name in the patch set, e.g. 0001-fix-foo.patch
	SHA256    string   // hex sha256 of the patch file, for the build manifest
	AppliesTo string   // the Applies-To value as written
	Files     []string // paths (relative to the tree) the patch touches

	when  constraint.Constraint
	diffs []*gitdiff.File
}

// Select reads and validates every *.patch at the top of fsys, in lexical
// order, and returns those that apply to release ver, in order.
func Select(fsys fs.FS, ver string) ([]Patch, error) {
	v, err := osslver.Parse(ver)
	if err != nil {
		return nil, fmt.Errorf("patches: release version %q: %w", ver, err)
	}
	names, err := fs.Glob(fsys, "*.patch")
	if err != nil {
		return nil, fmt.Errorf("patches: %w", err)
	}
	sort.Strings(names) // Glob sorts today; the order is the contract, so be explicit.
	var all []Patch
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("patch %s: %w", name, err)
		}
		p, err := parse(name, data)
		if err != nil {
			return nil, err
		}
		all = append(all, p)
	}
	var out []Patch
	for _, p := range all {
		// An error when the header cannot order v (constraint.ErrUnordered).
		ok, err := p.when.Check(v)
		if err != nil {
			return nil, fmt.Errorf("patch %s: %s: %w", p.Name, Header, err)
		}
		if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// Apply applies the patches of fsys selected for release ver to the tree at
// dir and returns them, in the order applied. On error the tree is
// unchanged, unless writing the results itself failed part-way.
func Apply(ctx context.Context, fsys fs.FS, ver, dir string) ([]Patch, error) {
	sel, err := Select(fsys, ver)
	if err != nil {
		return nil, err
	}
	if len(sel) == 0 {
		return nil, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("patches: %w", err)
	}
	defer root.Close()

	t := &tree{root: root, files: map[string]*content{}}
	for _, p := range sel {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("patches: %w", err)
		}
		for _, d := range p.diffs {
			if err := t.apply(d); err != nil {
				return nil, fmt.Errorf("patch %s: %w", p.Name, err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("patches: %w", err)
	}
	if err := t.write(); err != nil {
		return nil, fmt.Errorf("patches %s: %w", dir, err)
	}
	return sel, nil
}

func parse(name string, data []byte) (Patch, error) {
	sum := sha256.Sum256(data)
	p := Patch{Name: name, SHA256: hex.EncodeToString(sum[:])}
	files, preamble, err := gitdiff.Parse(bytes.NewReader(data))
	if err != nil {
		return p, fmt.Errorf("patch %s: %w", name, err)
	}
	if len(files) == 0 {
		return p, fmt.Errorf("patch %s: %w: no file changes", name, ErrUnsupported)
	}
	if p.AppliesTo, p.when, err = appliesTo(preamble); err != nil {
		return p, fmt.Errorf("patch %s: %w", name, err)
	}
	// git diffs name files without their a/ b/ prefixes already; a
	// traditional unified diff (diff -u, diff -ruN of two trees) names them
	// verbatim, so strip the first component as patch -p1 would.
	if !bytes.Contains(data, []byte("diff --git ")) {
		for _, f := range files {
			f.OldName, f.NewName = stripOne(f.OldName), stripOne(f.NewName)
		}
	}
	for _, f := range files {
		if f.IsRename || f.IsCopy {
			return p, fmt.Errorf("patch %s: %s: %w: renames and copies", name, f.OldName, ErrUnsupported)
		}
		n := f.NewName
		if f.IsDelete {
			n = f.OldName
		}
		if !f.IsNew && !f.IsDelete && f.OldName != f.NewName {
			return p, fmt.Errorf("patch %s: %w: old name %q differs from new name %q", name, ErrUnsupported, f.OldName, f.NewName)
		}
		if !fs.ValidPath(n) || n == "." {
			return p, fmt.Errorf("patch %s: %w: path %q", name, ErrUnsupported, n)
		}
		p.Files = append(p.Files, n)
	}
	p.diffs = files
	return p, nil
}

// stripOne drops a path's first component ("b/crypto/x.c" -> "crypto/x.c").
func stripOne(name string) string {
	_, rest, ok := strings.Cut(name, "/")
	if !ok {
		return name // a bare name has nothing to strip; fs.ValidPath decides
	}
	return rest
}

// appliesTo finds the single Applies-To line of a preamble and parses it.
func appliesTo(preamble string) (string, constraint.Constraint, error) {
	var raw []string
	sc := bufio.NewScanner(strings.NewReader(preamble))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), Header) {
			raw = append(raw, strings.TrimSpace(v))
		}
	}
	switch len(raw) {
	case 0:
		return "", constraint.Constraint{}, fmt.Errorf("%w: no %q line before the first diff", ErrHeader, Header+":")
	case 1:
	default:
		return "", constraint.Constraint{}, fmt.Errorf("%w: %d %s lines, want one", ErrHeader, len(raw), Header)
	}
	c, err := constraint.Parse(raw[0])
	if err != nil {
		return "", constraint.Constraint{}, fmt.Errorf("%w: %w", ErrHeader, err)
	}
	return raw[0], c, nil
}

// content is a file's state in the in-memory overlay.
type content struct {
	data    []byte
	mode    fs.FileMode // permission bits to write with
	deleted bool
	changed bool
}

// tree is the overlay of patched files over the tree on disk.
type tree struct {
	root  *os.Root
	files map[string]*content
}

// get returns the current content of name: from the overlay, else disk; nil
// when it does not exist.
func (t *tree) get(name string) (*content, error) {
	if c, ok := t.files[name]; ok {
		if c.deleted {
			return nil, nil
		}
		return c, nil
	}
	fi, err := t.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		// Patching through a symlink would change its target, possibly a
		// file shared with another path.
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrUnsupported, name)
	}
	data, err := t.root.ReadFile(name)
	if err != nil {
		return nil, err
	}
	c := &content{data: data, mode: fi.Mode().Perm()}
	t.files[name] = c
	return c, nil
}

func (t *tree) apply(d *gitdiff.File) error {
	name := d.NewName
	if d.IsDelete {
		name = d.OldName
	}
	cur, err := t.get(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var src []byte
	mode := fs.FileMode(0o644)
	switch {
	case d.IsNew && cur != nil:
		return fmt.Errorf("%s: %w: creates a file that already exists", name, ErrDoesNotApply)
	case !d.IsNew && cur == nil:
		return fmt.Errorf("%s: %w: file does not exist", name, ErrDoesNotApply)
	case cur != nil:
		src, mode = cur.data, cur.mode
	}
	var out bytes.Buffer
	if err := applyFile(&out, src, d); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if d.IsDelete {
		t.files[name] = &content{deleted: true, changed: true}
		return nil
	}
	if d.NewMode != 0 {
		// Like unpack, keep only whether the file is executable.
		mode = 0o644
		if d.NewMode&0o111 != 0 {
			mode = 0o755
		}
	}
	t.files[name] = &content{data: out.Bytes(), mode: mode, changed: true}
	return nil
}

// applyFile is gitdiff.Apply for text, hunk by hunk, so that a failure
// names the hunk by its header.
func applyFile(dst io.Writer, src []byte, d *gitdiff.File) error {
	if d.IsBinary || len(d.TextFragments) == 0 {
		if err := gitdiff.Apply(dst, bytes.NewReader(src), d); err != nil {
			return fmt.Errorf("%w: %w", ErrDoesNotApply, err)
		}
		return nil
	}
	// Same order as gitdiff.Apply: the applier walks the source forwards.
	frags := slices.Clone(d.TextFragments)
	sort.SliceStable(frags, func(i, j int) bool { return frags[i].OldPosition < frags[j].OldPosition })
	a := gitdiff.NewTextApplier(dst, bytes.NewReader(src))
	for _, f := range frags {
		if err := a.ApplyFragment(f); err != nil {
			hunk := 1 + slices.Index(d.TextFragments, f)
			where := ""
			if ae, ok := errors.AsType[*gitdiff.ApplyError](err); ok && ae.Line > 0 {
				where = fmt.Sprintf(" at line %d", ae.Line)
			}
			return fmt.Errorf("%w: hunk %d %s%s: %w", ErrDoesNotApply, hunk, strings.TrimSpace(f.Header()), where, err)
		}
	}
	if err := a.Close(); err != nil {
		return fmt.Errorf("%w: %w", ErrDoesNotApply, err)
	}
	return nil
}

// write puts every changed file in place, each atomically.
func (t *tree) write() error {
	for _, n := range slices.Sorted(maps.Keys(t.files)) {
		c := t.files[n]
		if !c.changed {
			continue
		}
		if c.deleted {
			if err := t.root.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if dir := path.Dir(n); dir != "." {
			if err := t.root.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		if err := writeAtomic(t.root, n, c.data, c.mode); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// writeAtomic writes data to a temporary file beside name and renames it
// over name, so a crash leaves either the old or the new file.
func writeAtomic(root *os.Root, name string, data []byte, mode fs.FileMode) error {
	tmp := path.Join(path.Dir(name), "."+path.Base(name)+".patching")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Chmod(mode), f.Close()); err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}
