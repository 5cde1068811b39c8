package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
)

// releaseSource is the verified tarball of OpenSSL version pinned by
// sha256, once per invocation: the recipe's release, or one it does not
// list, proven as a build of it would be. Not in the source cache, it is
// fetched: a run that cannot have it could not build the slice either.
func (r *run) releaseSource(ctx context.Context, version, sha256 string) (*source.Verified, error) {
	rel, listed, err := r.recipe.Resolve(version, sha256)
	if err != nil {
		return nil, err
	}
	if !listed {
		return r.fetched(ctx, rel, source.FetchUnlisted, fmt.Sprintf("OpenSSL %s is not in %s; pinned by the sha256 its slice records: ", rel.Version, r.recipe.Path))
	}
	return r.fetched(ctx, rel, source.Fetch, "")
}

// releaseOf is the release's own lists (configure.Release), once per
// invocation: the source cache's copy of lists configure.Pinned vouches
// for, or else read from the tarball of rel, streaming. The stream starts
// from the source cache's copy at once, hashed as it is read, without
// waiting for the source's verification to hash it and check its
// signature (what a run states of its source waits for that); a tarball
// the cache does not hold, or not the release, is left to that
// verification, which evicts it and fetches it.
func (r *run) releaseOf(ctx context.Context, rel recipe.Release) (*configure.Release, error) {
	return memo(r, r.lists, rel.SHA256, func() (*configure.Release, error) {
		f, err := fetch.New(r.Fetch)
		if err != nil {
			return nil, err
		}
		tarball := f.Path(source.FileFor(rel))
		kept, pin := tarball+".lists", configure.Pinned[rel.SHA256]
		if b, err := ctxio.ReadFile(ctx, kept, false, maxLists); err == nil && pin != "" && artifact.SHA256(b) == pin {
			return configure.DecodeRelease(rel.FileName(), b)
		}
		files, names, err := source.Files(ctx, rel, tarball, configure.ReleaseWants)
		if err != nil && ctx.Err() == nil {
			v, ferr := r.releaseSource(ctx, rel.Version, rel.SHA256)
			if ferr != nil {
				return nil, ferr
			}
			files, names, err = source.Files(ctx, rel, v.Tarball.Path, configure.ReleaseWants)
		}
		if err != nil {
			return nil, err
		}
		lists, err := configure.ReadRelease(rel.FileName(), files, names)
		if err != nil {
			return nil, err
		}
		if b := lists.Encode(); artifact.SHA256(b) == pin {
			ctxio.WriteFile(kept, b, 0o644) // for the next hit; a failure costs it the stream
		}
		return lists, nil
	})
}

// Bounds of what a hit reads whole: the kept lists (half a megabyte for
// 4.0.2) and a library of an artifact (a universal2 libcrypto.a is tens
// of megabytes).
const maxLists, maxLibrary = 64 << 20, 4 << 30

// holdToRelease holds the libraries of the artifact tree dir, whose slices
// are parts, to what the release's own files say they hold
// (validate.HoldToRelease): every archive member an object the release
// makes, once, and every symbol its .num files export for each slice's
// options defined. A build, a cache hit and a merge's slices all pass
// here: the one check nothing in a cache or a given artifact can vouch
// for. inspected holds what validation read of a library already (nil:
// nothing).
func (r *run) holdToRelease(ctx context.Context, dir string, release recipe.Release, parts []platform.Slice, inspected map[string]*inspect.File) error {
	rel, err := r.releaseOf(ctx, release)
	if err != nil {
		return err
	}
	var errs []error
	for _, lib := range parts[0].Libraries() {
		path := filepath.Join(dir, "lib", lib)
		data, err := ctxio.ReadFile(ctx, path, false, maxLibrary)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f := inspected[lib]
		if f == nil {
			if f, err = inspect.InspectBytes(path, data); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		name, _, _ := strings.Cut(lib, ".")
		rep := validate.HoldToRelease(f, data, func(arch string) *validate.Release {
			i := slices.IndexFunc(parts, func(s platform.Slice) bool { return validate.SameArch(s.Arch, arch) })
			if i < 0 {
				return nil
			}
			return &validate.Release{Source: rel.Name, Exports: rel.Exports(name, parts[i].Options), Object: rel.Object}
		})
		errs = append(errs, rep.Err())
	}
	return errors.Join(errs...)
}
