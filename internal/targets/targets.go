// Package targets turns the Mage targets' optional flags and the
// environment into what the build packages take, so magefile.go stays a
// table of contents and this plumbing can be tested.
package targets

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/report"
)

// Flags are a target's optional flags, nil when absent.
type Flags struct {
	Recipe  *string // -recipe=FILE: the consumer's recipe (default: the embedded one)
	Version *string
	SHA256  *string
	Options *string
	Jobs    *int
	Out     *string
	Rebuild *bool
}

// Settings are the user's: the flags given over the OSSLBUILD_*
// environment variables. A recipe named by -recipe (or OSSLBUILD_RECIPE)
// is read and validated here, so its refusal names the flag and the
// file's line before anything is fetched; the Settings carry what was read
// (Loaded), and that is what builds.
func (f Flags) Settings() (pipeline.Settings, error) {
	var s pipeline.Settings
	s.Recipe = Deref(f.Recipe)
	s.Version = Deref(f.Version)
	s.Out = Deref(f.Out)
	s.Jobs = Deref(f.Jobs)
	s.Rebuild = Deref(f.Rebuild)
	if err := s.FromEnv(nil); err != nil {
		return s, err
	}
	if s.Recipe != "" {
		from := "-recipe"
		if f.Recipe == nil || *f.Recipe == "" {
			from = "OSSLBUILD_RECIPE"
		}
		r, err := recipe.Load(s.Recipe)
		if err != nil {
			return s, fmt.Errorf("%s: %w", from, err)
		}
		s.Loaded = r
	}
	return s, nil
}

// BuildSettings are Settings plus what only a build takes: -sha256, the
// release's tarball digest (required for a release the recipe does not
// list), and -options, Configure options in place of the recipe's, as one
// space-separated string (pyca's OPENSSL_BUILD_FLAGS). -version accepts
// pyca's openssl-X.Y.Z form too. Bad values are refused naming the flag.
func (f Flags) BuildSettings() (pipeline.Settings, error) {
	s, err := f.Settings()
	if err != nil {
		return s, err
	}
	if s.Version, err = recipe.ParseVersion(s.Version); err != nil {
		return s, fmt.Errorf("-version: %w", err)
	}
	s.SHA256 = strings.TrimSpace(Deref(f.SHA256))
	if f.Options != nil {
		if s.Options, err = recipe.ParseOptions(*f.Options); err != nil {
			return s, fmt.Errorf("-options: %w", err)
		}
	}
	return s, nil
}

// Runtime prints to stdout through the one escaping writer and, in GitHub
// Actions, folds logs, annotates failures and writes the step summary.
func Runtime() pipeline.Runtime {
	return pipeline.Runtime{Log: report.Stdout(), Observer: &report.Builds{W: os.Stdout}, Advise: advisory.Warning}
}

// Annotate writes an error annotation with title and message to stdout,
// escaped by report.Error as every annotation osslbuild writes, and fails
// (exit 1): the composite action's shell steps report their own refusals
// through it.
func Annotate(title, message string) error {
	if err := report.Error(os.Stdout, report.Annotation{Title: title, Msg: message}); err != nil {
		return err
	}
	return Safe(fmt.Errorf("%s: %s", title, message))
}

// Safe makes a target's error safe for mage to print ("Error: ...") under
// GitHub Actions (report.SafeError); every target returns through it.
func Safe(err error) error { return report.SafeError(nil, err) }

// Outputs are the step outputs a build sets in GitHub Actions: where the
// artifact is, its tarball and the tarball's sha256.
func Outputs(res *pipeline.Result) map[string]string {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	return map[string]string{
		"artifact-dir": abs(res.Published.Dir),
		"tarball":      abs(res.Published.Tarball),
		"sha256":       res.Published.Digests.SHA256,
	}
}

// Done finishes a build target: with GITHUB_OUTPUT set (a GitHub Actions
// step), the result's Outputs are appended to that file, so a step (and
// the osslbuild action) can hand them on.
func Done(res *pipeline.Result, err error) error {
	if err != nil {
		return Safe(err)
	}
	return Safe(WriteOutputs(os.Getenv("GITHUB_OUTPUT"), Outputs(res)))
}

// WriteOutputs appends name=value lines to the GitHub Actions output file
// path; "" writes nothing.
func WriteOutputs(path string, outs map[string]string) error {
	if path == "" {
		return nil
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(outs)) {
		v := outs[k]
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("GITHUB_OUTPUT: %s %q spans lines", k, v)
		}
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("GITHUB_OUTPUT: %w", err)
	}
	_, err = f.WriteString(b.String())
	if err = cmp.Or(err, f.Close()); err != nil {
		return fmt.Errorf("GITHUB_OUTPUT %s: %w", path, err)
	}
	return nil
}

// Deref is *p, or the zero value for an absent flag.
func Deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// Run is every target's frame, so magefile.go's targets are one
// statement each: body runs under Interruptible and its error returns
// through Safe. TestEveryTargetIsInterruptible holds every target to it.
func Run(ctx context.Context, body func(context.Context) error) error {
	ctx, stop := Interruptible(ctx)
	defer stop()
	return Safe(body(ctx))
}

// Run is targets.Run for a target that takes the user's Settings: they
// are read inside the frame (a bad flag fails through Safe) and handed to
// body.
func (f Flags) Run(ctx context.Context, body func(context.Context, pipeline.Settings) error) error {
	return runWith(ctx, f.Settings, body)
}

// RunBuild is Run with BuildSettings, for the targets that build.
func (f Flags) RunBuild(ctx context.Context, body func(context.Context, pipeline.Settings) error) error {
	return runWith(ctx, f.BuildSettings, body)
}

// runWith reads the Settings inside Run's frame and hands them to body.
func runWith(ctx context.Context, settings func() (pipeline.Settings, error), body func(context.Context, pipeline.Settings) error) error {
	return Run(ctx, func(ctx context.Context) error {
		s, err := settings()
		if err != nil {
			return err
		}
		return body(ctx, s)
	})
}

// Interruptible is ctx cancelled by SIGINT or SIGTERM, and stop, which
// ends that. Every target that runs a process or writes outputs starts
// with it: CI cancels a job with SIGTERM, which Mage's runner does not
// handle (it cancels only on SIGINT), and a process killed by it would
// leave its children running, its work directories behind and, between
// two artifacts, a universal2 build half published. Cancelled, the build
// stops its process groups, removes what it made and publishes nothing.
//
// Mage's runner also catches SIGINT, cancels, and exits the process 5 s
// later whether the cleanup is done or not: its handler is removed first,
// so the build's own cleanup runs to the end. Once a signal has cancelled
// the build, the default action is back: a second Ctrl-C (or CI's next
// signal) ends the process at once, as it would without osslbuild.
func Interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	signal.Reset(os.Interrupt)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
