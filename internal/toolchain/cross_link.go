package toolchain

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// StubsDir is where scripts/setup-cross.sh puts the libSystem text stubs
// (lib/libc/darwin/libSystem.{11,12,13}.tbd of the same npm package as the
// headers): darwin/ inside HeadersDir, so one setting locates both.
func StubsDir() string { return filepath.Join(HeadersDir(), "darwin") }

// stub is one libSystem.<major>.tbd.
type stub struct {
	major int
	path  string
}

// stubs lists the libSystem stubs, oldest first; none is a setup error.
func (c *cross) stubs() ([]stub, error) {
	dir := StubsDir()
	paths, _ := filepath.Glob(filepath.Join(dir, "libSystem.*.tbd"))
	var out []stub
	for _, p := range paths {
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "libSystem."), ".tbd")
		if n, err := strconv.Atoi(v); err == nil {
			out = append(out, stub{n, p})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cross toolchain: libSystem stubs missing: no libSystem.<macOS>.tbd in %s (run scripts/setup-cross.sh, which unpacks lib/libc/darwin/ from npm %s; or set OSSLBUILD_MACOS_HEADERS): %w", dir, HeadersPackage, ErrSetup)
	}
	slices.SortFunc(out, func(a, b stub) int { return a.major - b.major })
	return out, nil
}

// pickStub is the newest stub not newer than the deployment target minOS,
// or the oldest when every stub is newer (macOS 10.12: the stubs start at
// 11). A stub lists what its macOS exports, with $ld$hide$os<version>$
// markers for symbols older systems lack, so linking for minOS against a
// newer stub still refuses those.
func pickStub(stubs []stub, minOS string) (stub, string, error) {
	major, err := strconv.Atoi(strings.SplitN(minOS, ".", 2)[0])
	if err != nil || minOS == "" {
		return stub{}, "", fmt.Errorf("cross toolchain: deployment target %q is not a macOS version", minOS)
	}
	best := -1
	for i, s := range stubs {
		if s.major <= major {
			best = i
		}
	}
	if best < 0 {
		s := stubs[0]
		return s, fmt.Sprintf("no libSystem stub for macOS %s (the package has %s): linked against the oldest, %s, for macOS %s, whose $ld$hide$os markers withhold what macOS %s lacks",
			minOS, stubNames(stubs), filepath.Base(s.path), minOS, minOS), nil
	}
	return stubs[best], "", nil
}

func stubNames(stubs []stub) string {
	var n []string
	for _, s := range stubs {
		n = append(n, strconv.Itoa(s.major))
	}
	return strings.Join(n, ", ")
}

// Link compiles s.Source with clang-14 for the slice's triple and links it
// with ld64.lld-14 for the exact deployment target (-platform_version),
// every archive member (-all_load) and the chosen libSystem stub; lld
// treats an undefined symbol as an error.
func (c *cross) Link(ctx context.Context, s LinkSpec) (Linked, error) {
	triple, archHeaders, err := clangTarget(s.Slice)
	if err != nil {
		return Linked{}, err
	}
	stubs, err := c.stubs()
	if err != nil {
		return Linked{}, err
	}
	st, note, err := pickStub(stubs, s.Slice.MinOS)
	if err != nil {
		return Linked{}, err
	}
	sum, err := ctxio.SHA256(ctx, st.path, true)
	if err != nil {
		return Linked{}, fmt.Errorf("cross toolchain: libSystem stub: %w: %w", err, ErrSetup)
	}
	ldv, err := firstLine(ctx, c.ld, "--version")
	if err != nil {
		return Linked{}, err
	}
	l := Linked{
		Linker:       filepath.Base(c.ld) + " (" + ldv + ")",
		System:       filepath.Base(st.path) + " from npm " + HeadersPackage,
		SystemSHA256: sum,
		Platform:     s.Slice.LinkedFor(),
		Note:         note,
		Stubs:        []string{st.path},
	}
	obj := filepath.Join(s.Dir, strings.TrimSuffix(filepath.Base(s.Source), ".c")+"-"+s.Slice.Arch+".o")
	cc := append(c.compiler(triple, archHeaders), "-O1", "-I", s.Include, "-c", "-o", obj, s.Source)
	if err := runTool(ctx, "compile", cc, l); err != nil {
		return l, err
	}
	l.Argv = []string{c.ld, "-arch", s.Slice.Arch, "-platform_version", "macos", s.Slice.MinOS, strconv.Itoa(st.major) + ".0",
		"-o", s.Out, obj, "-all_load"}
	l.Argv = append(append(l.Argv, s.Archives...), st.path)
	for _, r := range s.Rpaths {
		l.Argv = append(l.Argv, "-rpath", r)
	}
	return l, runTool(ctx, "link", l.Argv, l)
}
