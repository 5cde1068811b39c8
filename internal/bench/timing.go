package bench

// Build time: what osslbuild costs in CI minutes against the shell step it
// replaces, side by side on the same machine and toolchain: interleaved A/B
// rounds, medians, ratios and CPU utilisation. Each side runs as a process
// of its own; wait4 reports its CPU time including every compiler it ran.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// Sample is one timed run.
type Sample struct {
	Wall      time.Duration
	User, Sys time.Duration
}

// Util is CPU utilisation: (user+sys) / (wall x cores).
func (s Sample) Util(cores int) float64 {
	return float64(s.User+s.Sys) / (float64(s.Wall) * float64(cores))
}

// Comparison is the samples of two sides.
type Comparison struct {
	Name    string // comparison
	A, B    string // case names
	SA, SB  []Sample
	Cores   int
	Comment string
}

// medianSample is the median wall time and the median CPU times of s.
func medianSample(s []Sample) Sample {
	var wall, user, sys []float64
	for _, x := range s {
		wall = append(wall, float64(x.Wall))
		user = append(user, float64(x.User))
		sys = append(sys, float64(x.Sys))
	}
	return Sample{Wall: time.Duration(Median(wall)), User: time.Duration(Median(user)), Sys: time.Duration(Median(sys))}
}

// Row renders the result as a Markdown table row.
func (r Comparison) Row() string {
	a, b := medianSample(r.SA), medianSample(r.SB)
	return fmt.Sprintf("| %s | %s: %s (%.0f%% CPU) | %s: %s (%.0f%% CPU) | %.2f | %d |",
		r.Name, r.A, round(a.Wall), 100*a.Util(r.Cores), r.B, round(b.Wall), 100*b.Util(r.Cores),
		float64(a.Wall)/float64(b.Wall), len(r.SA))
}

// Header is the Markdown table header for Row.
const Header = "| comparison | A (median wall, CPU utilisation) | B (median wall, CPU utilisation) | A/B wall | rounds |\n|---|---|---|---|---|"

func round(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Command runs argv in dir as one process, with env, and measures it.
func Command(ctx context.Context, dir string, env []string, log io.Writer, argv ...string) (Sample, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := Sample{Wall: wall}
	if ru != nil {
		s.User = time.Duration(ru.Utime.Nano())
		s.Sys = time.Duration(ru.Stime.Nano())
	}
	return s, nil
}

// Interleave runs A and B alternately for rounds rounds (A,B,A,B...), each in
// a fresh directory under root, so drift in machine load hits both sides.
func Interleave(ctx context.Context, name string, rounds int, root string, a, b func(ctx context.Context, dir string) (Sample, error), an, bn string) (Comparison, error) {
	r := Comparison{Name: name, A: an, B: bn, Cores: runtime.NumCPU()}
	for i := 0; i < rounds; i++ {
		for _, side := range []struct {
			f   func(context.Context, string) (Sample, error)
			dst *[]Sample
			tag string
		}{{a, &r.SA, "a"}, {b, &r.SB, "b"}} {
			dir := filepath.Join(root, fmt.Sprintf("%s-%s-%d", name, side.tag, i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return r, err
			}
			s, err := side.f(ctx, dir)
			if err != nil {
				return r, fmt.Errorf("%s round %d (%s): %w", name, i+1, side.tag, err)
			}
			*side.dst = append(*side.dst, s)
			os.RemoveAll(dir)
		}
	}
	return r, nil
}

// Reference writes the shell sequence pyca's workflow runs for one target,
// transliterated to osslbuild's toolchain and flags but WITHOUT the CFLAGS
// bug (the flags go on the Configure command line), so both sides compile
// the same code at -O3: unpack, Configure, make -jN, make install_sw.
// The script takes the tarball, the toolchain bin dir and jobs as $1..$3.
func Reference(p *recipe.Plan) string {
	args := configure.Args(p)
	var b bytes.Buffer
	b.WriteString("#!/bin/sh\n# pyca/infra build-macos-openssl.yml, one slice, transliterated.\nset -e\n")
	b.WriteString("tar xzf \"$1\"\ncd openssl-" + p.Release.Version + "\n")
	b.WriteString("PATH=\"$2:$PATH\"\n")
	b.WriteString(strings.Join(args, " ") + " >/dev/null\n")
	b.WriteString("make -j\"$3\" >/dev/null\nmake install_sw DESTDIR=\"$PWD/../artifact\" >/dev/null\n")
	return b.String()
}
