// Package python finds what a Python installation holds of OpenSSL, by
// asking the interpreter itself: its _ssl and _hashlib modules, the
// libcrypto and libssl the running process has mapped (Linux's
// /proc/self/maps, macOS's loaded-image list; not ldd, which reads the
// files' wishes rather than what the loader did), cryptography's extension
// modules, and its site-packages, where any other extension module that
// embeds OpenSSL or a fork lies. Package check judges them.
package python

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/osslbuild/osslbuild/internal/check"
	"github.com/osslbuild/osslbuild/internal/report"
)

// probe runs inside the interpreter and prints what it finds as JSON.
// It imports the modules first, so that the libraries they load are
// mapped when the image list is read.
const probe = `
import json, os, sys, sysconfig
out = {"probe": sys.argv[1], "version": sys.version.split()[0], "executable": sys.executable, "modules": {}, "loaded": [], "dirs": [], "errors": []}
for name in ("_ssl", "_hashlib"):
    try:
        out["modules"][name] = __import__(name).__file__
    except Exception as e:
        out["errors"].append("%s: %s" % (name, e))
try:
    import ssl
    out["openssl"] = ssl.OPENSSL_VERSION
except Exception as e:
    out["errors"].append("ssl: %s" % e)
try:
    import cryptography.hazmat.bindings._rust as rust
    out["modules"]["cryptography"] = rust.__file__
except Exception as e:
    out["errors"].append("cryptography: %s" % e)
paths = sysconfig.get_paths()
for key in ("purelib", "platlib"):
    p = paths.get(key)
    if p and os.path.isdir(p) and p not in out["dirs"]:
        out["dirs"].append(p)
if sys.platform.startswith("linux"):
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/"):
                p = parts[5].strip()
                if p not in out["loaded"]:
                    out["loaded"].append(p)
elif sys.platform == "darwin":
    import ctypes
    dyld = ctypes.CDLL(None)
    dyld._dyld_get_image_name.restype = ctypes.c_char_p
    for i in range(dyld._dyld_image_count()):
        p = dyld._dyld_get_image_name(i).decode()
        if p not in out["loaded"]:
            out["loaded"].append(p)
print(json.dumps(out))
`

// Install is what the probe found.
type Install struct {
	Probe      string            `json:"probe"` // the nonce the probe was given: proof the answer is its own
	Version    string            `json:"version"`
	Executable string            `json:"executable"`
	OpenSSL    string            `json:"openssl"` // ssl.OPENSSL_VERSION: what _ssl reports at run time
	Modules    map[string]string `json:"modules"` // _ssl, _hashlib, cryptography: their files
	Loaded     []string          `json:"loaded"`  // every file the process maps
	Dirs       []string          `json:"dirs"`    // site-packages
	Errors     []string          `json:"errors"`  // modules that would not import
}

// Limits on the interpreter: it is a program named by the user, possibly
// a wrapper or a hostile one, and osslcheck must end whatever it does.
const (
	// DefaultTimeout is how long the interpreter may run (-python-timeout):
	// importing ssl and cryptography takes well under a second.
	DefaultTimeout = 60 * time.Second
	// MaxOutput caps what is kept of its stdout and of its stderr each:
	// the probe's answer is a few KiB (a few hundred mapped files).
	MaxOutput = 4 << 20
)

// ErrInterpreter marks every way the interpreter failed to give the
// probe's answer: not found, no exit within the deadline, too much
// output, output that is not the probe's, an exit status.
var ErrInterpreter = errors.New("python interpreter")

