package toolchain

import (
	"context"
	"fmt"
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
