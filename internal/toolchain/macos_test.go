package toolchain_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/standin"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// A file that needs the SDK's libc headers and CommonCrypto, as OpenSSL does.
const sdkSource = `#include <stdio.h>
#include <pthread.h>
#include <CommonCrypto/CommonCryptoError.h>
#include <CommonCrypto/CommonRandom.h>
int f(void *p, size_t n) { return CCRandomGenerateBytes(p, n) == kCCSuccess; }
`

// TestMacOSToolchain runs the macOS toolchain's code, unchanged, against a
// stand-in xcrun: SDK selection, the cc wrapper handing the SDK to clang
// through SDKROOT only, ZERO_AR_DATE for ar, ranlib and lipo, and the
// identity.
func TestMacOSToolchain(t *testing.T) {
	ctx := context.Background()
	x := standin.New(t, "11.3")
	tc := toolchain.MacOS(x.Path)
	if tc.Kind() != "macos" {
		t.Fatalf("kind %q", tc.Kind())
	}
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "t.c")
	if err := os.WriteFile(src, []byte(sdkSource), 0o644); err != nil {
		t.Fatal(err)
	}
	libs := map[string]string{}
	libDir := t.TempDir() // outlives the subtests: lipo merges their libraries
	for _, tt := range []struct{ target, arch, cmd, minos string }{
		{"arm64", "arm64", "LC_BUILD_VERSION", "minos 11.0"},
		{"x86_64", "x86_64", "LC_VERSION_MIN_MACOSX", "version 10.12"},
	} {
		t.Run(tt.target, func(t *testing.T) {
			tgt, err := r.Target(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			env, err := tc.Prepare(ctx, filepath.Join(t.TempDir(), "tc"), tgt.Slice)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(env.Vars, "ZERO_AR_DATE=1") {
				t.Errorf("build environment %v lacks ZERO_AR_DATE=1", env.Vars)
			}
			// The build's environment, as configure.Env makes it: no SDKROOT.
			e := append([]string{"PATH=" + env.Bin + ":/usr/bin:/bin"}, env.Vars...)
			obj := filepath.Join(t.TempDir(), "t.o")
			args := append([]string{"-arch", tt.arch, "-O3"}, tgt.Flags...)
			args = append(args, "-c", "-o", obj, src)
			before := len(x.Calls(t, "clang"))
			if out, err := proc.Output(ctx, proc.Cmd{Args: append([]string{"cc"}, args...), Env: e}); err != nil {
				t.Fatalf("cc: %v\n%s", err, out)
			}
			// clang got exactly cc's arguments (the compiler line OpenSSL
			// records is unchanged) and the selected SDK as SDKROOT.
			calls := x.Calls(t, "clang")[before:]
			want := "SDKROOT=" + x.SDK + " " + strings.Join(args, " ")
			if len(calls) != 1 || calls[0] != want {
				t.Errorf("clang calls %q, want [%q]", calls, want)
			}
			out, err := exec.Command("llvm-objdump-14", "--macho", "--private-headers", obj).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !strings.Contains(string(out), tt.cmd) || !strings.Contains(string(out), tt.minos) {
				t.Errorf("object lacks %s %s:\n%s", tt.cmd, tt.minos, out)
			}
			// Without the wrapper's SDKROOT the same clang finds no SDK:
			// the failure the explicit selection exists to prevent.
			direct := exec.Command(x.Tools["clang"], append(args[:len(args)-3:len(args)-3], "-c", "-o", obj+".direct", src)...)
			direct.Env = []string{"PATH=/usr/bin:/bin"}
			if out, err := direct.CombinedOutput(); err == nil || !strings.Contains(string(out), "'stdio.h' file not found") {
				t.Errorf("clang without SDKROOT: err %v, output %s; want 'stdio.h' file not found", err, out)
			}
			// ar and ranlib (with Apple's -c) run with ZERO_AR_DATE=1.
			lib := filepath.Join(libDir, "lib"+tt.arch+".a")
			arBefore, rlBefore := len(x.Calls(t, "ar")), len(x.Calls(t, "ranlib"))
			for _, a := range [][]string{{"ar", "rc", lib, obj}, {"ranlib", "-c", lib}} {
				if out, err := proc.Output(ctx, proc.Cmd{Args: a, Env: e}); err != nil {
					t.Fatalf("%s: %v\n%s", a[0], err, out)
				}
			}
			for tool, calls := range map[string][]string{"ar": x.Calls(t, "ar")[arBefore:], "ranlib": x.Calls(t, "ranlib")[rlBefore:]} {
				if len(calls) != 1 || !strings.HasPrefix(calls[0], "ZERO_AR_DATE=1 ") {
					t.Errorf("%s calls %q, want one with ZERO_AR_DATE=1", tool, calls)
				}
			}
			libs[tt.arch] = lib
		})
	}
	if t.Failed() {
		return
	}

	t.Run("lipo", func(t *testing.T) {
		fat := filepath.Join(t.TempDir(), "libfat.a")
		if err := tc.Lipo(ctx, fat, libs["x86_64"], libs["arm64"]); err != nil {
			t.Fatal(err)
		}
		calls := x.Calls(t, "lipo")
		if len(calls) != 1 || !strings.HasPrefix(calls[0], "ZERO_AR_DATE=1 -create ") {
			t.Errorf("lipo calls %q, want one -create with ZERO_AR_DATE=1", calls)
		}
		out, err := exec.Command("llvm-lipo-14", "-archs", fat).CombinedOutput()
		if err != nil || strings.Fields(string(out)) == nil || !slices.Equal(strings.Fields(string(out)), []string{"x86_64", "arm64"}) {
			t.Errorf("lipo -archs %s: %q, %v; want x86_64 arm64", fat, out, err)
		}
	})

	// Xcode's install_name_tool, found through xcrun and run with a
	// constructed PATH, rewrites a dylib's install name and the name of a
	// dylib it loads, as the build's install-name stage asks.
	t.Run("install_name_tool", func(t *testing.T) {
		testfixture.Tools(t, "ld64.lld-14")
		dir := t.TempDir()
		stub := filepath.Join(toolchain.HeadersDir(), "darwin", "libSystem.11.tbd")
		c, obj, dylib := filepath.Join(dir, "s.c"), filepath.Join(dir, "s.o"), filepath.Join(dir, "libssl.3.dylib")
		if err := os.WriteFile(c, []byte("int SSL_f(int x){return x+1;}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, argv := range [][]string{
			{"clang-14", "-target", "arm64-apple-macos11", "-c", c, "-o", obj},
			{"ld64.lld-14", "-arch", "arm64", "-platform_version", "macos", "11.0", "11.0", "-dylib", "-install_name", "/opt/osslbuild/lib/libssl.3.dylib",
				"-o", dylib, obj, stub},
		} {
			if b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", argv, err, b)
			}
		}
		if err := tc.InstallNames(ctx, dylib, "@rpath/libssl.3.dylib", map[string]string{"/usr/lib/libSystem.B.dylib": "/usr/lib/libSystem.B.dylib"}); err != nil {
			t.Fatal(err)
		}
		calls := x.Calls(t, "install_name_tool")
		want := "PATH=/usr/bin:/bin -id @rpath/libssl.3.dylib -change /usr/lib/libSystem.B.dylib /usr/lib/libSystem.B.dylib " + dylib
		if len(calls) != 1 || calls[0] != want {
			t.Errorf("install_name_tool calls %q, want [%q]", calls, want)
		}
		b, _ := os.ReadFile(dylib)
		m, err := inspect.ParseMachOBytes(b)
		if err != nil || m.ID == nil || m.ID.Name != "@rpath/libssl.3.dylib" {
			t.Errorf("install name after the rewrite: %+v, %v", m, err)
		}
		// A dylib it cannot rewrite is an error naming the file.
		if err := tc.InstallNames(ctx, src, "@rpath/x.dylib", nil); err == nil || !strings.Contains(err.Error(), "install names of t.c") {
			t.Errorf("install names of a C file: %v", err)
		}
	})

	t.Run("identity", func(t *testing.T) {
		id, err := tc.Identity(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if id.Kind != "macos" || id.SDK != "macOS SDK 11.3" || id.SDKPath != x.SDK || !strings.Contains(id.Compiler, "clang version 14") {
			t.Errorf("identity %+v", id)
		}
		for _, tool := range []string{"ar", "ranlib", "lipo"} {
			if id.Tools[tool] != x.Tools[tool] {
				t.Errorf("identity tool %s = %q, want %q", tool, id.Tools[tool], x.Tools[tool])
			}
		}
		if id.Tools["cc"] != x.Tools["clang"] {
			t.Errorf("identity cc = %q, want %q", id.Tools["cc"], x.Tools["clang"])
		}
	})

	t.Run("one SDK selection", func(t *testing.T) {
		calls := x.Calls(t, "xcrun")
		if !slices.Contains(calls, "--sdk macosx --show-sdk-path") || !slices.Contains(calls, "--sdk macosx --show-sdk-version") {
			t.Errorf("xcrun never asked for the SDK: %q", calls)
		}
		for _, c := range calls {
			if !strings.HasPrefix(c, "--sdk macosx ") {
				t.Errorf("xcrun %s: every lookup must name the SDK", c)
			}
		}
	})

	t.Run("not for Linux targets", func(t *testing.T) {
		tgt, _ := r.Target("linux-x86_64")
		if _, err := tc.Prepare(ctx, filepath.Join(t.TempDir(), "tc"), tgt.Slice); err == nil || !strings.Contains(err.Error(), "linux-x86_64 is for linux") {
			t.Errorf("Prepare(linux-x86_64) = %v", err)
		}
	})
}

// TestMacOSXcrunFailures: an xcrun that fails or answers nonsense is an
// error naming the question and what to install, before anything is
// written.
func TestMacOSXcrunFailures(t *testing.T) {
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	tgt, _ := r.Target("arm64")
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name, xcrun string
		want        []string
	}{
		{"missing", filepath.Join(dir, "no-such-xcrun"), []string{"no-such-xcrun --sdk macosx --show-sdk-path", "xcode-select --install"}},
		{"fails", script("failing", "echo 'xcrun: error: SDK \"macosx\" cannot be located' >&2; exit 1\n"),
			[]string{"--sdk macosx --show-sdk-path", `SDK "macosx" cannot be located`, "xcode-select --install"}},
		{"relative SDK path", script("relative", "echo MacOSX.sdk\n"), []string{"--show-sdk-path: want an absolute path, got \"MacOSX.sdk\""}},
		{"two lines", script("chatty", "echo /a; echo /b\n"), []string{"want one line"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "tc")
			_, err := toolchain.MacOS(tt.xcrun).Prepare(context.Background(), bin, tgt.Slice)
			if err == nil {
				t.Fatal("Prepare succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, err := os.Stat(bin); !os.IsNotExist(err) {
				t.Errorf("wrapper directory written despite the failure")
			}
		})
	}
}
