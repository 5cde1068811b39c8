package toolchain_test

import (
	"context"
	"debug/macho"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// TestMacOSNative runs the macOS toolchain on a Mac with Xcode's own tools
// (what TestMacOSToolchain runs against a stand-in on Linux): New("macos")
// through /usr/bin/xcrun, both slices compiled by its cc against the SDK,
// archived with ZERO_AR_DATE and merged by lipo; a dylib whose install
// name Xcode's install_name_tool rewrites to @rpath, loaded by dyld from a
// program with a run path, natively and (its x86_64 slice) under Rosetta.
func TestMacOSNative(t *testing.T) {
	testfixture.On(t, testfixture.MacOS)
	testfixture.NeedTier(t, testfixture.TierGate, "Xcode's tools")
	ctx := context.Background()
	tc, err := toolchain.New("macos")
	if err != nil {
		t.Fatal(err)
	}
	id, err := tc.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id.Kind != "macos" || !strings.Contains(id.Compiler, "clang") || id.SDKPath == "" {
		t.Errorf("identity %+v: want macos, Apple clang and the SDK's path", id)
	}
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "t.c")
	if err := os.WriteFile(src, []byte(sdkSource), 0o644); err != nil {
		t.Fatal(err)
	}
	libs := map[string]string{}
	envs := map[string][]string{}
	for _, tt := range []struct {
		target string
		cpu    macho.Cpu
	}{{"arm64", macho.CpuArm64}, {"x86_64", macho.CpuAmd64}} {
		tgt, err := r.Target(tt.target)
		if err != nil {
			t.Fatal(err)
		}
		env, err := tc.Prepare(ctx, filepath.Join(dir, "tc-"+tt.target), tgt.Slice)
		if err != nil {
			t.Fatal(err)
		}
		e := append([]string{"PATH=" + env.Bin + ":/usr/bin:/bin"}, env.Vars...)
		envs[tt.target] = e
		obj := filepath.Join(dir, tt.target+".o")
		args := append([]string{"cc", "-arch", tt.target, "-O3"}, tgt.Flags...)
		if out, err := proc.Output(ctx, proc.Cmd{Args: append(args, "-c", "-o", obj, src), Env: e}); err != nil {
			t.Fatalf("%s: cc: %v\n%s", tt.target, err, out)
		}
		f, err := macho.Open(obj)
		if err != nil {
			t.Fatal(err)
		}
		if f.Cpu != tt.cpu {
			t.Errorf("%s: object for %v", tt.target, f.Cpu)
		}
		f.Close()
		lib := filepath.Join(dir, "lib"+tt.target+".a")
		for _, a := range [][]string{{"ar", "rc", lib, obj}, {"ranlib", "-c", lib}} {
			if out, err := proc.Output(ctx, proc.Cmd{Args: a, Env: e}); err != nil {
				t.Fatalf("%s: %s: %v\n%s", tt.target, a[0], err, out)
			}
		}
		libs[tt.target] = lib
	}
	fat := filepath.Join(dir, "libfat.a")
	if err := tc.Lipo(ctx, fat, libs["x86_64"], libs["arm64"]); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("lipo", "-archs", fat).Output(); err != nil || strings.Join(strings.Fields(string(out)), " ") != "x86_64 arm64" {
		t.Errorf("lipo -archs %s: %q, %v", fat, out, err)
	}

	// A universal dylib with an absolute install name, as OpenSSL links
	// it; the install-name stage's rewrite; a program that finds it through
	// its run path.
	e := envs["arm64"]
	lib := filepath.Join(dir, "lib", "libt.3.dylib")
	os.MkdirAll(filepath.Dir(lib), 0o755)
	lsrc := filepath.Join(dir, "l.c")
	os.WriteFile(lsrc, []byte("int t_answer(void) { return 42; }\n"), 0o644)
	psrc := filepath.Join(dir, "p.c")
	os.WriteFile(psrc, []byte("#include <stdio.h>\nint t_answer(void);\nint main(void) { printf(\"answer %d\\n\", t_answer()); return 0; }\n"), 0o644)
	for _, argv := range [][]string{
		{"cc", "-arch", "arm64", "-arch", "x86_64", "-dynamiclib", "-install_name", "/opt/osslbuild/lib/libt.3.dylib", "-o", lib, lsrc},
	} {
		if out, err := proc.Output(ctx, proc.Cmd{Args: argv, Env: e}); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	if err := tc.InstallNames(ctx, lib, "@rpath/libt.3.dylib", nil); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "bin", "p")
	os.MkdirAll(filepath.Dir(prog), 0o755)
	argv := []string{"cc", "-arch", "arm64", "-arch", "x86_64", "-o", prog, psrc, "-L" + filepath.Dir(lib), "-lt.3", "-Wl,-rpath,@executable_path/../lib"}
	if out, err := proc.Output(ctx, proc.Cmd{Args: argv, Env: e}); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	if out, err := exec.Command("codesign", "--verify", "--strict", lib).CombinedOutput(); err != nil {
		t.Errorf("codesign --verify --strict %s after the rewrite: %v\n%s", lib, err, out)
	}
	for _, run := range [][]string{{prog}, {"arch", "-x86_64", prog}} {
		if run[0] == "arch" {
			if err := exec.Command("arch", "-x86_64", "/usr/bin/true").Run(); err != nil {
				t.Errorf("Rosetta cannot run x86_64 code here (softwareupdate --install-rosetta): %v", err)
				continue
			}
		}
		out, err := exec.Command(run[0], run[1:]...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "answer 42" {
			t.Errorf("%v: %q, %v; want dyld to load @rpath/libt.3.dylib", run, out, err)
		}
	}
}
