// Package toolchain provides the compilers and archive tools a build runs,
// behind one interface with two implementations: native macOS (Xcode's tools
// via xcrun) and Linux cross (Debian's clang-14 and llvm-14 with macOS
// headers). Both present the build with the same thing: a directory of
// wrappers named cc, ar, ranlib and lipo placed first on PATH. OpenSSL then
// invokes plain "cc", so the compiler line embedded in libcrypto reads the
// same on either host and carries no machine path.
package toolchain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/toolid"
)

// Toolchain prepares the tools for one target and merges slices.
type Toolchain interface {
	// Kind is the toolchain's name in the platform table: "macos",
	// "cross" or "linux".
	Kind() string
	// Prepare writes the wrapper directory for slice s into dir (which
	// must not exist) and returns what the build environment needs.
	Prepare(ctx context.Context, dir string, s platform.Slice) (Env, error)
	// Lipo merges thin files into the universal file output.
	Lipo(ctx context.Context, output string, inputs ...string) error
	// InstallNames sets a thin Mach-O dylib's install name (id) and
	// renames the dylibs it loads (change: old name to new), in place. A
	// code signature may be left stale (Apple's install_name_tool leaves
	// it); the caller signs the file again.
	InstallNames(ctx context.Context, path, id string, change map[string]string) error
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

// Identity records exactly which tools built an artifact (package
// toolid holds the type, so that reading a manifest needs no toolchain).
type Identity = toolid.Identity

// For returns the toolchain that builds slice s on this host, as the
// platform table says. kind (else OSSLBUILD_TOOLCHAIN), when given, picks
// one of the toolchains the slice's row lists; it does not bear on a row
// that lists no toolchain of that kind.
func For(kind string, s platform.Slice) (Toolchain, error) {
	b, err := Choose(kind, s)
	if err != nil {
		return nil, err
	}
	return Of(b)
}

// Choose is the platform table's build of slice s on this host.
func Choose(kind string, s platform.Slice) (platform.Build, error) {
	kind, err := chosenKind(kind)
	if err != nil {
		return platform.Build{}, err
	}
	p, err := platform.Lookup(s)
	if err != nil {
		return platform.Build{}, fmt.Errorf("toolchain for %s: %w", s.Name, err)
	}
	return p.Build(kind, Host())
}

// New returns the toolchain of kind ("" for OSSLBUILD_TOOLCHAIN, else the
// host's default for the platforms that merge into universal artifacts:
// Xcode's on a Mac, the cross toolchain elsewhere). It is what a merge
// (lipo) and the tests that need a toolchain by name use.
func New(kind string) (Toolchain, error) {
	kind, err := chosenKind(kind)
	if err != nil {
		return nil, err
	}
	if kind != "" {
		return Of(platform.Build{Toolchain: kind})
	}
	for _, p := range platform.All() {
		if p.Universal != "" {
			b, err := p.Build("", Host())
			if err != nil {
				return nil, err
			}
			return Of(b)
		}
	}
	return nil, fmt.Errorf("toolchain: the platform table has no universal platform")
}

// Of constructs the toolchain b names.
func Of(b platform.Build) (Toolchain, error) {
	switch b.Toolchain {
	case "macos":
		if runtime.GOOS != "darwin" {
			return nil, fmt.Errorf("toolchain macos: needs a Mac with the Xcode command line tools (this host is %s); use the cross toolchain", runtime.GOOS)
		}
		return MacOS(Xcrun), nil
	case "cross":
		return newCross()
	case "linux":
		return newLinux(b.Target)
	}
	return nil, fmt.Errorf("toolchain %q: want %s", b.Toolchain, strings.Join(platform.Toolchains(), ", "))
}

// chosenKind is kind, else OSSLBUILD_TOOLCHAIN; a name no row of the
// platform table uses is an error.
func chosenKind(kind string) (string, error) {
	kind = cmp.Or(kind, os.Getenv("OSSLBUILD_TOOLCHAIN"))
	if kind != "" && !slices.Contains(platform.Toolchains(), kind) {
		return "", fmt.Errorf("toolchain %q: want one of %s", kind, strings.Join(platform.Toolchains(), ", "))
	}
	return kind, nil
}

// Host is this machine as the platform table names hosts: GOOS/GOARCH.
func Host() string { return runtime.GOOS + "/" + runtime.GOARCH }

// buildOf is the build of kind that slice s's row lists: a toolchain asked
// to build or link a slice the table does not give it refuses, naming it.
func buildOf(kind string, s platform.Slice) (platform.Platform, platform.Build, error) {
	p, err := platform.Lookup(s)
	if err != nil {
		return p, platform.Build{}, fmt.Errorf("%s toolchain: target %s: %w", kind, s.Name, err)
	}
	for _, b := range p.Builds {
		if b.Toolchain == kind {
			return p, b, nil
		}
	}
	return p, platform.Build{}, fmt.Errorf("%s toolchain: target %s is for %s %s, which it does not build", kind, s.Name, s.OS, s.Arch)
}

// shellQuote quotes s for a /bin/sh script.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=+,:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// execs is a wrapper's line running argv with the wrapper's arguments.
func execs(argv ...string) string { return "exec " + quoteAll(argv) + ` "$@"` + "\n" }

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// writeBin creates the wrapper directory dir/bin and writes the wrappers
// (name to script body) into it; errors name the toolchain (who). The
// directory must be new so nothing in it can be a link planted elsewhere.
func writeBin(dir, who string, wrappers map[string]string) (string, error) {
	bin := filepath.Join(dir, "bin")
	if err := cmp.Or(os.MkdirAll(dir, 0o755), os.Mkdir(bin, 0o755)); err != nil {
		return "", fmt.Errorf("toolchain dir: %w", err)
	}
	for name, body := range wrappers {
		// O_EXCL: a wrapper is never written through an existing path
		// (writing to a symlink to /usr/bin/llvm-ar-14 would overwrite
		// the system tool).
		f, err := os.OpenFile(filepath.Join(bin, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
		if err != nil {
			return "", fmt.Errorf("%s: write wrapper: %w", who, err)
		}
		_, err = f.WriteString("#!/bin/sh\n" + body)
		if err = cmp.Or(err, f.Close()); err != nil {
			return "", fmt.Errorf("%s: write wrapper %s: %w", who, f.Name(), err)
		}
	}
	return bin, nil
}

// installNames runs install_name_tool's command line: -id, then each
// -change in the order of the old names (so the command is the same on
// every run).
func installNames(ctx context.Context, tool, path, id string, change map[string]string) error {
	args := []string{tool, "-id", id}
	for _, old := range slices.Sorted(maps.Keys(change)) {
		args = append(args, "-change", old, change[old])
	}
	if _, err := proc.Output(ctx, proc.Cmd{Args: append(args, path), Env: []string{"PATH=/usr/bin:/bin"}}); err != nil {
		return fmt.Errorf("install names of %s: %w", filepath.Base(path), err)
	}
	return nil
}
