package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/universal"
	"github.com/osslbuild/osslbuild/internal/unpack"
)

// Universal2 builds the arm64 and x86_64 slices concurrently, publishes
// them, and merges the published slices exactly as Merge would, so a merge
// of the same slices elsewhere gives the same bytes.
func Universal2(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	r, err := recipe.Load(o.Recipe)
	if err != nil {
		return nil, err
	}
	tc, err := toolchain.New(o.Toolchain)
	if err != nil {
		return nil, err
	}
	var plans []*recipe.Plan
	for _, t := range []string{"arm64", "x86_64"} {
		p, err := r.Plan(o.Version, t)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	v, err := fetchRelease(ctx, &o, plans[0].Release)
	if err != nil {
		return nil, err
	}
	id, err := tc.Identity(ctx)
	if err != nil {
		return nil, err
	}
	// One job budget for both slices, a make jobserver: while one slice
	// unpacks, configures or archives (serial phases), or once it is done,
	// the other's make takes the free slots.
	jobs, err := build.NewJobs(o.Jobs)
	if err != nil {
		return nil, err
	}
	defer jobs.Close()
	so := o
	so.shared = jobs
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	built := make([]*builtSlice, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			built[i], errs[i] = obtainSlice(ctx, &so, p, v, tc, id)
			if errs[i] != nil {
				cancel() // stop the other slice: the pair cannot be merged
			}
		}()
	}
	wg.Wait()
	for _, b := range built {
		if b != nil {
			defer b.cleanup()
		}
	}
	if err := firstReal(errs); err != nil {
		return nil, err
	}
	var dirs []string
	for i, b := range built {
		pub, err := artifact.Publish(b.dir, o.Out, plans[i].Target.Artifact, time.Unix(b.manifest.SourceDateEpoch, 0))
		if err != nil {
			return nil, err
		}
		o.logf("%s: published %s (sha256 %s)", plans[i].Target.Artifact, pub.Tarball, pub.Digests.SHA256)
		o.summarise(b.manifest, pub)
		dirs = append(dirs, pub.Dir)
	}
	return mergeDirs(ctx, &o, tc, dirs[0], dirs[1])
}

// firstReal prefers a slice's own failure over the cancellation it caused
// in the other slice.
func firstReal(errs []error) error {
	var canceled error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if errors.Is(err, context.Canceled) {
			canceled = err
			continue
		}
		return err
	}
	return canceled
}

// Merge is build:merge: two slice artifacts built elsewhere (each a
// directory or a .tar.gz) into dist/openssl-macos-universal2.
func Merge(ctx context.Context, o Options, a, b string) (*Result, error) {
	o.defaults()
	tc, err := toolchain.New(o.Toolchain)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(o.Work, "merge-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	da, err := artifactDir(ctx, a, filepath.Join(work, "a"))
	if err != nil {
		return nil, err
	}
	db, err := artifactDir(ctx, b, filepath.Join(work, "b"))
	if err != nil {
		return nil, err
	}
	return mergeDirs(ctx, &o, tc, da, db)
}

func mergeDirs(ctx context.Context, o *Options, tc toolchain.Toolchain, a, b string) (*Result, error) {
	sa, err := universal.Load(a)
	if err != nil {
		return nil, err
	}
	sb, err := universal.Load(b)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(o.Work, universal.Name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	dst := filepath.Join(work, universal.Name)
	m, err := universal.Merge(ctx, tc, sa, sb, dst)
	if err != nil {
		o.annotate(universal.Name, err)
		return nil, err
	}
	if len(m.HeaderDispatch) > 0 {
		o.logf("%s: headers that differ between the slices, merged with a per-architecture dispatch: %s", universal.Name, strings.Join(m.HeaderDispatch, ", "))
	}
	for _, l := range m.CompilerLines {
		o.logf("%s: validated %s %s: %s", universal.Name, l.Library, l.Arch, l.Line)
	}
	pub, err := artifact.Publish(dst, o.Out, universal.Name, time.Unix(m.SourceDateEpoch, 0))
	if err != nil {
		return nil, err
	}
	o.logf("%s: published %s and %s (sha256 %s)", universal.Name, pub.Dir, pub.Tarball, pub.Digests.SHA256)
	o.summarise(m, pub)
	return &Result{Published: pub, Manifest: m}, nil
}

// artifactDir returns an artifact directory for path: path itself when it is
// a directory, else the .tar.gz unpacked under work after checking the
// .sha256 beside it, when there is one.
func artifactDir(ctx context.Context, path, work string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("artifact %s: %w", path, err)
	}
	if fi.IsDir() {
		return path, nil
	}
	if want, err := os.ReadFile(path + ".sha256"); err == nil {
		fields := strings.Fields(string(want))
		got, err := artifact.FileSHA256(path)
		if err != nil {
			return "", err
		}
		if len(fields) == 0 || fields[0] != got {
			return "", fmt.Errorf("artifact %s: sha256 %s does not match %s.sha256 (%s)", path, got, filepath.Base(path), strings.TrimSpace(string(want)))
		}
	}
	res, err := unpack.Extract(ctx, path, work, unpack.Options{MaxBytes: 1 << 30})
	if err != nil {
		return "", fmt.Errorf("artifact %s: %w", path, err)
	}
	_ = res
	return work, nil
}
