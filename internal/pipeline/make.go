package pipeline

import (
	"context"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/build"
)

// makeLibraries runs make build_libs and make install_dev into a staging
// directory (without the static libraries when the recipe ships shared
// ones alone), with progress, in the constructed environment, under the
// shared job budget when there is one.
func makeLibraries(ctx context.Context, j *job) error {
	j.staging = filepath.Join(j.work, "stage")
	r := j.run
	shared := j.jobs
	prog := build.NewProgress(r.Log, j.name, r.ProgressInterval)
	if shared != nil {
		// Two bars at once would overwrite each other.
		prog = &build.LineProgress{W: r.Log, Label: j.name, Interval: r.ProgressInterval}
	}
	sharedOnly := j.sharedOnly()
	objects := j.makefile.Objects
	if sharedOnly {
		objects = j.makefile.SharedObjects
	}
	if err := build.Run(ctx, build.Options{
		Src: j.tree.Dir, Env: j.env, Jobs: r.Jobs, Shared: shared, Objects: objects,
		Log: j.logPath, Stage: j.staging, Progress: prog, SharedOnly: sharedOnly,
	}); err != nil {
		return err
	}
	if sharedOnly {
		return writeExports(j.tree.Dir, j.staging, objects, j.makefile.Objects)
	}
	return nil
}

// sharedOnly says whether the slice ships shared libraries alone: make
// then leaves the static ones out, which halves what it compiles.
func (j *job) sharedOnly() bool {
	return j.plan.Slice.Shared != nil && !j.plan.Slice.Shared.Static
}
