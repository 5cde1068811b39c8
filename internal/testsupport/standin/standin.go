// Package standin builds, for tests on Linux, a stand-in for what the macOS
// toolchain finds on a Mac: an xcrun that answers the questions osslbuild
// asks it, a "toolchain clang" around clang-14 that behaves like Apple's
// clang run directly (it knows no SDK but the one SDKROOT names: without
// it, <stdio.h> is not found), ar, ranlib and lipo around llvm-14's, and the
// macOS headers of the cross toolchain laid out as an SDK. Every call is
// logged, so a test can see what xcrun was asked and what environment each
// tool ran in.
//
// No Mac runs here, so this is the only way the macOS toolchain's code
// (toolchain.MacOS) can run before it reaches a macOS runner.
package standin

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// Xcrun is a stand-in xcrun and what it serves.
type Xcrun struct {
	Path       string // the xcrun script, for toolchain.MacOS
	SDK        string // the SDK directory it names
	SDKVersion string
	Tools      map[string]string // clang, ar, ranlib, lipo, install_name_tool: the stand-in scripts
	Log        string            // one line per call of any stand-in
}

// headerDirs are the cross toolchain's header directories, in the order
// the SDK is assembled: later ones overlay earlier ones, as the -isystem
// order of the cross toolchain prefers them. The two architectures' sets
// only overlap in identical files.
var headerDirs = []string{"any-macos-any", "any-macos.11-any", "aarch64-macos.11-none", "x86_64-macos.11-none"}

// New writes a stand-in toolchain into a fresh directory whose xcrun
// reports an SDK of version sdkVersion. It skips the test (fails with
// CI=true) when clang-14, llvm-14 or the macOS headers are missing.
func New(t testing.TB, sdkVersion string) *Xcrun {
	t.Helper()
	real := map[string]string{}
	for tool, name := range map[string]string{"clang": "clang-14", "ar": "llvm-ar-14", "ranlib": "llvm-ranlib-14", "lipo": "llvm-lipo-14", "install_name_tool": "llvm-install-name-tool-14"} {
		real[tool] = testfixture.Tool(t, name)
	}
	headers := toolchain.HeadersDir()
	for _, d := range headerDirs {
		if fi, err := os.Stat(filepath.Join(headers, d)); err != nil || !fi.IsDir() {
			testfixture.Missing(t, "macOS headers: %s has no %s/ (scripts/setup-cross.sh)", headers, d)
		}
	}
	root := t.TempDir()
	x := &Xcrun{
		Path:       filepath.Join(root, "usr", "bin", "xcrun"),
		SDK:        filepath.Join(root, "Developer", "SDKs", "MacOSX"+sdkVersion+".sdk"),
		SDKVersion: sdkVersion,
		Tools:      map[string]string{},
		Log:        filepath.Join(root, "calls.log"),
	}
	inc := filepath.Join(x.SDK, "usr", "include")
	for _, d := range headerDirs {
		overlay(t, inc, os.DirFS(filepath.Join(headers, d)))
	}
	// The CommonCrypto declarations OpenSSL needs, which Zig's headers
	// lack; a real SDK has them.
	overlay(t, inc, toolchain.ShimFS())
	bin := filepath.Join(root, "Toolchains", "XcodeDefault.xctoolchain", "usr", "bin")
	log := quote(x.Log)
	scripts := map[string]string{
		// Apple's clang invoked directly finds the SDK through SDKROOT
		// (or -isysroot) only; -target makes clang-14 a Darwin compiler
		// and -arch then picks the slice, as on a Mac.
		"clang": `printf 'clang SDKROOT=%s %s\n' "${SDKROOT-<unset>}" "$*" >>` + log + `
case "$1" in --version) exec ` + quote(real["clang"]) + ` --version ;; esac
exec ` + quote(real["clang"]) + ` -target x86_64-apple-darwin -isysroot "${SDKROOT:-/nonexistent-sdk}" "$@"
`,
		"ar": `printf 'ar ZERO_AR_DATE=%s %s\n' "${ZERO_AR_DATE-<unset>}" "$*" >>` + log + `
exec ` + quote(real["ar"]) + ` "$@"
`,
		// Apple's ranlib takes -c (OpenSSL's darwin targets pass it).
		"ranlib": `printf 'ranlib ZERO_AR_DATE=%s %s\n' "${ZERO_AR_DATE-<unset>}" "$*" >>` + log + `
if [ "$1" = -c ]; then shift; fi
exec ` + quote(real["ranlib"]) + ` "$@"
`,
		"lipo": `printf 'lipo ZERO_AR_DATE=%s %s\n' "${ZERO_AR_DATE-<unset>}" "$*" >>` + log + `
exec ` + quote(real["lipo"]) + ` "$@"
`,
		"install_name_tool": `printf 'install_name_tool PATH=%s %s\n' "${PATH-<unset>}" "$*" >>` + log + `
exec ` + quote(real["install_name_tool"]) + ` "$@"
`,
	}
	for name, body := range scripts {
		x.Tools[name] = filepath.Join(bin, name)
		write(t, x.Tools[name], body)
	}
	// xcrun answers exactly the questions asked with --sdk macosx; any
	// other question fails as an unknown utility would.
	var cases strings.Builder
	for name, p := range x.Tools {
		fmt.Fprintf(&cases, "'--sdk macosx -f %s') echo %s ;;\n", name, quote(p))
	}
	fmt.Fprintf(&cases, "'--sdk macosx --show-sdk-path') echo %s ;;\n", quote(x.SDK))
	fmt.Fprintf(&cases, "'--sdk macosx --show-sdk-version') echo %s ;;\n", quote(sdkVersion))
	write(t, x.Path, `printf 'xcrun %s\n' "$*" >>`+log+`
case "$*" in
`+cases.String()+`*) echo "xcrun: error: unable to find utility \"$*\", not a developer tool or in PATH" >&2; exit 72 ;;
esac
`)
	return x
}

// Calls returns the logged calls whose first word is tool (xcrun, clang,
// ar, ranlib, lipo, install_name_tool), without that word.
func (x *Xcrun) Calls(t testing.TB, tool string) []string {
	t.Helper()
	b, err := os.ReadFile(x.Log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, tool+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// overlay copies every file of src into dir, replacing what is there.
func overlay(t testing.TB, dir string, src fs.FS) {
	t.Helper()
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatalf("standin: SDK headers: %v", err)
	}
}
