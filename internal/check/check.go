package check

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/report"
)

// ErrFailed is matched (errors.Is) by Run's error when the input was
// inspected and broke a rule; other errors mean it could not be checked.
var ErrFailed = errors.New("check failed")

// ErrUsage is matched (errors.Is) by Run's error when an option is wrong
// (a -minopt, -arch, -isa or -format value, -json with another -format,
// no path): a usage error, exit status 2 for osslcheck and, through the
// error's ExitStatus method, for `go tool mage check`.
var ErrUsage = errors.New("usage")

// usageError is a wrong option: its message, ErrUsage and exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string   { return e.err.Error() }
func (e *usageError) Unwrap() []error { return []error{e.err, ErrUsage} }

// ExitStatus is what mage exits with when a target returns the error.
func (e *usageError) ExitStatus() int { return 2 }

func usage(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// DefaultMinOpt is the -minopt used when Options.MinOpt is empty.
const DefaultMinOpt = "2"

// Options say what to check and how to report it.
type Options struct {
	Path   string   // file or directory
	MinOpt string   // minimum optimisation: 0, 1, 2, 3, s or z; "" means 2
	Strict bool     // fail a slice whose optimisation is unknown, or whose OpenSSL series is past its end of life, not only report it
	Archs  []string // architectures every binary must have, e.g. arm64, x86_64
	// ISA, when set, fails compiled code above this level outside the
	// dispatch list known for the slice's release, in the slices of the
	// level's architecture: x86-64's (x86-64, core2, x86-64-v2,
	// x86-64-v3, x86-64-v4) or arm64's (apple-m1, apple-m2). Strict
	// holds macOS arm64 slices to apple-m1 where it names no arm64 level.
	ISA  string
	JSON bool // print the Result as JSON instead of a table (Format "json")
	// Format is what Run prints: "text" (the table; "" too), "json"
	// (check's own schema: everything found) or "sarif" (SARIF 2.1.0 for
	// code scanning: the failures, one result per failing slice) or
	// "cyclonedx" (a CycloneDX 1.5 SBOM of the libraries found, with
	// their advisories as vulnerabilities).
	Format string
	// Width is how many columns the text table may take: 0 means the
	// terminal's width when Stdout is a terminal, else 100.
	Width int
	// Version names the tool in SARIF and CycloneDX output.
	Version string

	Stdout io.Writer      // nil: os.Stdout
	Stderr io.Writer      // nil: os.Stderr (annotations go here in JSON mode)
	Env    report.Env     // nil: os.Getenv (GITHUB_ACTIONS, GITHUB_STEP_SUMMARY)
	Limits inspect.Limits // decompression bounds for wheels and tarballs
	// Now is the day end of life is judged on; zero means today.
	Now time.Time
	// Digests hashes (sha256) every binary, not only an artifact's files,
	// which are always verified. The table does not show digests; Run
	// sets it when the JSON or the step summary will.
	Digests bool
	// FailOn, when set (low, moderate, high or critical; "none" is
	// unset), fails a slice whose OpenSSL release has a published
	// advisory at or above it; an advisory of unknown severity fails at
	// every level. Unset, advisories are reported only.
	FailOn string
	// Assessed names a file of assessed CVEs (-vex: CycloneDX VEX, or one
	// "CVE-YYYY-NNNN reason" a line) whose advisories are suppressed:
	// listed as assessed, neither counted nor failed.
	Assessed string
	// Advisories is the table slices are matched against; nil means
	// AdvisoriesFile's, or the embedded one (advisory.Default).
	Advisories *advisory.Table
	// AdvisoriesFile is a table file of the same schema (-advisories):
	// a newer table than the one built in, without a new binary. One
	// older than the embedded table, or lacking any of its CVEs, is
	// refused unless AdvisoriesOlder (-advisories-older) asks for it.
	AdvisoriesFile  string
	AdvisoriesOlder bool
}

// FromFlags maps the mage target's optional flags onto Options:
// -minopt=3, -arch=arm64,x86_64, -json, -strict, -isa=core2, -format=sarif,
// -failon=high (osslcheck's -fail-on), -vex=FILE, -advisories=FILE,
// -advisoriesOlder.
func FromFlags(path string, minOpt, arch *string, asJSON, strict *bool, isa, format, failOn, vex, advisories *string, advisoriesOlder *bool) Options {
	o := Options{
		Path:            path,
		MinOpt:          deref(minOpt),
		JSON:            deref(asJSON),
		Strict:          deref(strict),
		ISA:             deref(isa),
		Format:          deref(format),
		FailOn:          deref(failOn),
		Assessed:        deref(vex),
		AdvisoriesFile:  deref(advisories),
		AdvisoriesOlder: deref(advisoriesOlder),
	}
	for _, a := range strings.Split(deref(arch), ",") {
		if a = strings.TrimSpace(a); a != "" {
			o.Archs = append(o.Archs, a)
		}
	}
	return o
}

// deref is *p, or the zero value for a flag mage was not given (nil).
func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// Run checks o.Path, prints the result (table or JSON; annotations and the
// step summary under GitHub Actions) and returns an error wrapping
// ErrFailed when any rule is broken. Every line it prints, and the text of
// the error it returns (mage prints it as "Error: ..."), is safe to log:
// under GitHub Actions a file named to look like a workflow command cannot
// issue one.
func Run(ctx context.Context, o Options) error {
	return report.SafeError(o.Env, render(ctx, o, func(o Options) (*Result, error) { return Check(ctx, o) }))
}

// RunPaths is Run over several inputs reported as one, under the name
// label: what a Python installation loads (package python) is its modules,
// the libraries they map and its site-packages. Each path is checked as
// Check checks it; the verdict is the whole's, and "nothing holds OpenSSL"
// is said once, of all of them.
func RunPaths(ctx context.Context, o Options, label string, paths []string) error {
	err := render(ctx, o, func(o Options) (*Result, error) {
		var all *Result
		judged := false
		for _, p := range paths {
			o.Path = p
			r, err := Check(ctx, o)
			if err != nil {
				return nil, err
			}
			if r.nothing == "" {
				judged = true
			} else {
				r.Failures = slices.DeleteFunc(r.Failures, func(f string) bool { return f == r.nothing })
			}
			if all == nil {
				all = r
				continue
			}
			all.Binaries = append(all.Binaries, r.Binaries...)
			all.Artifacts = append(all.Artifacts, r.Artifacts...)
			all.SBOMs = append(all.SBOMs, r.SBOMs...)
			for _, n := range r.Notes { // the -vex file's notes are every path's
				if !slices.Contains(all.Notes, n) {
					all.Notes = append(all.Notes, n)
				}
			}
			all.Failures = append(all.Failures, r.Failures...)
			all.Skipped += r.Skipped
		}
		if all == nil {
			return nil, usage("check: no path given")
		}
		summarize(all)
		all.Path, all.nothing = label, ""
		if !judged {
			all.nothing = fmt.Sprintf("%s: no OpenSSL build information found in %d binaries of %d paths: nothing shows how OpenSSL was built", label, len(all.Binaries), len(paths))
			all.Failures = append(all.Failures, all.nothing)
		}
		all.OK = len(all.Failures) == 0
		return all, nil
	})
	return report.SafeError(o.Env, err) // nil stays nil
}

// render checks (through get), prints the result as o says and gives the
// verdict as an error wrapping ErrFailed.
func render(ctx context.Context, o Options, get func(Options) (*Result, error)) error {
	o.Stdout = cmp.Or(o.Stdout, io.Writer(os.Stdout))
	o.Stderr = cmp.Or(o.Stderr, io.Writer(os.Stderr))
	if o.Env == nil {
		o.Env = os.Getenv // as report's functions read a nil one
	}
	format := o.Format
	switch {
	case o.JSON && format != "" && format != "json":
		return usage("check: -json and -format=%s: give one (-json is -format=json)", format)
	case o.JSON, format == "json":
		format = "json"
	case format == "", format == "text", format == "sarif", format == "cyclonedx":
	default:
		return usage("check: -format=%s: want text, json, sarif or cyclonedx", format)
	}
	var timestamp string
	if format == "cyclonedx" {
		var err error
		if timestamp, err = sourceDateEpoch(o.Env); err != nil {
			return err
		}
	}
	machine := format == "json" || format == "sarif" || format == "cyclonedx"
	o.Digests = o.Digests || machine || report.SummaryEnabled(o.Env)
	res, err := get(o)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	switch format {
	case "json":
		err = report.JSON(&out, res)
	case "sarif":
		err = SARIF(&out, res, o.Version)
	case "cyclonedx":
		err = CycloneDX(&out, res, o.Version, timestamp)
	default:
		err = Text(&out, res, tableWidth(o))
	}
	if err == nil {
		_, err = o.Stdout.Write(report.SafeOutput(o.Env, out.Bytes(), machine))
	}
	if err != nil {
		return fmt.Errorf("check %s: write report: %w", res.Path, err)
	}
	if report.InActions(o.Env) {
		w := o.Stdout
		if machine {
			w = o.Stderr // keep stdout one JSON document; the runner reads both
		}
		if err := Annotate(w, res); err != nil {
			return fmt.Errorf("check %s: annotations: %w", res.Path, err)
		}
	}
	if err := report.AppendSummary(o.Env, "osslbuild check "+res.Path, Rows(res), footer(res)...); err != nil {
		return fmt.Errorf("check %s: %w", res.Path, err)
	}
	if !res.OK {
		more := ""
		if n := len(res.Failures); n > 1 {
			more = fmt.Sprintf(" (and %d more)", n-1)
		}
		return fmt.Errorf("check %s: %w: %s%s", res.Path, ErrFailed, res.Failures[0], more)
	}
	return nil
}

// Check inspects o.Path and applies the rules; it prints nothing. The error
// is for bad options or a path that cannot be checked at all; rule breaches
// are in Result.
func Check(ctx context.Context, o Options) (*Result, error) {
	min, err := validate.ParseMinOpt(cmp.Or(o.MinOpt, DefaultMinOpt))
	if err != nil {
		return nil, usage("check: %w", err)
	}
	if o.Path == "" {
		return nil, usage("check: no path given")
	}
	for _, a := range o.Archs {
		if !slices.ContainsFunc(inspect.ArchNames(), func(n string) bool { return validate.SameArch(n, a) }) {
			return nil, usage("check: -arch=%s: unknown architecture (want names such as %s)", a, strings.Join(inspect.ArchNames(), ", "))
		}
	}
	if o.ISA != "" && isaArch(o.ISA) == "" {
		return nil, usage("check: -isa=%s: unknown level (want x86-64's %s, or arm64's %s)", o.ISA,
			strings.Join(codeclass.ISALevels, ", "), strings.Join(codeclass.ARM64Levels, ", "))
	}
	failOn, err := parseFailOn(o.FailOn)
	if err != nil {
		return nil, err
	}
	table := o.Advisories
	switch {
	case table == nil && o.AdvisoriesFile != "":
		if table, err = advisory.Load(o.AdvisoriesFile, o.AdvisoriesOlder); err != nil {
			return nil, fmt.Errorf("check: -advisories=%s: %w", o.AdvisoriesFile, err)
		}
	case table == nil:
		if table, err = advisory.Default(); err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	c := &checker{ctx: ctx, o: o, min: min, links: map[string][]string{}, table: table, failOn: failOn,
		res: &Result{Schema: Schema, Path: o.Path, MinOpt: min.String(), Strict: o.Strict, Archs: append([]string{}, o.Archs...),
			Binaries: []Binary{}, Artifacts: []Artifact{}, SBOMs: []SBOM{}, Notes: []string{}, Failures: []string{},
			Advisories: &AdvisoryReport{AsOf: table.AsOf, Table: table.Describe(), Origin: table.Origin, Sources: table.Sources, Listed: len(table.Advisories), FailOn: string(failOn), Assessed: o.Assessed}}}
	c.res.Advisories.Stale, _ = table.Stale(o.Now) // "" when it is not
	if o.Assessed != "" {
		if c.res.assessed, err = advisory.ReadSuppressions(o.Assessed); err != nil {
			return nil, fmt.Errorf("check: -vex=%s: %w", o.Assessed, err)
		}
		c.res.Notes = append(c.res.Notes, c.res.assessed.Notes...) // entries that suppress nothing
	}
	// Workers, one per CPU, inspect the files while the walk is still
	// listing them.
	c.queue = make(chan *job, 256)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var w worker
			for j := range c.queue {
				if ctx.Err() != nil {
					continue // drain
				}
				j.res = c.file(*j, &w)
				for k := range j.res.binaries {
					c.judgeBinary(&j.res.binaries[k])
				}
			}
		})
	}
	err = c.collect(o.Path)
	close(c.queue)
	wg.Wait()
	if err := cmp.Or(err, ctx.Err()); err != nil { // the walk's error first
		return nil, err
	}
	for _, j := range c.jobs {
		r := &j.res
		c.res.Binaries = append(c.res.Binaries, r.binaries...)
		c.res.Notes = append(c.res.Notes, r.notes...)
		c.res.Failures = append(c.res.Failures, r.failures...)
		c.res.Skipped += r.skipped
		if j.root != nil && r.entry != nil {
			j.root.found[j.rel] = *r.entry
		}
		c.roots = append(c.roots, r.roots...)
		c.sboms = append(c.sboms, r.sboms...)
	}
	c.attachLinks()
	c.judge()
	return c.res, nil
}

