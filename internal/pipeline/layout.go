package pipeline

import (
	"context"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/artifact"
)

// layOut copies the staged install into the artifact tree, with .pc files
// relocated away from the fixed build prefix.
func layOut(ctx context.Context, j *job) error {
	j.dir = filepath.Join(j.work, "artifact", j.name)
	if err := os.MkdirAll(filepath.Dir(j.dir), 0o755); err != nil {
		return err
	}
	_, err := artifact.Layout(j.staging, j.plan.Recipe.Prefix, j.dir)
	return err
}
