// Package targets turns the Mage targets' optional flags and the
// environment into what the build packages take, so magefile.go stays a
// table of contents and this plumbing can be tested.
package targets

import (
	"os"

	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/report"
)

// Settings are the user's: the flags given (nil when absent) over the
// OSSLBUILD_* environment variables.
func Settings(version *string, jobs *int, out *string, rebuild *bool) (pipeline.Settings, error) {
	var s pipeline.Settings
	s.Version = Deref(version)
	s.Out = Deref(out)
	if jobs != nil {
		s.Jobs = *jobs
	}
	if rebuild != nil {
		s.Rebuild = *rebuild
	}
	return s, s.FromEnv(nil)
}

// Runtime prints to stdout and, in GitHub Actions, folds logs, annotates
// failures and writes the step summary.
func Runtime() pipeline.Runtime {
	return pipeline.Runtime{Log: os.Stdout, Observer: &report.Builds{W: os.Stdout}}
}

// Deref is *p, or the zero value for an absent flag.
func Deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
