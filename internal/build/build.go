// Package build runs make on a configured OpenSSL tree: only the libraries
// (build_libs), then an install of libraries, headers, pkgconfig and cmake
// files (install_dev) into a staging DESTDIR; for a build that ships only
// shared libraries, without the static ones. It reports progress by counting
// compiled objects against the total the Makefile declares, keeps the full
// output in a log file, and stops make's whole process group on cancellation.
package build

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/osslbuild/osslbuild/internal/proc"
)

// Options for one make run.
type Options struct {
	Src      string   // configured source tree
	Env      []string // complete environment (configure.Env)
	Jobs     int      // make -j, when Shared is nil
	Shared   *Jobs    // a job budget shared with other builds (a jobserver)
	Objects  []string // objects build_libs compiles (from the Makefile), for progress
	Log      string   // path of the log file receiving make's full output
	Progress Progress // may be nil
	Stage    string   // DESTDIR for install_dev
	// SharedOnly leaves the static libraries out. With shared libraries
	// enabled OpenSSL compiles every library source twice, once for the
	// archives and once (-DOPENSSL_USE_NODELETE) for the shared objects,
	// and build_libs makes both; a build that ships only the shared ones
	// empties LIBS and INSTALL_LIBS (the static libraries build_libs and
	// install_dev name, in every series from 3.0) so that half is never
	// compiled. The providers' archives the shared libraries link are
	// their prerequisites, made all the same.
	SharedOnly bool
}

// staticLess are the make variables that leave the static libraries out.
var staticLess = []string{"LIBS=", "INSTALL_LIBS="}

// objRe finds the object a compile command produces; OpenSSL's rules end in
// "-c -o <obj> <src>".
var objRe = regexp.MustCompile(`\s-c\s+-o\s+(\S+\.o)\b`)

// Run builds the libraries and installs them into opts.Stage.
func Run(ctx context.Context, opts Options) error {
	if opts.Jobs < 1 {
		opts.Jobs = 1
	}
	logf, err := os.OpenFile(opts.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("build log: %w", err)
	}
	defer logf.Close()
	want := make(map[string]bool, len(opts.Objects))
	for _, o := range opts.Objects {
		want[o] = true
	}
	prog := opts.Progress
	if prog == nil {
		prog = nopProgress{}
	}
	prog.Start(len(opts.Objects))
	done := map[string]bool{}
	var mu sync.Mutex
	onLine := func(line string) {
		m := objRe.FindStringSubmatch(line)
		if m == nil || !want[m[1]] {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !done[m[1]] {
			done[m[1]] = true
			prog.Step(m[1])
		}
	}
	jobs := "-j" + strconv.Itoa(opts.Jobs)
	if opts.Shared != nil {
		jobs = "" // from MAKEFLAGS: the shared jobserver
	}
	var vars []string
	if opts.SharedOnly {
		vars = staticLess
	}
	err = runMake(ctx, opts, logf, onLine, slices.Concat([]string{jobs}, vars, []string{"build_libs"})...)
	prog.Finish(err)
	if err != nil {
		return err
	}
	// install_dev depends on build_libs, which is now up to date; -j1 keeps
	// its copy loops ordered in the log.
	return runMake(ctx, opts, logf, nil, slices.Concat([]string{"DESTDIR=" + opts.Stage}, vars, []string{"install_dev"})...)
}

func runMake(ctx context.Context, opts Options, logf *os.File, onLine func(string), args ...string) error {
	args = slices.DeleteFunc(args, func(a string) bool { return a == "" })
	env, extra := opts.Env, []*os.File(nil)
	if j := opts.Shared; j != nil {
		flags, err := makeflags(ctx, opts.Env)
		if err != nil {
			return err
		}
		if err := j.acquire(ctx); err != nil {
			return fmt.Errorf("make %s: %w", args[len(args)-1], err)
		}
		defer j.release()
		env = append(slices.Clone(env), "MAKEFLAGS="+flags)
		extra = []*os.File{j.r, j.w}
		fmt.Fprintf(logf, "+ MAKEFLAGS=%q (shared budget of %d jobs)\n", flags, j.Total)
	}
	fmt.Fprintf(logf, "+ make %s\n", strings.Join(args, " "))
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if onLine != nil {
				onLine(line)
			}
		}
		io.Copy(logf, pr) // a line over 4 MiB: keep the rest unparsed
	}()
	err := proc.Run(ctx, proc.Cmd{Args: append([]string{"make"}, args...), Dir: opts.Src, Env: env, Stdout: pw, Stderr: pw, ExtraFiles: extra})
	pw.Close()
	wg.Wait()
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("make %s: interrupted (log: %s): %w", args[len(args)-1], opts.Log, err)
		}
		return &Error{Target: args[len(args)-1], Log: opts.Log, Tail: tail(opts.Log, 30), Err: err}
	}
	return nil
}

// Error is a failed make, carrying the log's last lines and its path.
type Error struct {
	Target string
	Log    string
	Tail   string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("make %s failed: %v\n--- last lines of %s ---\n%s", e.Target, e.Err, e.Log, e.Tail)
}

func (e *Error) Unwrap() error { return e.Err }

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
