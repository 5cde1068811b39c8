package build

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/osslbuild/osslbuild/internal/proc"
)

// Jobs is one job budget shared by every make run that uses it: a GNU make
// jobserver (a pipe holding one byte per free job slot). build:universal2
// gives both slices the same Jobs, so when one slice is configuring,
// archiving or done, the other's make uses the free cores; the total never
// exceeds the budget.
//
// Each make process starts holding one implicit slot, so osslbuild takes a
// token from the pipe before starting one and puts it back when it exits;
// make and its sub-makes take and return the rest themselves.
type Jobs struct {
	Total int
	r, w  *os.File
	once  sync.Once
}

// NewJobs creates a budget of total jobs.
func NewJobs(total int) (*Jobs, error) {
	total = max(total, 1)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("jobserver: %w", err)
	}
	if _, err := w.Write([]byte(strings.Repeat("+", total))); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("jobserver: %w", err)
	}
	return &Jobs{Total: total, r: r, w: w}, nil
}

// Close releases the pipe.
func (j *Jobs) Close() {
	j.once.Do(func() { j.r.Close(); j.w.Close() })
}

// acquire takes one slot, waiting for one to be free.
func (j *Jobs) acquire(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		b := make([]byte, 1)
		_, err := j.r.Read(b)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("jobserver: %w", err)
		}
		return nil
	case <-ctx.Done():
		// The pending read may still take a token later; it is lost with
		// the budget, which is being torn down anyway.
		return ctx.Err()
	}
}

func (j *Jobs) release() { j.w.Write([]byte("+")) }

var makeVersionRe = regexp.MustCompile(`GNU Make ([0-9]+)\.([0-9]+)`)

// makeflags is MAKEFLAGS telling make to use the jobserver on fds 3 and 4:
// GNU make 4.x reads --jobserver-auth, 3.81 (macOS's /usr/bin/make)
// --jobserver-fds.
func makeflags(ctx context.Context, env []string) (string, error) {
	out, err := proc.Output(ctx, proc.Cmd{Args: []string{"make", "--version"}, Env: env})
	if err != nil {
		return "", fmt.Errorf("jobserver: %w", err)
	}
	m := makeVersionRe.FindStringSubmatch(string(out))
	if m == nil {
		l, _, _ := strings.Cut(string(out), "\n")
		return "", fmt.Errorf("jobserver: not GNU make: %q", l)
	}
	if major, _ := strconv.Atoi(m[1]); major < 4 {
		return "-j --jobserver-fds=3,4", nil
	}
	return "-j --jobserver-auth=3,4", nil
}
