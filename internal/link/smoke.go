package link

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/artifact/unpacked"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// ErrSmoke marks a smoke run that found a wrong answer, a failed
// handshake or build strings that differ from the library's.
var ErrSmoke = errors.New("smoke test failed")

// SmokeOptions say which artifact to smoke-test and where.
type SmokeOptions struct {
	Artifact  string    // artifact directory (with manifest.json)
	Toolchain string    // "macos", "cross" or "" for the host's default
	Work      string    // parent of the scratch directory ("" = the system's)
	Log       io.Writer // the program's results, line by line
	// Host is the GOOS/GOARCH the programs would run on ("" = this one).
	Host string
	// Summary, when set, receives a Markdown section per slice (the
	// GitHub Actions step summary).
	Summary io.Writer
	Program Program // zero = SmokeProgram
}

// SmokeResult is one slice's smoke run.
type SmokeResult struct {
	Slice  platform.Slice
	Linked toolchain.Linked
	// Ran is false where this host cannot run the slice (a macOS program
	// on Linux); NotRun says why.
	Ran    bool
	NotRun string
	Via    []string // how it ran, e.g. [arch -x86_64]
	Report *Report  // the program's output, when it ran
	// Library are the build strings validation reads from libcrypto.a.
	Library  struct{ Compiler, Platform string }
	Problems []string // every failure, each naming what was expected and found
}

// Report is the smoke program's output (smoke/smoke.c).
type Report struct {
	Version, Compiler, Platform string
	Tests                       []Test
	Passed, Failed, Skipped     int
}

// Test is one of the program's tests.
type Test struct {
	Status string // pass, skip, fail
	Name   string
	Detail string
}

// Smoke links the smoke program against every architecture of the
// artifact and runs it where this host can: natively, or an x86_64 slice
// under Rosetta (arch -x86_64) on an Apple silicon Mac. Where it cannot
// (macOS slices on Linux) the link is the test, and the result says the
// program did not run. It fails when any slice that ran failed a test or
// printed build strings other than the ones validation reads from
// libcrypto.a.
func Smoke(ctx context.Context, o SmokeOptions) ([]SmokeResult, error) {
	o.Log = cmp.Or(o.Log, io.Discard)
	o.Host = cmp.Or(o.Host, toolchain.Host())
	if o.Program.Source == nil {
		o.Program = SmokeProgram
	}
	work, err := os.MkdirTemp(o.Work, "smoke-")
	if err != nil {
		return nil, fmt.Errorf("smoke: scratch directory: %w", err)
	}
	defer os.RemoveAll(work)
	// An artifact is whatever was downloaded: a directory or its .tar.gz,
	// held to its manifest (every file's sha256, nothing added, linked or
	// special) before anything of it is linked or run.
	dir, err := unpacked.Dir(ctx, o.Artifact, filepath.Join(work, "artifact"))
	if err != nil {
		return nil, fmt.Errorf("smoke: %w (smoke takes an osslbuild artifact: a directory or its .tar.gz)", err)
	}
	m, err := artifact.Verify(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("smoke: artifact %s: %w", o.Artifact, err)
	}
	o.Artifact = dir
	// The architectures the artifact holds: each slice of a universal2
	// artifact, else its own target.
	slices := m.Parts()
	tc, err := toolchain.For(o.Toolchain, slices[0])
	if err != nil {
		return nil, fmt.Errorf("smoke: %w", err)
	}
	var results []SmokeResult
	var failed []string
	for _, s := range slices {
		r := smokeSlice(ctx, tc, o, m.Name, s, work)
		results = append(results, r)
		logResult(o.Log, m.Name, r)
		if o.Summary != nil {
			summarise(o.Summary, m.Name, r)
		}
		if len(r.Problems) > 0 {
			failed = append(failed, fmt.Sprintf("%s %s: %s", m.Name, s.Arch, strings.Join(r.Problems, "; ")))
		}
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("%w: %s", ErrSmoke, strings.Join(failed, "; "))
	}
	return results, nil
}

// RunSmoke is the smoke target: Smoke with the results on log (one line
// per Write, as the targets' escaping writer takes them) and, in GitHub
// Actions (GITHUB_STEP_SUMMARY set), in the step summary too.
func RunSmoke(ctx context.Context, dir, toolchainKind, work string, log io.Writer, getenv func(string) string) error {
	o := SmokeOptions{Artifact: dir, Toolchain: toolchainKind, Work: work, Log: log}
	if path := getenv("GITHUB_STEP_SUMMARY"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("smoke: step summary: %w", err)
		}
		defer f.Close()
		o.Summary = f
	}
	if work != "" {
		if err := os.MkdirAll(work, 0o755); err != nil {
			return fmt.Errorf("smoke: %w", err)
		}
	}
	_, err := Smoke(ctx, o)
	return err
}

