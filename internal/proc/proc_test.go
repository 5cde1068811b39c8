package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunLiteralArgs(t *testing.T) {
	// "$HOME" must reach the child unexpanded: no shell is involved.
	out, err := Output(context.Background(), Cmd{Args: []string{"printf", "%s", "$HOME"}, Env: []string{"PATH=/usr/bin:/bin", "HOME=/nowhere"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "$HOME" {
		t.Errorf("got %q", out)
	}
}

func TestRunEnvIsExplicit(t *testing.T) {
	t.Setenv("CFLAGS", "-O0")
	out, err := Output(context.Background(), Cmd{Args: []string{"env"}, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "CFLAGS") {
		t.Errorf("inherited environment leaked: %s", out)
	}
}

func TestRunErrorCarriesStderr(t *testing.T) {
	_, err := Output(context.Background(), Cmd{Args: []string{"sh", "-c", "echo boom >&2; exit 3"}, Env: []string{"PATH=/usr/bin:/bin"}})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("error without stderr: %v", err)
	}
}

func TestRunNotFound(t *testing.T) {
	err := Run(context.Background(), Cmd{Args: []string{"no-such-tool-xyz"}, Env: []string{"PATH=/usr/bin"}})
	if err == nil || !strings.Contains(err.Error(), "no-such-tool-xyz") {
		t.Errorf("got %v", err)
	}
}

// TestCancelKillsGroup starts a shell that starts a grandchild ignoring
// nothing special; cancelling must kill both.
func TestCancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Cmd{Args: []string{"sh", "-c", "sleep 300 & echo $! > " + pidfile + "; wait"}, Env: []string{"PATH=/usr/bin:/bin"}})
	}()
	var pid int
	for i := 0; i < 200 && pid == 0; i++ {
		time.Sleep(10 * time.Millisecond)
		if b, err := os.ReadFile(pidfile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if pid == 0 {
		t.Fatal("grandchild never started")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("want context.Canceled, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	// The grandchild (sleep) must be gone too.
	for i := 0; i < 100; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("grandchild %d still alive after cancel", pid)
}
