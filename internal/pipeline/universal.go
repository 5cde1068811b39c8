package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/universal"
	"github.com/osslbuild/osslbuild/internal/unpack"
)

// Universal2 builds the recipe's two macOS slices side by side under one
// make job budget, publishes them, and merges the published slices exactly
// as Merge would, so a merge of the same slices elsewhere gives the same
// bytes.
func Universal2(ctx context.Context, s Settings, rt Runtime) (*Result, error) {
	r, err := newRun(s, rt)
	if err != nil {
		return nil, err
	}
	targets, err := r.recipe.Universal2()
	if err != nil {
		return nil, err
	}
	var plans []*recipe.Plan
	for _, t := range targets {
		p, err := r.plan(t)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	jobs, err := build.NewJobs(r.Jobs)
	if err != nil {
		return nil, err
	}
	defer jobs.Close()
	b := budgeted{inner: r.builder(Osslbuild), jobs: jobs}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make([]*built, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done[i], errs[i] = b.build(ctx, p)
			if errs[i] != nil {
				cancel() // stop the other slice: the pair cannot be merged
			}
		}()
	}
	wg.Wait()
	for _, d := range done {
		if d != nil {
			defer d.release()
		}
	}
	if err := firstReal(errs); err != nil {
		return nil, err
	}
	var dirs []string
	for _, d := range done {
		pub, err := r.publish(ctx, d)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, pub.Dir)
	}
	tc, _, err := r.toolchain(ctx, plans[0].Target)
	if err != nil {
		return nil, err
	}
	return r.merge(ctx, tc, dirs[0], dirs[1])
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
func Merge(ctx context.Context, s Settings, rt Runtime, a, b string) (*Result, error) {
	r, err := newRun(s, rt)
	if err != nil {
		return nil, err
	}
	tc, err := toolchain.New(r.Toolchain)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.Work, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(r.Work, "merge-")
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
	return r.merge(ctx, tc, da, db)
}

func (r *run) merge(ctx context.Context, tc toolchain.Toolchain, a, b string) (*Result, error) {
	sa, err := universal.Load(a)
	if err != nil {
		return nil, err
	}
	sb, err := universal.Load(b)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.Work, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(r.Work, universal.Name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	dst := filepath.Join(work, universal.Name)
	m, err := universal.Merge(ctx, tc, sa, sb, dst)
	if err != nil {
		r.Observer.Failed(universal.Name, err)
		return nil, err
	}
	// The merged libraries are what ships: link them for each slice's
	// architecture and deployment target too, and record it.
	var targets []recipe.Target
	for _, s := range m.Slices {
		targets = append(targets, recipe.Target{OS: s.Target.OS, Arch: s.Target.Arch, MinOS: s.Target.MinOS})
	}
	if m.LinkChecks, err = r.linkTree(ctx, dst, targets); err != nil {
		err = fmt.Errorf("%s: link: refusing to publish: %w", universal.Name, err)
		r.Observer.Failed(universal.Name, err)
		return nil, err
	}
	for _, c := range m.LinkChecks {
		r.logf("%s: linked %s with %d members of %s for %s against %s", universal.Name, c.Program, c.Members, c.Arch, c.Platform, c.System)
	}
	if err := artifact.WriteManifest(ctx, dst, m); err != nil {
		return nil, err
	}
	if len(m.HeaderDispatch) > 0 {
		r.logf("%s: headers that differ between the slices, merged with a per-architecture dispatch: %s", universal.Name, strings.Join(m.HeaderDispatch, ", "))
	}
	for _, l := range m.CompilerLines {
		r.logf("%s: validated %s %s: %s", universal.Name, l.Library, l.Arch, l.Line)
	}
	pub, err := r.publish(ctx, &built{dir: dst, manifest: m})
	if err != nil {
		return nil, err
	}
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
	if _, err := unpack.Extract(ctx, path, work, unpack.Options{MaxBytes: 1 << 30}); err != nil {
		return "", fmt.Errorf("artifact %s: %w", path, err)
	}
	return work, nil
}
