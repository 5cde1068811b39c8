package pipeline

import (
	"context"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/build"
)

// makeLibraries runs make build_libs and make install_dev into a staging
// directory, with progress, in the constructed environment, under the
// shared job budget when there is one.
func makeLibraries(ctx context.Context, j *job) error {
	j.staging = filepath.Join(j.work, "stage")
	r := j.run
	shared := j.jobs
	var prog build.Progress
	if shared != nil {
		// Two bars at once would overwrite each other.
		prog = &build.LineProgress{W: r.Log, Label: j.name, Interval: r.ProgressInterval}
	} else {
		prog = build.NewProgress(r.Log, j.name, r.ProgressInterval)
	}
	return build.Run(ctx, build.Options{
		Src: j.tree.Dir, Env: j.env, Jobs: r.Jobs, Shared: shared, Objects: j.makefile.Objects,
		Log: j.logPath, Stage: j.staging, Progress: prog,
	})
}
