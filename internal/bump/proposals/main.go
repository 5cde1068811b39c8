// Command proposals is the first job of .github/workflows/recipe-bump.yml:
// for each release series in the recipe it finds the newest release in the
// release listing and, when that is newer than what the recipe pins,
// downloads and verifies it as `recipe:bump X.Y.Z` does and writes the
// recipe change and the pull request's text into <out>/<series>/. It never
// writes the recipe itself; the workflow's second job, which holds the write
// token, turns each directory into a pull request
// (scripts/bump-pull-requests.sh).
//
//	go run ./internal/bump/proposals -out DIR [-recipe FILE] [-listing URL] [-series 3.5,4.0]
//
// GITHUB_TOKEN (sent to the listing only), OSSLBUILD_MIRROR and
// OSSLBUILD_OFFLINE are read from the environment. The exit code is 1 when
// any series failed (the listing unreadable, a download that fails, a
// release refused); the proposals of the other series are still written.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/osslbuild/osslbuild/internal/bump"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "proposals:", err)
		}
		os.Exit(1)
	}
}

// transport carries every HTTP request when set; nil means fetch's own. The
// tests set one that refuses anything but their loopback server.
var transport http.RoundTripper

// run is main with its inputs passed in, for the tests.
func run(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error {
	fs := flag.NewFlagSet("proposals", flag.ContinueOnError)
	fs.SetOutput(logw)
	out := fs.String("out", "", "directory to write one <series>/ directory per proposal into (required; must be empty or absent)")
	recipePath := fs.String("recipe", bump.DefaultRecipe, "the recipe file")
	listing := fs.String("listing", bump.DefaultListingURL, "the GitHub releases listing of openssl/openssl")
	series := fs.String("series", "", "comma-separated series to look at (default: every series the recipe pins)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	if ents, err := os.ReadDir(*out); err == nil && len(ents) > 0 {
		return fmt.Errorf("-out %s: not empty; proposals from an earlier run must not be mixed with this one's", *out)
	}

	var s pipeline.Settings
	if err := s.FromEnv(getenv); err != nil {
		return err
	}
	if transport != nil {
		s.Fetch.Transport = transport
	}
	o := bump.ProposeOptions{Options: bump.Options{
		Recipe:       *recipePath,
		ListingURL:   *listing,
		ListingToken: getenv("GITHUB_TOKEN"),
		Fetch:        s.Fetch,
		Log:          logw,
	}}
	if *series != "" {
		o.Series = strings.Split(*series, ",")
	}
	ps, err := bump.Propose(ctx, o)
	if werr := bump.WriteProposals(*out, ps); werr != nil {
		return errors.Join(err, werr)
	}
	for _, p := range ps {
		fmt.Fprintf(logw, "wrote %s/%s: %s\n", *out, p.Series, p.Title())
	}
	if len(ps) == 0 && err == nil {
		fmt.Fprintln(logw, "no series has a newer release")
	}
	if err != nil && report.InActions(getenv) {
		for _, e := range flatten(err) {
			report.Error(logw, report.Annotation{Title: "recipe-bump", Msg: e.Error()})
		}
	}
	return err
}

// flatten splits an errors.Join into its parts (one annotation each).
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