func smokeSlice(ctx context.Context, tc toolchain.Toolchain, o SmokeOptions, name string, s platform.Slice, work string) SmokeResult {
	r := SmokeResult{Slice: s}
	exe := filepath.Join(work, "smoke-"+s.Arch)
	l, err := Build(ctx, tc, o.Artifact, s, o.Program, exe)
	r.Linked = l
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
		return r
	}
	r.Via, r.NotRun = runner(o.Host, s)
	if r.NotRun != "" {
		return r
	}
	r.Ran = true
	libcrypto := s.Libraries()[libcryptoIndex(s)]
	r.Library.Compiler, r.Library.Platform, err = buildStrings(filepath.Join(o.Artifact, "lib", libcrypto), s.Arch)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
	}
	var stdout, stderr bytes.Buffer
	args := append(append([]string{}, r.Via...), exe)
	runErr := proc.Run(ctx, proc.Cmd{Args: args, Env: []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C"}, Stdout: &stdout, Stderr: &stderr})
	rep, perr := ParseReport(&stdout)
	r.Report = rep
	for _, t := range rep.Tests {
		if t.Status == "fail" {
			r.Problems = append(r.Problems, t.Name+": "+t.Detail)
		}
	}
	if perr != nil {
		r.Problems = append(r.Problems, perr.Error())
	}
	if runErr != nil && rep.Failed == 0 {
		msg := strings.TrimSpace(stderr.String())
		r.Problems = append(r.Problems, fmt.Sprintf("the program failed: %v %s", runErr, msg))
	}
	if r.Library.Compiler != "" && rep.Compiler != r.Library.Compiler {
		r.Problems = append(r.Problems, fmt.Sprintf("OpenSSL_version(OPENSSL_CFLAGS): expected %q (read from %s), got %q", r.Library.Compiler, libcrypto, rep.Compiler))
	}
	if r.Library.Platform != "" && rep.Platform != r.Library.Platform {
		r.Problems = append(r.Problems, fmt.Sprintf("OpenSSL_version(OPENSSL_PLATFORM): expected %q (read from %s), got %q", r.Library.Platform, libcrypto, rep.Platform))
	}
	return r
}

// runner says how host runs a slice's program, as the platform table
// says: directly, under Rosetta, or not at all (and why).
func runner(host string, s platform.Slice) (via []string, notRun string) {
	p, err := platform.Lookup(s)
	if err != nil {
		return nil, fmt.Sprintf("linked only: %v", err)
	}
	if r, ok := p.Run(host); ok {
		return r.Via, ""
	}
	goos, _, _ := strings.Cut(host, "/")
	if goos != p.GOOS {
		return nil, fmt.Sprintf("linked only: a %s %s program cannot run on %s (run `go tool mage smoke` on %s)", s.OS, s.Arch, host, p.RunsOn())
	}
	return nil, fmt.Sprintf("linked only: this %s host cannot run %s code", host, s.Arch)
}

// buildStrings are the compiler and platform lines of the arch slice of
// libcrypto.a, as validation reads them.
func buildStrings(lib, arch string) (compiler, platform string, err error) {
	f, err := inspect.Inspect(lib)
	if err != nil {
		return "", "", err
	}
	for _, s := range f.Slices {
		if s.Arch != arch {
			continue
		}
		for _, bi := range s.BuildInfo {
			switch bi.Kind {
			case inspect.InfoCompiler:
				compiler = bi.Text
			case inspect.InfoPlatform:
				platform = bi.Text
			}
		}
	}
	if compiler == "" || platform == "" {
		return compiler, platform, fmt.Errorf("%s (%s): no compiler and platform lines to compare with", lib, arch)
	}
	return compiler, platform, nil
}

// ParseReport reads the smoke program's output. It insists on the three
// build strings and a result line that agrees with the tests listed, so
// a program that stopped half-way never reads as a pass; what it could
// read is returned with the error.
func ParseReport(r io.Reader) (*Report, error) {
	rep := &Report{}
	result := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		bad := func(why string) error { return fmt.Errorf("smoke output line %d %q: %s", n, line, why) }
		switch f[0] {
		case "version", "compiler", "platform":
			if len(f) != 2 || f[1] == "" {
				return rep, bad("want a key and a value")
			}
			*map[string]*string{"version": &rep.Version, "compiler": &rep.Compiler, "platform": &rep.Platform}[f[0]] = f[1]
		case "pass", "skip", "fail":
			if len(f) != 3 {
				return rep, bad("want status, test, detail")
			}
			rep.Tests = append(rep.Tests, Test{Status: f[0], Name: f[1], Detail: f[2]})
			*map[string]*int{"pass": &rep.Passed, "skip": &rep.Skipped, "fail": &rep.Failed}[f[0]]++
		case "result":
			c := strings.Split(line, "\t")
			if len(c) != 4 {
				return rep, bad("want result, passed, failed, skipped")
			}
			var v [3]int
			for i := range v {
				x, err := strconv.Atoi(c[i+1])
				if err != nil {
					return rep, bad("counts must be numbers")
				}
				v[i] = x
			}
			if v != [3]int{rep.Passed, rep.Failed, rep.Skipped} {
				return rep, bad(fmt.Sprintf("the program counted %d/%d/%d, its lines say %d/%d/%d", v[0], v[1], v[2], rep.Passed, rep.Failed, rep.Skipped))
			}
			result = true
		default:
			return rep, bad("unknown record")
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("smoke output: %w", err)
	}
	var missing []string
	for k, v := range map[string]string{"version": rep.Version, "compiler": rep.Compiler, "platform": rep.Platform} {
		if v == "" {
			missing = append(missing, k)
		}
	}
	if !result {
		missing = append(missing, "result")
	}
	if len(missing) > 0 {
		return rep, fmt.Errorf("smoke output incomplete (the program stopped early?): no %s line", strings.Join(missing, ", "))
	}
	return rep, nil
}

func logResult(w io.Writer, name string, r SmokeResult) {
	head := fmt.Sprintf("smoke: %s %s", name, r.Slice)
	if r.Linked.Linker != "" {
		fmt.Fprintf(w, "%s: linked %s with %s (%s, against %s)\n", head, SmokeProgram.Name, linkedLibraries(r.Slice), r.Linked.Linker, r.Linked.System)
	}
	// A slice that did not run has no Via, Report or Library: its lines
	// are NotRun's and the problems'.
	if r.NotRun != "" {
		fmt.Fprintf(w, "%s: %s\n", head, r.NotRun)
	}
	if len(r.Via) > 0 {
		fmt.Fprintf(w, "%s: ran under %s\n", head, strings.Join(r.Via, " "))
	}
	if rep := r.Report; rep != nil {
		for _, v := range []string{rep.Version, rep.Compiler, rep.Platform} {
			fmt.Fprintf(w, "%s: %s\n", head, v)
		}
		for _, t := range rep.Tests {
			fmt.Fprintf(w, "%s: %s %s: %s\n", head, t.Status, t.Name, t.Detail)
		}
	}
	if r.Library.Compiler != "" && len(r.Problems) == 0 {
		fmt.Fprintf(w, "%s: build strings equal to %s's (as validation read them)\n", head, r.Slice.Libraries()[libcryptoIndex(r.Slice)])
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "%s: FAILED: %s\n", head, p)
	}
	if len(r.Problems) == 0 && r.Report != nil {
		fmt.Fprintf(w, "%s: ok: %d passed, %d skipped\n", head, r.Report.Passed, r.Report.Skipped)
	}
}

