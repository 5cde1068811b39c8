package python

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid is a process that has not ended (a zombie
// has ended).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: kill(0) is all there is
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestProbeHostile: interpreters that do not behave end the probe with an
// error naming them, in bounded time and memory: one that never exits
// (its process group, a child included, is killed at the deadline), one
// that prints without end on stdout or on stderr, one whose answer is not
// the probe's (JSON of its own; the probe's followed by more), one that
// exits with a status. The scripts in testdata stand in for python.
func TestProbeHostile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		script  string
		env     []string
		timeout time.Duration
		want    string
	}{
		{"no exit", "sleeper", nil, time.Second, "no exit within 1s (-python-timeout): killed its process group"},
		{"endless stdout", "printer", nil, time.Minute, "too much output: more than 4194304 bytes on stdout: killed its process group"},
		{"endless stderr", "printer", []string{"HOSTILE_STREAM=stderr"}, time.Minute, "too much output: more than 4194304 bytes on stderr: killed its process group"},
		{"JSON of its own", "liar", nil, time.Minute, "its answer is not the probe's (nonce \"\""},
		{"the probe's JSON and more", "forger", nil, time.Minute, "its answer is not the probe's JSON (more after the document)"},
		{"an exit status", "crasher", nil, time.Minute, "exited with exit status 3: \"ModuleNotFoundError: No module named encodings\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exe, err := filepath.Abs(filepath.Join("testdata", tc.script))
			if err != nil {
				t.Fatal(err)
			}
			pids := filepath.Join(t.TempDir(), "pids")
			t.Setenv("HOSTILE_PIDS", pids)
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			start := time.Now()
			in, err := Probe(context.Background(), exe, tc.timeout)
			took := time.Since(start)
			if err == nil {
				t.Fatalf("accepted: %+v", in)
			}
			if !errors.Is(err, ErrInterpreter) || !strings.Contains(err.Error(), "python interpreter "+exe+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want ErrInterpreter naming %s and %q", err, exe, tc.want)
			}
			if took > tc.timeout+5*time.Second {
				t.Errorf("took %v", took)
			}
			if b, err := os.ReadFile(pids); err == nil {
				for _, f := range strings.Fields(string(b)) {
					pid, _ := strconv.Atoi(f)
					deadline := time.Now().Add(2 * time.Second)
					for alive(pid) && time.Now().Before(deadline) {
						time.Sleep(20 * time.Millisecond)
					}
					if alive(pid) {
						syscall.Kill(pid, syscall.SIGKILL)
						t.Errorf("process %d of the interpreter still runs after the probe returned", pid)
					}
				}
			}
		})
	}
}

// TestProbeCancel: the caller's cancellation ends the probe too, as the
// caller's error, not as the deadline.
func TestProbeCancel(t *testing.T) {
	exe, _ := filepath.Abs(filepath.Join("testdata", "sleeper"))
	t.Setenv("HOSTILE_PIDS", filepath.Join(t.TempDir(), "pids"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Probe(ctx, exe, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrInterpreter) || strings.Contains(err.Error(), "-python-timeout") {
		t.Errorf("err %v", err)
	}
}

// TestProbeRealPython: the real interpreter here answers the probe with
// its nonce (crypto/rand.Text: 26 characters), within the deadline.
func TestProbeRealPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	in, err := Probe(context.Background(), "python3", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(in.Version, "3.") || len(in.Probe) != 26 || in.Modules["_ssl"] == "" || len(in.Loaded) == 0 {
		t.Errorf("%+v", in)
	}
}
