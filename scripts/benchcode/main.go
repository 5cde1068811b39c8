// Command benchcode times the code classifier (codeclass.EvidenceFile)
// against `strings -a FILE | grep -E '^(compiler|platform): '`, each as a
// whole process, alternating A, B, A, B... so drift in the machine hits
// both, and prints a Markdown report for bench/.
//
//	go build -o /tmp/benchcode ./scripts/benchcode
//	/tmp/benchcode -rounds 21 path/to/libcrypto.a
//
// With -classify it is the process being timed: it classifies the files
// and prints one line per slice.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
)

func main() {
	classify := flag.Bool("classify", false, "classify the files and print the verdicts (the process being timed)")
	rounds := flag.Int("rounds", 21, "runs of each side")
	profile := flag.String("cpuprofile", "", "with -classify: write a CPU profile to this file")
	flag.Parse()
	if flag.NArg() != 1 && !*classify || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchcode [-rounds N] FILE | benchcode -classify FILE...")
		os.Exit(2)
	}
	if *classify {
		if *profile != "" {
			f, err := os.Create(*profile)
			if err == nil {
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
		}
		for _, p := range flag.Args() {
			vs, err := codeclass.EvidenceFile(context.Background(), p)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				pprof.StopCPUProfile()
				os.Exit(1)
			}
			for _, v := range vs {
				fmt.Printf("%s %s\n", p, v)
			}
		}
		return
	}
	if err := bench(flag.Arg(0), *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "benchcode:", err)
		os.Exit(1)
	}
}

type sample struct{ wall, cpu time.Duration }

// run times one process: wall from here, user+sys from wait4 (which
// includes its children: strings and grep for the shell pipeline).
func run(args []string) (sample, string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, "", fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return sample{wall, cpu}, out.String(), nil
}

func median(s []sample) sample {
	w := make([]time.Duration, len(s))
	c := make([]time.Duration, len(s))
	for i, x := range s {
		w[i], c[i] = x.wall, x.cpu
	}
	slices.Sort(w)
	slices.Sort(c)
	return sample{w[len(w)/2], c[len(c)/2]}
}

func bench(file string, rounds int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return err
	}
	sides := []struct {
		name string
		args []string
	}{
		{"code evidence (benchcode -classify)", []string{self, "-classify", abs}},
		{"strings -a | grep", []string{"/bin/sh", "-c", `strings -a "$1" | grep -E '^(compiler|platform): '`, "sh", abs}},
	}
	// One warm-up run each: the file in the page cache, the binaries too.
	var verdicts string
	for i, s := range sides {
		_, out, err := run(s.args)
		if err != nil {
			return err
		}
		if i == 0 {
			verdicts = out
		}
	}
	got := make([][]sample, len(sides))
	for r := 0; r < rounds; r++ {
		for i, s := range sides {
			x, _, err := run(s.args)
			if err != nil {
				return err
			}
			got[i] = append(got[i], x)
		}
	}
	a, b := median(got[0]), median(got[1])
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# Code evidence against strings | grep\n\n")
	fmt.Printf("- Date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Printf("- File: %s (%d bytes)\n", filepath.Base(abs), st.Size())
	fmt.Printf("- Machine: %d CPUs (%s/%s); load average after the run: %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("- Method: each side is a whole process; they alternate A, B, A, B for %d rounds after one warm-up run each; medians of wall time (from the parent) and CPU time (user+sys from wait4, children included).\n\n", rounds)
	fmt.Printf("| side | median wall | median CPU | wall / strings |\n|---|---|---|---|\n")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	fmt.Printf("| A: %s | %v | %v | %.2f |\n", cell(sides[0].name), a.wall.Round(time.Millisecond), a.cpu.Round(time.Millisecond), float64(a.wall)/float64(b.wall))
	fmt.Printf("| B: %s | %v | %v | 1.00 |\n\n", cell(sides[1].name), b.wall.Round(time.Millisecond), b.cpu.Round(time.Millisecond))
	fmt.Printf("Samples (wall/CPU), in run order:\n\n")
	for i, s := range sides {
		var xs []string
		for _, x := range got[i] {
			xs = append(xs, fmt.Sprintf("%v/%v", x.wall.Round(time.Millisecond), x.cpu.Round(time.Millisecond)))
		}
		fmt.Printf("- %s: %s\n", s.name, strings.Join(xs, ", "))
	}
	fmt.Printf("\nVerdicts:\n\n")
	for _, l := range strings.Split(strings.TrimSpace(verdicts), "\n") {
		fmt.Printf("    %s\n", strings.TrimPrefix(l, abs+" "))
	}
	return nil
}
