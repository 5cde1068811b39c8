package buildinfo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// Module is osslbuild's module path: a checkout is osslbuild's only if
// the go.mod at its top names it.
const Module = "github.com/osslbuild/osslbuild"

// Checkout is the revision of the osslbuild checkout holding dir, as
// osslbuild records it: HEAD's full commit id, and for a dirty checkout
// "+dirty." and 16 hex digits of a digest of what differs. Dirty is Go's
// own rule for vcs.modified: `git status --porcelain` lists something: a
// tracked file changed, staged or not, removed or retyped, or an untracked
// file git does not ignore, anywhere in the checkout (what .gitignore
// names, build/ and dist/ among them, never counts). The digest covers
// each such path and what it now holds (its bytes and executable bit, a
// link's target, or its absence), so two different modifications give
// two revisions, and the same one the same. git answers, not a reading
// of .git: packed refs and worktrees are git's to resolve.
func Checkout(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel", "HEAD^{commit}")
	if err != nil {
		return "", err
	}
	top, rev, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if mod, err := ctxio.ReadFile(ctx, filepath.Join(top, "go.mod"), true, 1<<20); err != nil || modulePath(mod) != Module {
		return "", fmt.Errorf("%s is not a checkout of %s (its go.mod: %v)", top, Module, err)
	}
	status, err := git(ctx, top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return "", err
	}
	if len(status) == 0 {
		return rev, nil
	}
	var paths []string
	for _, e := range strings.Split(strings.TrimSuffix(string(status), "\x00"), "\x00") {
		if len(e) > 3 {
			paths = append(paths, e[3:]) // "XY path"
		}
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range slices.Compact(paths) {
		now, err := holds(ctx, filepath.Join(top, filepath.FromSlash(p)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%s\x00", p, now)
	}
	return rev + "+dirty." + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// holds says what the path p of a dirty checkout holds now.
func holds(ctx context.Context, p string) (string, error) {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "removed", nil
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		return "symlink " + target, err
	case !fi.Mode().IsRegular():
		return ctxio.Describe(p, fi.Mode().Type()), nil
	}
	sum, err := ctxio.SHA256(ctx, p, false)
	return fmt.Sprintf("file %s %v", sum, fi.Mode()&0o111 != 0), err
}

// git runs git in dir, without taking the index lock a status would
// otherwise take to refresh it (a build must not contend with the
// user's own git).
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// modulePath is the module directive of a go.mod.
func modulePath(mod []byte) string {
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
