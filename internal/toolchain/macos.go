package toolchain

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/proc"
)

// Xcrun is where macOS keeps xcrun, the one tool the macOS toolchain
// starts from.
const Xcrun = "/usr/bin/xcrun"

// SDKName is the SDK every lookup asks xcrun for: the compiler, the
// archivers and the headers all come from one selection.
const SDKName = "macosx"

// macOS is the release toolchain: Xcode's (or the command line tools')
// clang, ar, ranlib and lipo and the macOS SDK, all located with xcrun.
//
// The compiler is exec'd directly, not through /usr/bin/clang or "xcrun
// clang", and the build environment is constructed without SDKROOT. A
// toolchain clang run that way has been seen to find no SDK at all
// ("fatal error: 'stdio.h' file not found", e.g. with only the command line
// tools installed), so the SDK is selected explicitly and handed to clang
// as SDKROOT inside the cc wrapper: nothing is added to its command line,
// and the compiler line OpenSSL embeds stays that of a plain Mac build.
type macOS struct {
	xcrun string // absolute path of xcrun (Xcrun; a stand-in in tests)
}

// MacOS is the macOS toolchain driven by the xcrun at path. New("macos")
// uses Xcrun on a Mac; tests on Linux give a stand-in that answers the
// same questions.
func MacOS(xcrun string) Toolchain { return &macOS{xcrun: xcrun} }

func (m *macOS) Kind() string { return "macos" }

// run asks xcrun one question and returns its one-line answer.
func (m *macOS) run(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{m.xcrun}, args...)
	out, err := proc.Output(ctx, proc.Cmd{Args: argv, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		// err names the command and carries xcrun's stderr.
		return "", fmt.Errorf("macos toolchain: %w (install the Xcode command line tools: xcode-select --install)", err)
	}
	ans := strings.TrimSpace(string(out))
	if ans == "" || strings.Contains(ans, "\n") {
		return "", fmt.Errorf("macos toolchain: %s: want one line, got %q", strings.Join(argv, " "), ans)
	}
	return ans, nil
}

// find locates tool in the selected SDK's toolchain.
func (m *macOS) find(ctx context.Context, tool string) (string, error) {
	return m.path(ctx, "--sdk", SDKName, "-f", tool)
}

// path asks xcrun for a path, which must be absolute.
func (m *macOS) path(ctx context.Context, args ...string) (string, error) {
	p, err := m.run(ctx, args...)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("macos toolchain: xcrun %s: want an absolute path, got %q", strings.Join(args, " "), p)
	}
	return p, nil
}

// SDK is the macOS SDK a build compiles against.
type SDK struct {
	Path    string // xcrun --sdk macosx --show-sdk-path
	Version string // xcrun --sdk macosx --show-sdk-version
}

// sdk selects the SDK.
func (m *macOS) sdk(ctx context.Context) (SDK, error) {
	p, err := m.path(ctx, "--sdk", SDKName, "--show-sdk-path")
	if err != nil {
		return SDK{}, err
	}
	v, err := m.run(ctx, "--sdk", SDKName, "--show-sdk-version")
	if err != nil {
		return SDK{}, err
	}
	return SDK{Path: p, Version: v}, nil
}

func (m *macOS) Prepare(ctx context.Context, dir string, s platform.Slice) (Env, error) {
	if _, _, err := buildOf(m.Kind(), s); err != nil {
		return Env{}, err
	}
	sdk, err := m.sdk(ctx)
	if err != nil {
		return Env{}, err
	}
	wrappers := map[string]string{}
	for name, tool := range map[string]string{"cc": "clang", "ar": "ar", "ranlib": "ranlib", "lipo": "lipo"} {
		p, err := m.find(ctx, tool)
		if err != nil {
			return Env{}, err
		}
		wrappers[name] = execs(p)
	}
	// The SDK reaches clang through its environment, not its arguments:
	// the compiler line stays "cc -fPIC -arch ...".
	wrappers["cc"] = "SDKROOT=" + shellQuote(sdk.Path) + "\nexport SDKROOT\n" + wrappers["cc"]
	bin, err := writeBin(dir, "macos toolchain", wrappers)
	if err != nil {
		return Env{}, err
	}
	// ZERO_AR_DATE makes Apple's ar/ranlib/libtool write zero timestamps.
	return Env{Bin: bin, Vars: []string{"ZERO_AR_DATE=1"}}, nil
}

// InstallNames runs Xcode's install_name_tool, which leaves a signature
// stale (the caller signs again).
func (m *macOS) InstallNames(ctx context.Context, path, id string, change map[string]string) error {
	p, err := m.find(ctx, "install_name_tool")
	if err != nil {
		return err
	}
	return installNames(ctx, p, path, id, change)
}

