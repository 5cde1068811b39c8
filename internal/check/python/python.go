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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/check"
	"github.com/osslbuild/osslbuild/internal/report"
)

// probe runs inside the interpreter and prints what it finds as JSON.
// It imports the modules first, so that the libraries they load are
// mapped when the image list is read.
const probe = `
import json, os, sys, sysconfig
out = {"version": sys.version.split()[0], "executable": sys.executable, "modules": {}, "loaded": [], "dirs": [], "errors": []}
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
	Version    string            `json:"version"`
	Executable string            `json:"executable"`
	OpenSSL    string            `json:"openssl"` // ssl.OPENSSL_VERSION: what _ssl reports at run time
	Modules    map[string]string `json:"modules"` // _ssl, _hashlib, cryptography: their files
	Loaded     []string          `json:"loaded"`  // every file the process maps
	Dirs       []string          `json:"dirs"`    // site-packages
	Errors     []string          `json:"errors"`  // modules that would not import
}

// Probe runs the interpreter (default python3, found on PATH) and reports
// what it holds.
func Probe(ctx context.Context, interpreter string) (*Install, error) {
	if interpreter == "" {
		interpreter = "python3"
	}
	exe, err := exec.LookPath(interpreter)
	if err != nil {
		return nil, fmt.Errorf("python interpreter %s: %w (give one: -python /path/to/python)", interpreter, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, "-c", probe)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("python interpreter %s: running it failed: %w: %s", exe, err, msg)
	}
	var in Install
	if err := json.Unmarshal(stdout.Bytes(), &in); err != nil {
		return nil, fmt.Errorf("python interpreter %s: its answer is not the probe's JSON (%v): %.200q", exe, err, stdout.String())
	}
	if in.Executable == "" {
		in.Executable = exe
	}
	return &in, nil
}

// Paths are the files and directories of in that check judges: the
// modules, the mapped libraries named libcrypto or libssl (and the
// forks' own: libboringssl, the AWS-LC libcrypto), and site-packages. A
// module inside a listed directory is found there and not listed again.
func (in *Install) Paths() []string {
	var files []string
	for _, name := range []string{"_ssl", "_hashlib", "cryptography"} {
		if p := in.Modules[name]; p != "" {
			files = append(files, p)
		}
	}
	for _, p := range in.Loaded {
		base := filepath.Base(p)
		if strings.HasPrefix(base, "libcrypto") || strings.HasPrefix(base, "libssl") || strings.HasPrefix(base, "libboringssl") {
			files = append(files, p)
		}
	}
	var out []string
	for _, f := range files {
		inside := slices.ContainsFunc(in.Dirs, func(d string) bool { return strings.HasPrefix(f, d+string(filepath.Separator)) })
		if !inside && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return append(out, in.Dirs...)
}

// Run audits the installation of interpreter as check audits a path, with
// o's policy and output: every path of Paths, one verdict.
// Its errors, like check.Run's, are safe to print under GitHub Actions: an
// interpreter path or a module's error message is outside text.
func Run(ctx context.Context, interpreter string, o check.Options) error {
	in, err := Probe(ctx, interpreter)
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
