package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/patch"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/patches"
)

// The artifact cache keeps validated slice artifact trees, keyed by
// everything that determines their bytes, so a repeated build with unchanged
// inputs re-validates and republishes in seconds. An entry that no longer
// validates is deleted, never served.

// cacheKey digests the inputs of one slice build.
func cacheKey(p *recipe.Plan, v *source.Verified, id toolchain.Identity) (string, error) {
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
		Recipe    string
		Target    string
		Options   []string
		Source    string
		Patches   []string
		Toolchain toolchain.Identity
	}{1, Version(), p.Recipe.SHA256, p.Target.Name, p.Options, v.Tarball.SHA256, pd, id}
	b, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func (o *Options) cacheDir() (string, error) {
	if o.Fetch.CacheDir != "" {
		return filepath.Abs(o.Fetch.CacheDir)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "osslbuild"), nil
}

// cachedSlice returns a copy of the cached artifact tree for key, validated
// again, placed in a fresh private directory; ok is false on a miss.
func cachedSlice(o *Options, key string, p *recipe.Plan) (_ *builtSlice, ok bool, _ error) {
	root, err := o.cacheDir()
	if err != nil {
		return nil, false, err
	}
	entry := filepath.Join(root, "artifacts", key, p.Target.Artifact)
	if _, err := os.Stat(filepath.Join(entry, artifact.ManifestName)); err != nil {
		return nil, false, nil
	}
	discard := func(why error) (*builtSlice, bool, error) {
		o.logf("%s: cached artifact %s is invalid, discarding it: %v", p.Target.Artifact, entry, why)
		os.RemoveAll(filepath.Dir(entry))
		return nil, false, nil
	}
	m, err := artifact.ReadManifest(entry)
	if err != nil {
		return discard(err)
	}
	files, err := artifact.HashTree(entry)
	if err != nil {
		return discard(err)
	}
	delete(files, artifact.ManifestName)
	if len(files) != len(m.Files) {
		return discard(fmt.Errorf("%d files, manifest lists %d", len(files), len(m.Files)))
	}
	for f, sum := range m.Files {
		if files[f] != sum {
			return discard(fmt.Errorf("%s: sha256 %s, manifest says %s", f, files[f], sum))
		}
	}
	if _, err := validateSlice(entry, p); err != nil {
		return discard(err)
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, false, err
	}
	work, err := os.MkdirTemp(o.Work, p.Target.Artifact+"-cached-")
	if err != nil {
		return nil, false, err
	}
	dir := filepath.Join(work, p.Target.Artifact)
	if err := os.CopyFS(dir, os.DirFS(entry)); err != nil {
		os.RemoveAll(work)
		return nil, false, fmt.Errorf("%s: copy from cache: %w", p.Target.Artifact, err)
	}
	o.logf("%s: cache hit (%s): re-validated, no build needed", p.Target.Artifact, key[:12])
	return &builtSlice{dir: dir, manifest: m, cleanup: func() { os.RemoveAll(work) }}, true, nil
}

// storeSlice copies a validated artifact tree into the cache, atomically.
func storeSlice(o *Options, key string, s *builtSlice) error {
	root, err := o.cacheDir()
	if err != nil {
		return err
	}
	final := filepath.Join(root, "artifacts", key)
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".tmp-"+key[:12]+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(filepath.Join(tmp, filepath.Base(s.dir)), os.DirFS(s.dir)); err != nil {
		return fmt.Errorf("artifact cache: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(final); serr == nil {
			return nil // another build stored the same entry first
		}
		return fmt.Errorf("artifact cache: %w", err)
	}
	return nil
}
