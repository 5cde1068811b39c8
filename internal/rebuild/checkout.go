package rebuild

import (
	"context"
	"os/exec"
	"strings"

	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// Checkout is this checkout's osslbuild revision as the revision rule
// reads it: pipeline.Version(), with "+dirty" when git says tracked files
// changed (a rebuild from a modified checkout is not that revision's,
// whatever HEAD says).
func Checkout(ctx context.Context) string {
	rev := pipeline.Version()
	if !commit.MatchString(rev) {
		return rev
	}
	out, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && strings.TrimSpace(string(out)) != "" {
		return rev + "+dirty"
	}
	return rev
}
