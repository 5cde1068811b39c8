// Command librarydiff is a step of .github/workflows/recipe-bump.yml's
// library job: given a proposal directory the find job wrote and the
// artifacts the job built of the series' previous pin and of the proposed
// release, it verifies both, compares them (`go tool mage diff`) and
// writes the proposal's library-diff.md, which the pull request's body
// carries (scripts/bump-pull-requests.sh).
//
//	go run ./internal/bump/librarydiff -proposal DIR OLD NEW
//	go run ./internal/bump/librarydiff -proposal DIR -print pinned|version
//
// -print says which releases the proposal compares (proposal.json, read
// strictly; pinned is "" for a new series), for the script that builds
// them (scripts/bump-library-diffs.sh).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/osslbuild/osslbuild/internal/bump"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "librarydiff:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, logw io.Writer) error {
	fs := flag.NewFlagSet("librarydiff", flag.ContinueOnError)
	fs.SetOutput(logw)
	dir := fs.String("proposal", "", "the proposal directory (<proposals>/<series>; required)")
	field := fs.String("print", "", "print the proposal's pinned or version release and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *field != "" {
		f, err := bump.ReadFacts(*dir)
		if err != nil {
			return err
		}
		switch *field {
		case "pinned":
			fmt.Println(f.Pinned)
		case "version":
			fmt.Println(f.Version)
		default:
			return fmt.Errorf("-print %q: want pinned or version", *field)
		}
		return nil
	}
	if *dir == "" || fs.NArg() != 2 {
		return errors.New("usage: librarydiff -proposal DIR OLD NEW (the previous pin's artifact, then the proposed release's)")
	}
	if err := bump.WriteLibraryDiff(ctx, *dir, fs.Arg(0), fs.Arg(1)); err != nil {
		return err
	}
	fmt.Fprintf(logw, "wrote %s/%s\n", *dir, bump.ProposalLibraryDiff)
	return nil
}
