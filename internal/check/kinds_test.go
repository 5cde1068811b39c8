package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// want is what one slice must show.
type want struct {
	arch, opt, minos string
	ok               bool
	problem          string // substring of a problem, when !ok
}

func TestInputKinds(t *testing.T) {
	k := newKit(t)
	armGood := k.macho("arm_good.o", "arm64-apple-macos11", cversion(lineArmO3, "darwin64-arm64-cc"))
	armBad := k.macho("arm_bad.o", "arm64-apple-macos11", cversion(lineArmO0, "darwin64-arm64-cc"))
	armPlain := k.macho("arm_plain.o", "arm64-apple-macos11", plain)
	armNew := k.macho("arm_new.o", "arm64-apple-macos12", plain)
	xGood := k.macho("x_good.o", "x86_64-apple-macos10.12", cversion(lineX86O3, "darwin64-x86_64-cc"))
	xPlain := k.macho("x_plain.o", "x86_64-apple-macos10.12", plain)
	armLib := k.ar("libarm.a", true, armGood, armPlain)
	badLib := k.ar("libbad.a", true, armBad, armPlain)
	xLib := k.ar("libx.a", true, xGood, xPlain)
	fatLib := k.lipo("libfat.a", armLib, xLib)
	pycaLib := k.lipo("libpyca.a", badLib, xLib)
	fatObj := k.lipo("fat.o", armGood, xGood)
	dylib := k.retype("libcrypto.3.dylib", armGood, 6)
	bundle := k.retype("_rust.abi3.so", fatObj, 0) // stays universal; see below
	exe := k.retype("tool", xGood, 2)
	mixed := k.ar("libmixed.a", true, armGood, armNew)
	noLine := k.macho("noline.o", "arm64-apple-macos11", cversion("", "darwin64-arm64-cc"))
	elfSO := k.elf("libcrypto.so.3", cversion(lineGccO2, "linux-x86_64"), "-shared", "-fPIC")
	elfExe := k.elf("consumer", consumer)
	elfObj := k.elf("cv.o", cversion(lineGccO2, "linux-x86_64"), "-c")
	elfLib := k.ar("libelf.a", false, elfObj)

	for _, tc := range []struct {
		name   string
		path   string
		opts   Options
		format string
		slices []want
		ok     bool
		fail   string // substring of a failure
		note   string // substring of the only note
	}{
		{name: "thin object", path: armGood, format: "mach-o", ok: true,
			slices: []want{{"arm64", "-O3", "11.0", true, ""}}},
		{name: "thin dylib", path: dylib, format: "mach-o", ok: true, opts: Options{MinOpt: "3"},
			slices: []want{{"arm64", "-O3", "11.0", true, ""}}},
		{name: "executable", path: exe, format: "mach-o", ok: true,
			slices: []want{{"x86_64", "-O3", "10.12", true, ""}}},
		{name: "universal object", path: fatObj, format: "universal", ok: true, opts: Options{Archs: []string{"arm64", "x86_64"}},
			slices: []want{{"x86_64", "-O3", "10.12", true, ""}, {"arm64", "-O3", "11.0", true, ""}}},
		{name: "universal bundle named .so", path: bundle, format: "universal", ok: true,
			slices: []want{{"x86_64", "-O3", "10.12", true, ""}, {"arm64", "-O3", "11.0", true, ""}}},
		{name: "thin static library", path: armLib, format: "ar", ok: true, opts: Options{MinOpt: "3", Archs: []string{"arm64"}},
			slices: []want{{"arm64", "-O3", "11.0", true, ""}}},
		{name: "universal static library", path: fatLib, format: "universal", ok: true, opts: Options{MinOpt: "3", Archs: []string{"x86_64", "arm64"}},
			slices: []want{{"x86_64", "-O3", "10.12", true, ""}, {"arm64", "-O3", "11.0", true, ""}}},
		{name: "pyca universal -O0", path: pycaLib, format: "universal", fail: "built without optimisation (-O0)",
			slices: []want{{"x86_64", "-O3", "10.12", true, ""}, {"arm64", "-O0", "11.0", false, "built without optimisation (-O0)"}}},
		{name: "missing arch", path: armLib, format: "ar", opts: Options{Archs: []string{"arm64", "x86_64"}}, fail: "no x86_64 slice",
			slices: []want{{"arm64", "-O3", "11.0", true, ""}}},
		{name: "mixed minos", path: mixed, format: "ar", ok: true,
			slices: []want{{"arm64", "-O3", "mixed: 11.0 (1 objects), 12.0 (1 objects)", true, ""}}},
		// Unknown, not -O0: reported, failing only with -strict.
		{name: "libcrypto strings without compiler line", path: noLine, format: "mach-o", ok: true,
			note:   `libcrypto's build information (platform "darwin64-arm64-cc") has no "compiler: " line: how it was optimised cannot be shown; its machine code gives too little evidence (0 functions measured, 30 needed) (reported, not failed; -strict fails it)`,
			slices: []want{{"arm64", "", "11.0", true, ""}}},
		{name: "libcrypto strings without compiler line, -strict", path: noLine, format: "mach-o", opts: Options{Strict: true},
			fail:   `has no "compiler: " line: how it was optimised cannot be shown; its machine code gives too little evidence (0 functions measured, 30 needed) (unknown fails with -strict)`,
			slices: []want{{"arm64", "", "11.0", false, "(unknown fails with -strict)"}}},
		{name: "ELF shared object", path: elfSO, format: "elf", ok: true,
			slices: []want{{"x86_64", "-O2", "", true, ""}}},
		{name: "ELF shared object minopt 3", path: elfSO, format: "elf", opts: Options{MinOpt: "3"}, fail: "optimises at -O2",
			slices: []want{{"x86_64", "-O2", "", false, "expected at least -O3"}}},
		{name: "ELF static archive, arch alias", path: elfLib, format: "ar", ok: true, opts: Options{Archs: []string{"amd64"}},
			slices: []want{{"x86_64", "-O2", "", true, ""}}},
		{name: "ELF executable linking OpenSSL dynamically", path: elfExe, format: "elf", fail: "no OpenSSL build information",
			note: "\"OpenSSL 4.0.2 25 Aug 2026\" but no libcrypto build info", slices: []want{{"x86_64", "", "", true, ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Path, o.Digests = tc.path, true
			res, err := Check(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != tc.ok {
				t.Errorf("OK = %v, failures %q", res.OK, res.Failures)
			}
			if tc.fail != "" && !strings.Contains(strings.Join(res.Failures, "\n"), tc.fail) {
				t.Errorf("failures %q lack %q", res.Failures, tc.fail)
			}
			if tc.note != "" && (len(res.Notes) != 1 || !strings.Contains(res.Notes[0], tc.note)) || tc.note == "" && len(res.Notes) > 0 {
				t.Errorf("notes %q, want %q", res.Notes, tc.note)
			}
			if len(res.Binaries) != 1 {
				t.Fatalf("%d binaries: %+v", len(res.Binaries), res.Binaries)
			}
			b := res.Binaries[0]
			if b.Format != tc.format || b.Error != "" || len(b.SHA256) != 64 {
				t.Errorf("format %q error %q sha256 %q", b.Format, b.Error, b.SHA256)
			}
			if len(b.Slices) != len(tc.slices) {
				t.Fatalf("slices %+v, want %d", b.Slices, len(tc.slices))
			}
			for i, w := range tc.slices {
				s := b.Slices[i]
				if s.Arch != w.arch || s.Opt != w.opt || s.MinOS != w.minos || s.OK != w.ok {
					t.Errorf("slice %d: arch %q opt %q minos %q ok %v; want %+v", i, s.Arch, s.Opt, s.MinOS, s.OK, w)
				}
				if w.problem != "" && (len(s.Problems) == 0 || !strings.Contains(s.Problems[0].Message, w.problem)) {
					t.Errorf("slice %d problems %+v lack %q", i, s.Problems, w.problem)
				}
			}
		})
	}

	// A wheel holding several of them, plus what else a wheel has, and a
	// nested archive that is noted, not opened.
	t.Run("wheel", func(t *testing.T) {
		nested := writeWheel(t, k.path("nested.whl"), wheelMember{name: "x/_bad.so", file: badLib})
		whl := writeWheel(t, k.path("cryptography-46.0.0-cp311-abi3-macosx_10_9_universal2.whl"),
			wheelMember{name: "cryptography/__init__.py", data: "print('hi')\n"},
			wheelMember{name: "cryptography/hazmat/bindings/_rust.abi3.so", file: pycaLib},
			wheelMember{name: "cryptography/_other.abi3.so", file: fatObj},
			wheelMember{name: "cryptography/empty.txt", data: ""},
			wheelMember{name: "vendor/nested.whl", file: nested})
		res, err := Check(context.Background(), Options{Path: whl, Archs: []string{"arm64", "x86_64"}, Digests: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || len(res.Binaries) != 2 || res.Skipped != 5 {
			t.Fatalf("ok %v, %d binaries, %d skipped: %+v", res.OK, len(res.Binaries), res.Skipped, res)
		}
		if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "(cryptography/hazmat/bindings/_rust.abi3.so)(arm_bad.o) arm64: compiler line has no -O flag (built without optimisation (-O0))") {
			t.Errorf("failures %q", res.Failures)
		}
		if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "vendor/nested.whl): nested archive, not inspected") {
			t.Errorf("notes %q", res.Notes)
		}
		for _, b := range res.Binaries {
			if b.Path != whl || b.Member == "" || len(b.SHA256) != 64 || b.Size == 0 {
				t.Errorf("binary %+v", b)
			}
		}
	})

	// An osslbuild artifact: its manifest names the architecture and the
	// deployment target, which check then requires, in a directory and in
	// a tarball (where manifest.json comes last).
	art := filepath.Join(k.dir, "dist", "openssl-macos-arm64")
	if err := os.MkdirAll(filepath.Join(art, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	testfixture.CopyFile(t, armLib, filepath.Join(art, "lib", "libcrypto.a"))
	testfixture.CopyFile(t, k.ar("libssl.a", true, armPlain), filepath.Join(art, "lib", "libssl.a"))
	os.WriteFile(filepath.Join(art, "include.h"), []byte("#define X 1\n"), 0o644)
	writeManifest(t, art, "openssl-macos-arm64", "arm64", "11.0")
	tgz := tarball(t, art)
	wrong := filepath.Join(k.dir, "wrong", "openssl-macos-arm64")
	if err := os.MkdirAll(filepath.Join(wrong, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	testfixture.CopyFile(t, armLib, filepath.Join(wrong, "lib", "libcrypto.a"))
	writeManifest(t, wrong, "openssl-macos-arm64", "x86_64", "10.12")
	for _, tc := range []struct {
		name, path string
		ok         bool
		fail       string
	}{
		{"artifact directory", art, true, ""},
		{"artifact directory, trailing slash", art + "/", true, ""},
		{"artifact tarball", tgz, true, ""},
		{"artifact whose manifest disagrees", wrong, false, "libcrypto.a(arm_good.o) arm64: CPU type is arm64, expected x86_64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(context.Background(), Options{Path: tc.path, MinOpt: "3"})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != tc.ok || (tc.fail != "" && !strings.Contains(strings.Join(res.Failures, "\n"), tc.fail)) {
				t.Fatalf("ok %v failures %q", res.OK, res.Failures)
			}
			for _, b := range res.Binaries {
				if b.Artifact != "openssl-macos-arm64" {
					t.Errorf("%s: artifact %q", b.Name(), b.Artifact)
				}
			}
			if tc.ok && len(res.Binaries) != 2 {
				t.Errorf("%d binaries", len(res.Binaries))
			}
		})
	}
	t.Run("manifest minos", func(t *testing.T) {
		writeManifest(t, wrong, "openssl-macos-arm64", "arm64", "12.0")
		res, err := Check(context.Background(), Options{Path: wrong})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || !strings.Contains(strings.Join(res.Failures, "\n"), "libcrypto.a(arm_good.o) arm64: LC_BUILD_VERSION minos is 11.0, expected 12.0") {
			t.Fatalf("failures %q", res.Failures)
		}
	})

	// A directory of everything: binaries found by magic, the rest skipped.
	t.Run("directory", func(t *testing.T) {
		res, err := Check(context.Background(), Options{Path: k.dir})
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, b := range res.Binaries {
			kinds[b.Format]++
			if b.Error != "" {
				t.Errorf("%s: %s", b.Name(), b.Error)
			}
		}
		if kinds["elf"] < 3 || kinds["universal"] < 5 || kinds["mach-o"] < 5 || kinds["ar"] < 5 || res.Skipped == 0 {
			t.Errorf("kinds %v, skipped %d", kinds, res.Skipped)
		}
		if res.OK {
			t.Error("directory with -O0 members passed")
		}
	})
}

// writeManifest writes dir's manifest as a build does: every file's
// digest, the target's architecture, deployment target and Configure
// target, and the OpenSSL version.
func writeManifest(t testing.TB, dir, name, arch, minos string) {
	t.Helper()
	os.Remove(filepath.Join(dir, artifact.ManifestName))
	m := sliceManifest(name, arch, minos)
	if err := artifact.WriteManifest(context.Background(), dir, m); err != nil {
		t.Fatal(err)
	}
}

// sliceManifest is a slice's manifest as osslbuild's build records it,
// its Configure record included.
func sliceManifest(name, arch, minos string) *artifact.Manifest {
	s := platform.Slice{Name: arch, OS: "macos", Arch: arch, MinOS: minos, Configure: "darwin64-" + arch + "-cc",
		Flags: []string{"-mmacosx-version-min=" + minos}, Options: []string{"no-shared"}}
	return &artifact.Manifest{Schema: artifact.Schema, Name: name, OpenSSL: artifact.Source{Version: "4.0.2"}, Target: s,
		Configure: artifact.Configure{
			Argv:   append([]string{"perl", "Configure", s.Configure, "--prefix=/opt/osslbuild", "--openssldir=/etc/ssl"}, append(s.Options, s.Flags...)...),
			CFLAGS: "-O3 -Wall " + s.Flags[0],
		}}
}
