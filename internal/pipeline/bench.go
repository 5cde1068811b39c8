package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/osslbuild/osslbuild/internal/buildbench"
)

// BenchBuild is bench:build: it prints the Markdown report; build output
// goes to build/bench-build.log.
func BenchBuild(ctx context.Context, o Options, rounds int, only string) error {
	o.defaults()
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return err
	}
	logf, err := os.Create(o.Work + "/bench-build.log")
	if err != nil {
		return err
	}
	defer logf.Close()
	work, err := os.MkdirTemp(o.Work, "bench-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	rep, err := buildbench.Run(ctx, buildbench.Options{
		Repo: repo, Version: o.Version, Rounds: rounds, Jobs: o.Jobs, Work: work, Fetch: o.Fetch, Only: only, Log: logf,
	})
	if err != nil {
		return fmt.Errorf("bench:build (log: %s): %w", logf.Name(), err)
	}
	fmt.Print(rep)
	return nil
}
