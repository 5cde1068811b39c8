package toolchain

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/osslbuild/osslbuild/internal/platform"
)

// linux is the toolchain for Linux targets (pyca's manylinux builds, and
// the library benchmarks, which must run the code they measure): the
// host's cc, ar and ranlib, or a GNU cross compiler's (prefix
// "aarch64-linux-gnu-": aarch64-linux-gnu-gcc and its binutils) where the
// platform table names one, behind the same wrapper directory.
type linux struct {
	prefix         string
	cc, ar, ranlib string
}

func newLinux(prefix string) (*linux, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("toolchain linux: Linux targets are built on Linux (this host is %s)", runtime.GOOS)
	}
	l := &linux{prefix: prefix}
	cc, pkg := "cc", "gcc binutils"
	if prefix != "" {
		cc, pkg = prefix+"gcc", "gcc-"+strings.TrimSuffix(prefix, "-")
	}
	for _, t := range []struct {
		name string
		dst  *string
	}{{cc, &l.cc}, {prefix + "ar", &l.ar}, {prefix + "ranlib", &l.ranlib}} {
		p, err := exec.LookPath(t.name)
		if err != nil {
			return nil, fmt.Errorf("toolchain linux: %s not found on PATH (apt-get install %s): %w", t.name, pkg, ErrSetup)
		}
		*t.dst = p
	}
	return l, nil
}

func (l *linux) Kind() string { return "linux" }

// check refuses a slice this toolchain was not chosen for: one the table
// builds with another prefix (another CPU) or not with it at all.
func (l *linux) check(s platform.Slice) error {
	if _, _, err := buildOf(l.Kind(), s); err != nil {
		return err
	}
	b, err := Choose(l.Kind(), s)
	if err != nil {
		return err
	}
	if b.Target != l.prefix {
		return fmt.Errorf("toolchain linux (%s): target %s (%s) is built with %q tools on %s", l.cc, s.Name, s.Arch, b.Target+"gcc", Host())
	}
	return nil
}

func (l *linux) Prepare(ctx context.Context, dir string, s platform.Slice) (Env, error) {
	if err := l.check(s); err != nil {
		return Env{}, err
	}
	bin, err := writeBin(dir, "toolchain linux", map[string]string{"cc": execs(l.cc), "ar": execs(l.ar), "ranlib": execs(l.ranlib)})
	return Env{Bin: bin}, err // bin is "" on error
}

func (l *linux) InstallNames(ctx context.Context, path, id string, change map[string]string) error {
	return fmt.Errorf("toolchain linux: no Mach-O install names on Linux")
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
	id.Tools, err = versions(ctx, map[string]string{"ar": l.ar, "ranlib": l.ranlib})
	return id, err
}

// Link compiles and links s with the toolchain's cc: every archive member
// loaded (--whole-archive) and glibc, which a static executable's undefined
// symbol fails against as on any Linux link; or the shared libraries, with
// the run paths the program finds them along (DT_RUNPATH).
func (l *linux) Link(ctx context.Context, s LinkSpec) (Linked, error) {
	if err := l.check(s.Slice); err != nil {
		return Linked{}, err
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
	out := Linked{Linker: ldv + ", by cc", System: libc, Platform: s.Slice.LinkedFor()}
	obj := filepath.Join(s.Dir, strings.TrimSuffix(filepath.Base(s.Source), ".c")+"-"+s.Slice.Arch+".o")
	if err := runTool(ctx, "compile", []string{l.cc, "-O1", "-I", s.Include, "-c", "-o", obj, s.Source}, out); err != nil {
		return out, err
	}
	if s.Slice.Shared != nil {
		out.Argv = append([]string{l.cc, "-o", s.Out, obj}, s.Archives...)
		for _, r := range s.Rpaths {
			out.Argv = append(out.Argv, "-Wl,--enable-new-dtags,-rpath,"+r)
		}
		// What the libraries need must resolve at link time too:
		// --no-undefined for the program, and libcrypto found for libssl.
		out.Argv = append(out.Argv, "-Wl,--no-undefined", "-Wl,--no-allow-shlib-undefined")
		return out, runTool(ctx, "link", out.Argv, out)
	}
	out.Argv = append([]string{l.cc, "-o", s.Out, obj, "-Wl,--whole-archive"}, s.Archives...)
	out.Argv = append(out.Argv, "-Wl,--no-whole-archive", "-pthread", "-ldl")
	return out, runTool(ctx, "link", out.Argv, out)
}
