package pipeline

import (
	"context"
	"fmt"
	"os"
	"regexp"

	"github.com/osslbuild/osslbuild/internal/bump"
)

var seriesRe = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// Bump is recipe:bump: version is X.Y.Z, or X.Y for the newest release of a
// series. The fetch settings come from the environment as for builds.
func Bump(ctx context.Context, version string, dryRun bool) error {
	var o Options
	o.FromEnv()
	bo := bump.Options{Fetch: o.Fetch, SeedCache: true, DryRun: dryRun, Log: os.Stdout}
	if seriesRe.MatchString(version) {
		bo.Series = version
	} else {
		bo.Version = version
	}
	diff, err := bump.Run(ctx, bo)
	if err != nil {
		return err
	}
	fmt.Print(diff)
	return nil
}
