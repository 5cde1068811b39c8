package toolchain

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func crossOrSkip(t *testing.T) Toolchain {
	t.Helper()
	testfixture.NeedTier(t, testfixture.TierGate, "the cross toolchain")
	testfixture.On(t, testfixture.LinuxCross)
	tc, err := New("cross")
	if err != nil {
		testfixture.Missing(t, "%v", err)
	}
	return tc
}

// TestCrossCompiles compiles, with the prepared "cc", a file that includes
// libc headers and the CommonCrypto shim the way OpenSSL does, and checks
// the object's architecture and deployment target with llvm-objdump.
func TestCrossCompiles(t *testing.T) {
	tc := crossOrSkip(t)
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "t.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <CommonCrypto/CommonCryptoError.h>
#include <CommonCrypto/CommonRandom.h>
int f(void *p, size_t n) { return CCRandomGenerateBytes(p, n) == kCCSuccess; }
`), 0o644)
	for _, tt := range []struct{ target, arch, cmd, minos string }{
		{"arm64", "arm64", "LC_BUILD_VERSION", "minos 11.0"},
		{"x86_64", "x86_64", "LC_VERSION_MIN_MACOSX", "version 10.12"},
	} {
		t.Run(tt.target, func(t *testing.T) {
			tgt, _ := r.Target(tt.target)
			dir := filepath.Join(t.TempDir(), "tc")
			env, err := tc.Prepare(context.Background(), dir, tgt.Slice)
			if err != nil {
				t.Fatal(err)
			}
			obj := filepath.Join(t.TempDir(), "t.o")
			e := []string{"PATH=" + env.Bin + ":/usr/bin:/bin"}
			args := append([]string{"cc", "-arch", tt.arch, "-O3"}, tgt.Flags...)
			args = append(args, "-c", "-o", obj, src)
			if _, err := proc.Output(context.Background(), proc.Cmd{Args: args, Env: e}); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("llvm-objdump-14", "--macho", "--private-headers", obj).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !strings.Contains(string(out), tt.cmd) || !strings.Contains(string(out), tt.minos) {
				t.Errorf("object lacks %s %s:\n%s", tt.cmd, tt.minos, out)
			}
			// ranlib must accept Apple's -c.
			lib := filepath.Join(t.TempDir(), "l.a")
			for _, a := range [][]string{{"ar", "rc", lib, obj}, {"ranlib", "-c", lib}} {
				if _, err := proc.Output(context.Background(), proc.Cmd{Args: a, Env: e}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestPrepareRefusesExistingPath(t *testing.T) {
	tc := crossOrSkip(t)
	r, _ := recipe.Load("")
	tgt, _ := r.Target("arm64")
	dir := t.TempDir()
	// A planted symlink where a wrapper would go must not be written through.
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.Symlink(victim, filepath.Join(dir, "bin", "ar"))
	if _, err := tc.Prepare(context.Background(), dir, tgt.Slice); err == nil {
		t.Fatal("Prepare wrote into an existing bin directory")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatal("symlink target overwritten")
	}
}

func TestIdentity(t *testing.T) {
	tc := crossOrSkip(t)
	id, err := tc.Identity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(id.Compiler, "clang version 14") || id.Tools["lipo"] == "" || !strings.Contains(id.Tools["ld"], "LLD 14") {
		t.Errorf("identity %+v", id)
	}
}

func TestMissingHeaders(t *testing.T) {
	crossOrSkip(t)
	t.Setenv("OSSLBUILD_MACOS_HEADERS", t.TempDir())
	_, err := New("cross")
	if err == nil || !strings.Contains(err.Error(), "setup-cross.sh") {
		t.Errorf("want an error pointing at setup-cross.sh, got %v", err)
	}
}

// TestMissingLinker: without ld64.lld-14 the cross toolchain refuses to
// start, saying what to install, before any build work is done.
func TestMissingLinker(t *testing.T) {
	crossOrSkip(t)
	bin := t.TempDir()
	for _, tool := range []string{"clang-14", "llvm-ar-14", "llvm-ranlib-14", "llvm-lipo-14", "llvm-install-name-tool-14"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		os.Symlink(p, filepath.Join(bin, tool))
	}
	t.Setenv("PATH", bin)
	_, err := New("cross")
	if !errors.Is(err, ErrSetup) {
		t.Fatalf("got %v, want a setup error", err)
	}
	for _, want := range []string{"ld64.lld-14 not found", "lld-14", "scripts/setup-cross.sh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestMissingStubs: headers without the libSystem stubs beside them are a
// setup error pointing at setup-cross.sh.
func TestMissingStubs(t *testing.T) {
	crossOrSkip(t)
	headers := t.TempDir()
	for _, d := range []string{"any-macos-any", "any-macos.11-any", "aarch64-macos.11-none", "x86_64-macos.11-none"} {
		os.Symlink(filepath.Join(HeadersDir(), d), filepath.Join(headers, d))
	}
	t.Setenv("OSSLBUILD_MACOS_HEADERS", headers)
	_, err := New("cross")
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "libSystem stubs missing") ||
		!strings.Contains(err.Error(), filepath.Join(headers, "darwin")) || !strings.Contains(err.Error(), "setup-cross.sh") {
		t.Errorf("got %v, want a setup error naming %s/darwin and setup-cross.sh", err, headers)
	}
}

// TestPickStub: the newest stub not newer than the deployment target, or
// the oldest with a note saying so.
func TestPickStub(t *testing.T) {
	stubs := []stub{{11, "libSystem.11.tbd"}, {12, "libSystem.12.tbd"}, {13, "libSystem.13.tbd"}}
	for _, tt := range []struct {
		minOS string
		want  int
		note  bool
		err   bool
	}{
		{"10.12", 11, true, false}, {"10.15", 11, true, false}, {"11.0", 11, false, false}, {"12.3", 12, false, false},
		{"13.0", 13, false, false}, {"15.0", 13, false, false}, {"", 0, false, true}, {"eleven", 0, false, true},
	} {
		s, note, err := pickStub(stubs, tt.minOS)
		if (err != nil) != tt.err || s.major != tt.want || (note != "") != tt.note {
			t.Errorf("pickStub(%q) = %d, %q, %v; want %d, note %v, error %v", tt.minOS, s.major, note, err, tt.want, tt.note, tt.err)
		}
	}
}