// checker holds one check's state.
type checker struct {
	ctx      context.Context
	o        Options
	min      inspect.OptLevel
	res      *Result
	jobs     []*job    // in walk order; only the walk appends
	queue    chan *job // to the workers
	roots    []*root
	realRoot string              // the checked directory with links resolved
	links    map[string][]string // real path of a file -> links to it inside the directory
	table    *advisory.Table     // OpenSSL's published advisories
	failOn   advisory.Severity   // -fail-on; "" for none
	sboms    []SBOM              // found, held to the binaries once all are judged
}

// parseFailOn reads -fail-on: low, moderate, high or critical, in any
// case; "" or "none" for none.
func parseFailOn(s string) (advisory.Severity, error) {
	if s == "" || strings.EqualFold(s, "none") {
		return "", nil
	}
	sev, err := advisory.ParseSeverity(s)
	if err != nil || sev == advisory.Unknown {
		return "", usage("check: -fail-on=%s: want low, moderate, high or critical (or none)", s)
	}
	return sev, nil
}

// add queues a file for the workers, keeping the walk's order.
func (c *checker) add(j job) {
	p := &j
	c.jobs = append(c.jobs, p)
	c.queue <- p
}

func (c *checker) note(msg string) { c.res.Notes = append(c.res.Notes, msg) }

// tableWidth is the width the text table fits: o.Width, else the
// terminal's when stdout is one, else 100 (a log, a pipe, a file).
func tableWidth(o Options) int {
	if o.Width > 0 {
		return o.Width
	}
	if f, ok := o.Stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 100
}

// isaArch is the architecture whose level -isa names, "" for none.
func isaArch(level string) string {
	for _, a := range []string{"x86_64", "arm64"} {
		if _, ok := codeclass.LevelRankFor(a, level); ok {
			return a
		}
	}
	return ""
}