func (m *macOS) Lipo(ctx context.Context, output string, inputs ...string) error {
	p, err := m.find(ctx, "lipo")
	if err != nil {
		return err
	}
	args := slices.Concat([]string{p, "-create"}, inputs, []string{"-output", output})
	if _, err := proc.Output(ctx, proc.Cmd{Args: args, Env: []string{"PATH=/usr/bin:/bin", "ZERO_AR_DATE=1"}}); err != nil {
		return fmt.Errorf("lipo: %w", err)
	}
	return nil
}

func (m *macOS) Identity(ctx context.Context) (Identity, error) {
	id := Identity{Kind: "macos", Tools: map[string]string{}}
	sdk, err := m.sdk(ctx)
	if err != nil {
		return id, err
	}
	id.SDK, id.SDKPath = "macOS SDK "+sdk.Version, sdk.Path
	clang, err := m.find(ctx, "clang")
	if err != nil {
		return id, err
	}
	if id.Compiler, err = firstLine(ctx, clang, "--version"); err != nil {
		return id, err
	}
	id.Tools["cc"] = clang
	for _, tool := range []string{"ar", "ranlib", "lipo"} {
		if id.Tools[tool], err = m.find(ctx, tool); err != nil {
			return id, err
		}
	}
	return id, nil
}

// Link compiles and links s with Xcode's clang and ld against the SDK, for
// the exact deployment target, every archive member loaded (-all_load) and
// undefined symbols as errors (ld's default). The SDK's libSystem stubs
// (usr/lib/system/*.tbd) carry the $ld$hide$os markers the cross stub
// merges into one file.
func (m *macOS) Link(ctx context.Context, s LinkSpec) (Linked, error) {
	p, _, err := buildOf(m.Kind(), s.Slice)
	if err != nil {
		return Linked{}, err
	}
	if s.Slice.MinOS == "" {
		return Linked{}, fmt.Errorf("macos toolchain: no deployment target for the %s link", s.Slice.Arch)
	}
	clang, err := m.find(ctx, "clang")
	if err != nil {
		return Linked{}, err
	}
	ld, err := m.find(ctx, "ld")
	if err != nil {
		return Linked{}, err
	}
	sdk, err := m.sdk(ctx)
	if err != nil {
		return Linked{}, err
	}
	stubs, _ := filepath.Glob(filepath.Join(sdk.Path, "usr", "lib", "system", "*.tbd"))
	if _, err := os.Stat(filepath.Join(sdk.Path, "usr", "lib", "libSystem.B.tbd")); err != nil || len(stubs) == 0 {
		return Linked{}, fmt.Errorf("macos toolchain: the SDK at %s has no usr/lib/libSystem.B.tbd and usr/lib/system/*.tbd (reinstall the Xcode command line tools: xcode-select --install): %w", sdk.Path, ErrSetup)
	}
	stubs = append([]string{filepath.Join(sdk.Path, "usr", "lib", "libSystem.B.tbd")}, stubs...)
	// ld -v prints its version on stderr.
	var ldv bytes.Buffer
	if err := proc.Run(ctx, proc.Cmd{Args: []string{ld, "-v"}, Env: []string{"PATH=/usr/bin:/bin", "LANG=C"}, Stdout: &ldv, Stderr: &ldv}); err != nil {
		return Linked{}, fmt.Errorf("macos toolchain: %s -v: %w", ld, err)
	}
	ldVersion, _, _ := strings.Cut(strings.TrimSpace(ldv.String()), "\n")
	l := Linked{
		Linker:   "Xcode ld (" + strings.TrimSpace(ldVersion) + ")",
		System:   "libSystem.B.tbd of the macOS SDK " + sdk.Version,
		Platform: s.Slice.LinkedFor(),
		Stubs:    stubs,
	}
	flags := []string{"-arch", s.Slice.Arch, p.MinOSFlag + s.Slice.MinOS, "-isysroot", sdk.Path}
	obj := filepath.Join(s.Dir, strings.TrimSuffix(filepath.Base(s.Source), ".c")+"-"+s.Slice.Arch+".o")
	cc := append(append([]string{clang}, flags...), "-O1", "-I", s.Include, "-c", "-o", obj, s.Source)
	if err := runTool(ctx, "compile", cc, l); err != nil {
		return l, err
	}
	// Apple's ld treats an undefined symbol as an error unless told
	// otherwise (-undefined dynamic_lookup), so nothing needs saying.
	l.Argv = append(append([]string{clang}, flags...), "-o", s.Out, obj, "-Wl,-all_load")
	l.Argv = append(l.Argv, s.Archives...)
	for _, r := range s.Rpaths {
		l.Argv = append(l.Argv, "-Wl,-rpath,"+r)
	}
	return l, runTool(ctx, "link", l.Argv, l)
}