// summarise writes a slice's result as Markdown for the step summary.
func summarise(w io.Writer, name string, r SmokeResult) {
	status := "passed"
	switch {
	case len(r.Problems) > 0:
		status = "FAILED"
	case !r.Ran:
		status = "linked, not run"
	}
	fmt.Fprintf(w, "### smoke: %s %s: %s\n\n", name, r.Slice, status)
	if r.Linked.Linker != "" {
		fmt.Fprintf(w, "Linked `%s` with %s (%s, against %s).\n\n", SmokeProgram.Name, linkedLibraries(r.Slice), r.Linked.Linker, r.Linked.System)
	}
	if r.NotRun != "" {
		fmt.Fprintf(w, "%s\n\n", r.NotRun)
	}
	if rep := r.Report; rep != nil {
		fmt.Fprintf(w, "`%s`, `%s`, `%s`", md(rep.Version), md(rep.Compiler), md(rep.Platform))
		if len(r.Via) > 0 {
			fmt.Fprintf(w, ", run under `%s`", strings.Join(r.Via, " "))
		}
		fmt.Fprintf(w, "\n\n| test | result | detail |\n|---|---|---|\n")
		for _, t := range rep.Tests {
			fmt.Fprintf(w, "| %s | %s | %s |\n", md(t.Name), t.Status, md(t.Detail))
		}
		fmt.Fprintln(w)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "- **failed**: %s\n", md(p))
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(w)
	}
}

// linkedLibraries says what a slice's program links: "every member of
// libssl.a and libcrypto.a", or the shared libraries.
func linkedLibraries(s platform.Slice) string {
	if s.Shared == nil {
		return "every member of " + strings.Join(Libraries, " and ")
	}
	return strings.Join(dylibs(s), " and ")
}

// md keeps a value on one table row.
func md(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

// libcryptoIndex is where the library the program loads libcrypto from
// is among s.Libraries(): the dylib for a shared slice, else the archive.
func libcryptoIndex(s platform.Slice) int {
	libs := s.Libraries()
	if s.Shared != nil {
		return len(libs) - 2
	}
	return 0
}