// Probe runs the interpreter (default python3, found on PATH) and reports
// what it holds. It gives the interpreter timeout (DefaultTimeout when 0)
// and MaxOutput bytes of stdout and of stderr; past either, the
// interpreter's process group is killed. Its answer must be the probe's
// own JSON document, carrying the nonce the probe was given.
func Probe(ctx context.Context, interpreter string, timeout time.Duration) (*Install, error) {
	interpreter = cmp.Or(interpreter, "python3")
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	exe, err := exec.LookPath(interpreter)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w (give one: -python /path/to/python)", ErrInterpreter, interpreter, err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrInterpreter, exe, fmt.Sprintf(format, args...))
	}
	nonce := rand.Text() // 128 random bits

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	runCtx, stop := context.WithTimeoutCause(runCtx, timeout, errDeadline)
	defer stop()
	stdout := &capped{name: "stdout", over: cancel}
	stderr := &capped{name: "stderr", over: cancel}
	cmd := exec.CommandContext(runCtx, exe, "-c", probe, nonce)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	// A process group of its own, killed whole: a wrapper script's
	// children (a sleep, a printer) end with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A child that escaped the group but holds the pipes open does not
	// keep Wait waiting.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what outlived the leader
	}
	switch cause := context.Cause(runCtx); {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w %s: %w", ErrInterpreter, exe, context.Cause(ctx))
	case errors.Is(cause, errDeadline):
		return nil, fail("no exit within %v (-python-timeout): killed its process group", timeout)
	case errors.Is(cause, errTooMuch):
		return nil, fail("%v: killed its process group", cause)
	case err != nil:
		msg := lastLine(stderr.buf.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fail("exited with %v: %q", ee.ProcessState, msg)
		}
		return nil, fail("running it failed: %v: %q", err, msg)
	}
	dec := json.NewDecoder(bytes.NewReader(stdout.buf.Bytes()))
	dec.DisallowUnknownFields()
	var in Install
	if err := dec.Decode(&in); err != nil {
		return nil, fail("its answer is not the probe's JSON (%v): %.200q", err, stdout.buf.String())
	}
	if dec.More() {
		return nil, fail("its answer is not the probe's JSON (more after the document): %.200q", stdout.buf.String())
	}
	if in.Probe != nonce || in.Version == "" {
		return nil, fail("its answer is not the probe's (nonce %q, version %q; the probe gives the nonce %s and a version): %.200q", in.Probe, in.Version, nonce, stdout.buf.String())
	}
	in.Executable = cmp.Or(in.Executable, exe)
	return &in, nil
}

var (
	errDeadline = errors.New("deadline")
	errTooMuch  = errors.New("too much output")
)

// capped keeps up to MaxOutput bytes written to it; the first write past
// them calls over, which kills the interpreter, and fails.
type capped struct {
	name string
	buf  bytes.Buffer
	over func(error)
}

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > MaxOutput {
		err := fmt.Errorf("%w: more than %d bytes on %s", errTooMuch, MaxOutput, c.name)
		c.over(err)
		return 0, err
	}
	return c.buf.Write(p)
}

// lastLine is the last line of s (a traceback's exception), at most 500
// bytes of it.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	s = s[strings.LastIndexByte(s, '\n')+1:] // -1 without a newline: all of s
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return s
}

// Paths are the files and directories of in that check judges: the
// modules, the mapped libraries named libcrypto or libssl (and the
// forks' own: libboringssl, the AWS-LC libcrypto), and site-packages. A
// module inside a listed directory is found there and not listed again.
func (in *Install) Paths() []string {
	var out []string
	add := func(f string) {
		inside := slices.ContainsFunc(in.Dirs, func(d string) bool { return strings.HasPrefix(f, d+string(filepath.Separator)) })
		if f != "" && !inside && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, name := range []string{"_ssl", "_hashlib", "cryptography"} {
		add(in.Modules[name])
	}
	for _, p := range in.Loaded {
		base := filepath.Base(p)
		if strings.HasPrefix(base, "libcrypto") || strings.HasPrefix(base, "libssl") || strings.HasPrefix(base, "libboringssl") {
			add(p)
		}
	}
	return append(out, in.Dirs...)
}

// Run audits the installation of interpreter as check audits a path, with
// o's policy and output: every path of Paths, one verdict. timeout is
// Probe's.
// Its errors, like check.Run's, are safe to print under GitHub Actions: an
// interpreter path or a module's error message is outside text.
func Run(ctx context.Context, interpreter string, timeout time.Duration, o check.Options) error {
	in, err := Probe(ctx, interpreter, timeout)
	if err != nil {
		return report.SafeError(o.Env, err)
	}
	paths := in.Paths()
	if len(paths) == 0 {
		return report.SafeError(o.Env, errors.New("python "+in.Executable+": no module, library or site-packages directory to check"))
	}
	label := fmt.Sprintf("%s (Python %s", in.Executable, in.Version)
	if in.OpenSSL != "" {
		label += ", ssl: " + in.OpenSSL
	}
	label += ")"
	return check.RunPaths(ctx, o, label, paths)
}
