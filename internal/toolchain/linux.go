package toolchain

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

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

// Link compiles and links s natively with cc: every archive member loaded
// (--whole-archive) and glibc, which a static executable's undefined symbol
// fails against as on any Linux link.
func (l *linux) Link(ctx context.Context, s LinkSpec) (Linked, error) {
	if s.OS != "linux" {
		return Linked{}, fmt.Errorf("toolchain linux: links Linux programs only, not %s", s.OS)
	}
	if host := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]; s.Arch != host {
		return Linked{}, fmt.Errorf("toolchain linux: links native %s programs only, not %s", host, s.Arch)
	}
	ld, err := firstLine(ctx, l.cc, "-print-prog-name=ld")
	if err != nil {
		return Linked{}, err
	}
	ldv, err := firstLine(ctx, ld, "--version")
	if err != nil {
		return Linked{}, err
	}
	libc, err := firstLine(ctx, "getconf", "GNU_LIBC_VERSION")
	if err != nil {
		return Linked{}, err
	}
	out := Linked{Linker: ldv + ", by cc", System: libc, Platform: "linux " + s.Arch}
	obj := filepath.Join(s.Dir, strings.TrimSuffix(filepath.Base(s.Source), ".c")+"-"+s.Arch+".o")
	if err := runTool(ctx, "compile", []string{l.cc, "-O1", "-I", s.Include, "-c", "-o", obj, s.Source}, out); err != nil {
		return out, err
	}
	out.Argv = append([]string{l.cc, "-o", s.Out, obj, "-Wl,--whole-archive"}, s.Archives...)
	out.Argv = append(out.Argv, "-Wl,--no-whole-archive", "-pthread", "-ldl")
	return out, runTool(ctx, "link", out.Argv, out)
}
