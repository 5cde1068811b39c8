// Package toolchain provides the compilers and archive tools a build runs,
// behind one interface with two implementations: native macOS (Xcode's tools
// via xcrun) and Linux cross (Debian's clang-14 and llvm-14 with macOS
// headers). Both present the build with the same thing: a directory of
// wrappers named cc, ar, ranlib and lipo placed first on PATH. OpenSSL then
// invokes plain "cc", so the compiler line embedded in libcrypto reads the
// same on either host and carries no machine path.
package toolchain

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/osslbuild/osslbuild/internal/recipe"
)

// Toolchain prepares the tools for one target and merges slices.
type Toolchain interface {
	// Kind is "macos", "cross" or "linux".
	Kind() string
	// Prepare writes the wrapper directory for target into dir (which must
	// not exist) and returns what the build environment needs.
	Prepare(ctx context.Context, dir string, t recipe.Target) (Env, error)
	// Lipo merges thin files into the universal file output.
	Lipo(ctx context.Context, output string, inputs ...string) error
	// Identity describes the tools, for manifests and cache keys.
	Identity(ctx context.Context) (Identity, error)
	// Link compiles a C program against an artifact's headers and links
	// it with every member of its static libraries and the system library
	// of one architecture and deployment target into an executable;
	// undefined symbols are errors. A failed step is a *LinkError; a
	// missing linker or stub wraps ErrSetup.
	Link(ctx context.Context, s LinkSpec) (Linked, error)
}

// Env is what a prepared toolchain adds to the build's environment.
type Env struct {
	Bin  string   // wrapper directory, first on PATH
	Vars []string // extra KEY=VALUE settings (e.g. ZERO_AR_DATE=1)
}

// Identity records exactly which tools built an artifact.
type Identity struct {
	Kind     string            `json:"kind"`
	Compiler string            `json:"compiler"`           // first line of "clang --version"
	SDK      string            `json:"sdk,omitempty"`      // macOS SDK version, or the headers package in cross mode
	SDKPath  string            `json:"sdk_path,omitempty"` // macOS: the SDK xcrun selected, given to clang as SDKROOT
	Tools    map[string]string `json:"tools,omitempty"`    // cc (macOS), ar, ranlib, lipo: path (and version in cross mode)
	Targets  map[string]string `json:"targets,omitempty"`  // per arch: clang -target used (cross)
}

// String is a one-line summary for logs.
func (id Identity) String() string {
	s := id.Kind + ": " + id.Compiler
	if id.SDK != "" {
		s += ", " + id.SDK
	}
	return s
}

// New returns the toolchain named kind: "macos", "cross", or "" for the
// host's default (macos on a Mac, cross elsewhere). OSSLBUILD_TOOLCHAIN
// overrides the default.
func New(kind string) (Toolchain, error) {
	if kind == "" {
		kind = os.Getenv("OSSLBUILD_TOOLCHAIN")
	}
	if kind == "" {
		kind = "cross"
		if runtime.GOOS == "darwin" {
			kind = "macos"
		}
	}
	switch kind {
	case "macos":
		if runtime.GOOS != "darwin" {
			return nil, fmt.Errorf("toolchain macos: needs a Mac with the Xcode command line tools (this host is %s); use the cross toolchain", runtime.GOOS)
		}
		return MacOS(Xcrun), nil
	case "cross":
		return newCross()
	}
	return nil, fmt.Errorf("toolchain %q: want macos or cross", kind)
}

// writeScript writes an executable wrapper at path. It refuses to write
// through an existing path: writing to a symlink to /usr/bin/llvm-ar-14
// would overwrite the system tool.
func writeScript(path, body string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("write wrapper: %w", err)
	}
	if _, err := f.WriteString("#!/bin/sh\n" + body); err != nil {
		f.Close()
		return fmt.Errorf("write wrapper %s: %w", path, err)
	}
	return f.Close()
}

// shellQuote quotes s for a /bin/sh script.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=+,:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// mkBin creates the wrapper directory; it must be new so nothing in it can
// be a link planted elsewhere.
func mkBin(dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("toolchain dir: %w", err)
	}
	if err := os.Mkdir(bin, 0o755); err != nil {
		return "", fmt.Errorf("toolchain dir: %w", err)
	}
	return bin, nil
}
