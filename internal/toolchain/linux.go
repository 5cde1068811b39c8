package toolchain

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/osslbuild/osslbuild/internal/recipe"
)

// linux is the native toolchain for Linux targets (pyca's manylinux builds,
// and the library benchmarks, which must run the code they measure): the
// host's cc, ar and ranlib, behind the same wrapper directory.
type linux struct {
	cc, ar, ranlib string
}

func newLinux() (*linux, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("toolchain linux: Linux targets are built on Linux (this host is %s)", runtime.GOOS)
	}
	l := &linux{}
	for _, t := range []struct {
		name string
		dst  *string
	}{{"cc", &l.cc}, {"ar", &l.ar}, {"ranlib", &l.ranlib}} {
		p, err := exec.LookPath(t.name)
		if err != nil {
			return nil, fmt.Errorf("toolchain linux: %s not found on PATH (apt-get install gcc binutils)", t.name)
		}
		*t.dst = p
	}
	return l, nil
}

func (l *linux) Kind() string { return "linux" }

func (l *linux) Prepare(ctx context.Context, dir string, t recipe.Target) (Env, error) {
	if t.OS != "linux" {
		return Env{}, fmt.Errorf("toolchain linux: target %s is for %s", t.Name, t.OS)
	}
	bin, err := mkBin(dir)
	if err != nil {
		return Env{}, err
	}
	for name, path := range map[string]string{"cc": l.cc, "ar": l.ar, "ranlib": l.ranlib} {
		if err := writeScript(filepath.Join(bin, name), "exec "+shellQuote(path)+` "$@"`+"\n"); err != nil {
			return Env{}, fmt.Errorf("toolchain linux: %w", err)
		}
	}
	return Env{Bin: bin}, nil
}

func (l *linux) Lipo(ctx context.Context, output string, inputs ...string) error {
	return fmt.Errorf("toolchain linux: no universal binaries on Linux")
}

func (l *linux) Identity(ctx context.Context) (Identity, error) {
	id := Identity{Kind: "linux", Tools: map[string]string{}}
	v, err := firstLine(ctx, l.cc, "--version")
	if err != nil {
		return id, err
	}
	id.Compiler = v
	for name, path := range map[string]string{"ar": l.ar, "ranlib": l.ranlib} {
		v, err := firstLine(ctx, path, "--version")
		if err != nil {
			return id, err
		}
		id.Tools[name] = path + ": " + v
	}
	return id, nil
}

// For returns the toolchain that builds target: the native Linux toolchain
// for Linux targets, else New(kind) (macOS or cross).
func For(kind string, t recipe.Target) (Toolchain, error) {
	if t.OS == "linux" {
		return newLinux()
	}
	return New(kind)
}
