package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/patch"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/patches"
)

// The artifact cache keeps validated slice artifact trees, keyed by
// everything that determines their bytes, so a repeated build with unchanged
// inputs re-validates and republishes in seconds. An entry that no longer
// validates is deleted, never served. It wraps any builder.
type cachingBuilder struct {
	run     *run
	variant *Variant
	inner   builder
}

func (c *cachingBuilder) build(ctx context.Context, p *recipe.Plan) (*built, error) {
	r := c.run
	_, id, err := r.toolchain(ctx, p.Slice)
	if err != nil {
		return nil, err
	}
	key, err := cacheKey(p, c.variant, r.Revision, id)
	if err != nil {
		return nil, err
	}
	root, err := cacheDir(r.Fetch.CacheDir)
	if err != nil {
		return nil, err
	}
	entry := filepath.Join(root, "artifacts", key)
	if b, ok, err := c.lookup(ctx, entry, p); err != nil || ok {
		return b, err
	}
	b, err := c.inner.build(ctx, p)
	if err != nil {
		return nil, err
	}
	if err := store(ctx, entry, b); err != nil {
		r.logf("%s: warning: not cached: %v", b.manifest.Name, err)
	}
	return b, nil
}

// cacheKey digests the inputs of one slice build. The pinned source digest
// stands for the verified tarball: nothing else can get past verification.
func cacheKey(p *recipe.Plan, v *Variant, revision string, id toolchain.Identity) (string, error) {
	ps, err := patch.Select(patches.FS, p.Release.Version)
	if err != nil {
		return "", err
	}
	var pd []string
	for _, x := range ps {
		pd = append(pd, x.Name+"@"+x.SHA256)
	}
	in := struct {
		Format    int
		Osslbuild string
		Variant   string
		Recipe    string
		Target    string
		Options   []string
		Source    string
		Patches   []string
		Toolchain toolchain.Identity
	}{2, revision, v.Name, p.Recipe.SHA256, p.Slice.Name, p.Slice.Options, p.Release.SHA256, pd, id}
	b, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// cacheDir is the cache root: dir, else <user cache dir>/osslbuild, the
// one the fetch cache uses too.
func cacheDir(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate cache directory (set OSSLBUILD_CACHE): %w", err)
	}
	return filepath.Join(d, "osslbuild"), nil
}

// lookup returns a copy of the cached tree in entry, re-validated, in a
// fresh private directory; ok is false on a miss.
func (c *cachingBuilder) lookup(ctx context.Context, entry string, p *recipe.Plan) (_ *built, ok bool, _ error) {
	r := c.run
	name := artifactName(p, c.variant)
	tree := filepath.Join(entry, name)
	if _, err := os.Stat(filepath.Join(tree, artifact.ManifestName)); err != nil {
		return nil, false, nil
	}
	discard := func(why error) (*built, bool, error) {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		r.logf("%s: cached artifact %s is invalid, discarding it: %v", name, tree, why)
		os.RemoveAll(entry)
		return nil, false, nil
	}
	// Every file against the manifest (nothing missing, added, linked or
	// special), then the variant's own validation stage.
	m, err := artifact.Verify(ctx, tree)
	if err != nil {
		return discard(err)
	}
	// The variant's own validation and link check, over the cached tree. A
	// machine that cannot link (no lld, no stubs) says so; it does not make
	// the entry invalid.
	check := &job{run: r, plan: p, name: name, dir: tree}
	for _, stage := range c.variant.proofs() {
		err := stage.run(ctx, check)
		if errors.Is(err, toolchain.ErrSetup) {
			return nil, false, err
		}
		if err != nil {
			return discard(err)
		}
	}
	if err := os.MkdirAll(r.Work, 0o755); err != nil {
		return nil, false, err
	}
	work, err := os.MkdirTemp(r.Work, name+"-cached-")
	if err != nil {
		return nil, false, err
	}
	dir := filepath.Join(work, name)
	if err := os.CopyFS(dir, os.DirFS(tree)); err != nil {
		os.RemoveAll(work)
		return nil, false, fmt.Errorf("%s: copy from cache: %w", name, err)
	}
	// The link check just ran with this osslbuild's smoke program and
	// stubs; if the entry was stored by a build that linked another (an
	// edited tree keeps its revision), the served manifest says what a
	// build now would.
	if !reflect.DeepEqual(check.links, m.LinkChecks) {
		m.LinkChecks = check.links
		if err := artifact.WriteManifest(ctx, dir, m); err != nil {
			os.RemoveAll(work)
			return nil, false, err
		}
		r.logf("%s: link record refreshed: the entry was linked with another smoke program or stub", name)
	}
	r.logf("%s: cache hit (%s): re-validated and re-linked, no build needed", name, filepath.Base(entry)[:12])
	return &built{dir: dir, manifest: m, release: func() { os.RemoveAll(work) }}, true, nil
}

// store copies a validated artifact tree into the cache entry, atomically.
func store(ctx context.Context, entry string, b *built) error {
	if _, err := os.Stat(entry); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return err
	}
	key := filepath.Base(entry)
	tmp, err := os.MkdirTemp(filepath.Dir(entry), ".tmp-"+key[:12]+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.CopyFS(filepath.Join(tmp, filepath.Base(b.dir)), os.DirFS(b.dir)); err != nil {
		return fmt.Errorf("artifact cache: %w", err)
	}
	if err := os.Rename(tmp, entry); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(entry); serr == nil {
			return nil // another build stored the same entry first
		}
		return fmt.Errorf("artifact cache: %w", err)
	}
	return nil
}
