// Package proc runs external processes the one way osslbuild runs them: with
// an explicit argv (never a shell, so "$" in an argument stays literal), an
// explicit environment, and in a process group of their own that is killed as
// a whole when the context ends, so Ctrl-C or a timeout never leaves a make or
// compiler running.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Cmd describes one process.
type Cmd struct {
	Args   []string // Args[0] is looked up in Env's PATH if it has no slash
	Dir    string
	Env    []string // the complete environment; nil means an empty one
	Stdout io.Writer
	Stderr io.Writer
	// ExtraFiles become the child's fds 3, 4, ... (a make jobserver's pipe).
	ExtraFiles []*os.File
}

// Grace is how long a process group gets between SIGTERM and SIGKILL.
var Grace = 3 * time.Second

// Run runs c and waits. On context cancellation the whole process group gets
// SIGTERM, then SIGKILL after Grace.
func Run(ctx context.Context, c Cmd) error {
	if len(c.Args) == 0 {
		return errors.New("proc: empty command")
	}
	path, err := lookPath(c.Args[0], c.Env)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, c.Args[1:]...)
	cmd.Args[0] = c.Args[0]
	cmd.Dir = c.Dir
	cmd.Env = append([]string{}, c.Env...) // never nil: nil would inherit ours
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	cmd.ExtraFiles = c.ExtraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Negative pid: the whole group (make and every compiler it started).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		go func(pid int) {
			time.Sleep(Grace)
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = Grace + time.Second
	err = cmd.Run()
	// Reap stragglers that ignored the group's SIGTERM or outlived the leader.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", c.Args[0], ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(c.Args, " "), err)
	}
	return nil
}

// Output runs c and returns its stdout; stderr is included in the error.
func Output(ctx context.Context, c Cmd) ([]byte, error) {
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := Run(ctx, c)
	// The last 20 lines of stderr, when it has any.
	if lines := strings.Split(strings.TrimSpace(errb.String()), "\n"); err != nil && lines[0] != "" {
		err = fmt.Errorf("%w: %s", err, strings.Join(lines[max(len(lines)-20, 0):], "\n"))
	}
	return out.Bytes(), err
}

// lookPath resolves name against the PATH in env (not the caller's PATH: the
// constructed environment decides which tools run).
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range strings.Split(p, ":") {
				if dir == "" {
					continue
				}
				if path, err := exec.LookPath(dir + "/" + name); err == nil {
					return path, nil
				}
			}
			return "", fmt.Errorf("%s: not found in PATH=%s: %w", name, p, exec.ErrNotFound)
		}
	}
	return exec.LookPath(name)
}
