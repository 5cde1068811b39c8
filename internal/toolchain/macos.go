package toolchain

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// macOS is the release toolchain: Xcode's (or the command line tools')
// clang, ar, ranlib and lipo, located with xcrun. The wrappers add nothing
// but the tool's absolute path, so a build here is a plain Mac build.
type macOS struct{}

func (m *macOS) Kind() string { return "macos" }

func xcrunFind(ctx context.Context, tool string) (string, error) {
	out, err := proc.Output(ctx, proc.Cmd{Args: []string{"/usr/bin/xcrun", "-f", tool}, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		return "", fmt.Errorf("macos toolchain: xcrun -f %s: %w (install the Xcode command line tools: xcode-select --install)", tool, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (m *macOS) Prepare(ctx context.Context, dir string, t recipe.Target) (Env, error) {
	if t.OS != "macos" {
		return Env{}, fmt.Errorf("macos toolchain: target %s is for %s", t.Name, t.OS)
	}
	bin, err := mkBin(dir)
	if err != nil {
		return Env{}, err
	}
	for name, tool := range map[string]string{"cc": "clang", "ar": "ar", "ranlib": "ranlib", "lipo": "lipo"} {
		p, err := xcrunFind(ctx, tool)
		if err != nil {
			return Env{}, err
		}
		if err := writeScript(filepath.Join(bin, name), "exec "+shellQuote(p)+` "$@"`+"\n"); err != nil {
			return Env{}, fmt.Errorf("macos toolchain: %w", err)
		}
	}
	// ZERO_AR_DATE makes Apple's ar/ranlib/libtool write zero timestamps.
	return Env{Bin: bin, Vars: []string{"ZERO_AR_DATE=1"}}, nil
}

func (m *macOS) Lipo(ctx context.Context, output string, inputs ...string) error {
	p, err := xcrunFind(ctx, "lipo")
	if err != nil {
		return err
	}
	args := append([]string{p, "-create"}, inputs...)
	args = append(args, "-output", output)
	if _, err := proc.Output(ctx, proc.Cmd{Args: args, Env: []string{"PATH=/usr/bin:/bin", "ZERO_AR_DATE=1"}}); err != nil {
		return fmt.Errorf("lipo: %w", err)
	}
	return nil
}

func (m *macOS) Identity(ctx context.Context) (Identity, error) {
	id := Identity{Kind: "macos", Tools: map[string]string{}}
	clang, err := xcrunFind(ctx, "clang")
	if err != nil {
		return id, err
	}
	if id.Compiler, err = firstLine(ctx, clang, "--version"); err != nil {
		return id, err
	}
	sdk, err := firstLine(ctx, "/usr/bin/xcrun", "--show-sdk-version")
	if err != nil {
		return id, err
	}
	id.SDK = "macOS SDK " + sdk
	for _, tool := range []string{"ar", "ranlib", "lipo"} {
		p, err := xcrunFind(ctx, tool)
		if err != nil {
			return id, err
		}
		id.Tools[tool] = p
	}
	return id, nil
}

// Link compiles and links s with Xcode's clang and ld against the SDK, for
// the exact deployment target, every archive member loaded (-all_load) and
// undefined symbols as errors (ld's default). The SDK's libSystem stubs
// (usr/lib/system/*.tbd) carry the $ld$hide$os markers the cross stub
// merges into one file.
func (m *macOS) Link(ctx context.Context, s LinkSpec) (Linked, error) {
	if s.OS != "macos" {
		return Linked{}, fmt.Errorf("macos toolchain: links macOS programs only, not %s", s.OS)
	}
	if s.MinOS == "" {
		return Linked{}, fmt.Errorf("macos toolchain: no deployment target for the %s link", s.Arch)
	}
	clang, err := xcrunFind(ctx, "clang")
	if err != nil {
		return Linked{}, err
	}
	ld, err := xcrunFind(ctx, "ld")
	if err != nil {
		return Linked{}, err
	}
	sdk, err := firstLine(ctx, "/usr/bin/xcrun", "--sdk", "macosx", "--show-sdk-path")
	if err != nil {
		return Linked{}, fmt.Errorf("macos toolchain: the macOS SDK: %w", err)
	}
	sdkv, err := firstLine(ctx, "/usr/bin/xcrun", "--sdk", "macosx", "--show-sdk-version")
	if err != nil {
		return Linked{}, fmt.Errorf("macos toolchain: the macOS SDK: %w", err)
	}
	stubs, _ := filepath.Glob(filepath.Join(sdk, "usr", "lib", "system", "*.tbd"))
	if _, err := os.Stat(filepath.Join(sdk, "usr", "lib", "libSystem.B.tbd")); err != nil || len(stubs) == 0 {
		return Linked{}, fmt.Errorf("macos toolchain: the SDK at %s has no usr/lib/libSystem.B.tbd and usr/lib/system/*.tbd (reinstall the Xcode command line tools: xcode-select --install): %w", sdk, ErrSetup)
	}
	stubs = append([]string{filepath.Join(sdk, "usr", "lib", "libSystem.B.tbd")}, stubs...)
	// ld -v prints its version on stderr.
	var ldv bytes.Buffer
	if err := proc.Run(ctx, proc.Cmd{Args: []string{ld, "-v"}, Env: []string{"PATH=/usr/bin:/bin", "LANG=C"}, Stdout: &ldv, Stderr: &ldv}); err != nil {
		return Linked{}, fmt.Errorf("macos toolchain: %s -v: %w", ld, err)
	}
	ldVersion, _, _ := strings.Cut(strings.TrimSpace(ldv.String()), "\n")
	l := Linked{
		Linker:   "Xcode ld (" + strings.TrimSpace(ldVersion) + ")",
		System:   "libSystem.B.tbd of the macOS SDK " + sdkv,
		Platform: "macos " + s.MinOS,
		Stubs:    stubs,
	}
	flags := []string{"-arch", s.Arch, "-mmacosx-version-min=" + s.MinOS, "-isysroot", sdk}
	obj := filepath.Join(s.Dir, strings.TrimSuffix(filepath.Base(s.Source), ".c")+"-"+s.Arch+".o")
	cc := append(append([]string{clang}, flags...), "-O1", "-I", s.Include, "-c", "-o", obj, s.Source)
	if err := runTool(ctx, "compile", cc, l); err != nil {
		return l, err
	}
	// Apple's ld treats an undefined symbol as an error unless told
	// otherwise (-undefined dynamic_lookup), so nothing needs saying.
	l.Argv = append(append([]string{clang}, flags...), "-o", s.Out, obj, "-Wl,-all_load")
	l.Argv = append(l.Argv, s.Archives...)
	return l, runTool(ctx, "link", l.Argv, l)
}
