package bump

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/osslbuild/osslbuild/internal/source/fetch"
)

// Target is recipe:bump: arg is X.Y.Z, or X.Y for the newest release of a
// series, added to the recipe file path ("" = DefaultRecipe, a consumer's
// own with -recipe=FILE); the diff is printed to w. $GITHUB_TOKEN, if set, is sent with the
// release listing's requests (see Options.ListingToken).
func Target(ctx context.Context, path string, f fetch.Options, arg string, dryRun bool, w io.Writer) error {
	o := Options{Recipe: path, Fetch: f, SeedCache: true, DryRun: dryRun, Log: w, ListingToken: os.Getenv("GITHUB_TOKEN")}
	if seriesRe.MatchString(arg) {
		o.Series = arg
	} else {
		o.Version = arg
	}
	res, err := Add(ctx, o)
	if err != nil {
		return err
	}
	// A line per write: the targets' writer escapes each as one record.
	for _, l := range strings.SplitAfter(res.Diff, "\n") {
		fmt.Fprint(w, l)
	}
	return nil
}
