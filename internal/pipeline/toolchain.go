package pipeline

import (
	"context"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/configure"
)

// prepareToolchain writes the compiler and archiver wrappers for the target
// and constructs, variable by variable, the environment Configure and make
// run in: nothing of the invoker's environment reaches them.
func prepareToolchain(ctx context.Context, j *job) error {
	tc, _, err := j.run.toolchain(ctx, j.plan.Slice)
	if err != nil {
		return err
	}
	tenv, err := tc.Prepare(ctx, filepath.Join(j.work, "toolchain"), j.plan.Slice)
	if err != nil {
		return err
	}
	j.tools = tc
	j.env, err = configure.Env(tenv, j.work, j.tree.SourceDateEpoch)
	return err
}
