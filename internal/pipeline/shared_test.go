package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/check"
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// sharedRecipe turns the mini recipe r into one of libraries (a TOML
// array) with install_name installName ("" for the default) and options
// without no-shared.
func sharedRecipe(r, libraries, installName string) string {
	head := "libraries = " + libraries + "\n"
	if installName != "" {
		head += "install_name = " + installName + "\n"
	}
	return strings.Replace(r, `options = [{ name = "no-shared" }]`, head+"options = []", 1)
}

// sharedMini builds target from the mini tree with a recipe of shared
// libraries (install names installName, static ones too when static).
func sharedMini(t *testing.T, target, libraries, installName string, edits ...map[string][2]string) (*pipeline.Result, error, string) {
	t.Helper()
	minitest.Require(t)
	var e map[string][2]string
	if len(edits) > 0 {
		e = edits[0]
	}
	s := miniSettings(t, e)
	editRecipe(t, s, func(r string) string { return sharedRecipe(r, libraries, installName) })
	var log strings.Builder
	res, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), target, nil)
	return res, err, log.String()
}

// TestMiniShared: a recipe of shared libraries gives an artifact of
// dylibs over the mini tree: versioned names only (no links, no archives),
// install names @rpath/..., libssl loading libcrypto by it, ad-hoc
// signatures that hold after the rewrite (arm64), .pc files naming the
// dylibs, and a manifest recording it all.
func TestMiniShared(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"arm64", "x86_64"} {
		t.Run(target, func(t *testing.T) {
			res, err, log := sharedMini(t, target, `["shared"]`, "")
			if err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			t.Logf("log:\n%s", log)
			lib := filepath.Join(res.Published.Dir, "lib")
			names := libEntries(t, lib, false)
			if want := []string{"libcrypto.9.dylib", "libssl.9.dylib"}; !slices.Equal(names, want) {
				t.Errorf("lib/ holds %v, want %v", names, want)
			}
			for _, tt := range []struct{ lib, id, loads string }{
				{"libcrypto.9.dylib", "@rpath/libcrypto.9.dylib", ""},
				{"libssl.9.dylib", "@rpath/libssl.9.dylib", "@rpath/libcrypto.9.dylib"},
			} {
				b, err := os.ReadFile(filepath.Join(lib, tt.lib))
				if err != nil {
					t.Fatal(err)
				}
				m, err := inspect.ParseMachOBytes(b)
				if err != nil {
					t.Fatal(err)
				}
				if m.ID == nil || m.ID.Name != tt.id {
					t.Errorf("%s: install name %+v, want %s", tt.lib, m.ID, tt.id)
				}
				if tt.loads != "" && !slices.ContainsFunc(m.Loads, func(d inspect.Dylib) bool { return d.Name == tt.loads }) {
					t.Errorf("%s: loads %+v, want %s", tt.lib, m.Loads, tt.loads)
				}
				f, err := inspect.InspectBytes(tt.lib, b)
				if err != nil {
					t.Fatal(err)
				}
				o := f.Slices[0].Objects[0]
				if cs := o.Signature; target == "arm64" && (o.SignatureErr != nil || cs == nil || !cs.Valid()) {
					t.Errorf("%s: signature %+v, %v", tt.lib, cs, o.SignatureErr)
				}
			}
			m, err := artifact.LoadManifest(context.Background(), res.Published.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if m.Target.Shared == nil || m.Target.Shared.InstallName != "@rpath" || m.Target.Shared.Version != "9" || m.Target.Shared.Static {
				t.Errorf("manifest target.shared %+v", m.Target.Shared)
			}
			sig := "none"
			if target == "arm64" {
				sig = "ad hoc (linker-signed), valid"
			}
			if len(m.Dylibs) != 2 || m.Dylibs[1].InstallName != "@rpath/libssl.9.dylib" || !slices.Contains(m.Dylibs[1].Loads, "@rpath/libcrypto.9.dylib") ||
				m.Dylibs[0].Current != "9.0" || m.Dylibs[0].Compatibility != "9.0" || m.Dylibs[0].Signature != sig {
				t.Errorf("manifest dylibs %+v", m.Dylibs)
			}
			// The link stage linked the consumer against the dylibs, for
			// the deployment target.
			if len(m.LinkChecks) != 1 || !slices.Equal(m.LinkChecks[0].Libraries, []string{"libssl.9.dylib", "libcrypto.9.dylib"}) ||
				m.LinkChecks[0].Platform != "macos "+m.Target.MinOS || m.LinkChecks[0].Members != 0 {
				t.Errorf("link checks %+v", m.LinkChecks)
			}
		})
	}
}

// TestMiniSharedOnlyLeavesArchivesOut: a recipe of shared libraries alone
// never makes the static ones (OpenSSL compiles every source twice when
// both are made): with the archives' rules broken, ["shared"] still builds
// and validates, its exports held to the release's objects all the same,
// while ["static", "shared"] fails in make. The two share no make-cache
// entry, though their Configure lines are the same: the second, run after
// the first into the same make cache, makes rather than restores.
func TestMiniSharedOnlyLeavesArchivesOut(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	broken := map[string][2]string{"Makefile.in": {"\t$(AR) r $@ $(CRYPTO_OBJ)\n", "\techo 'the archives are made' >&2; exit 1\n"}}
	cache := filepath.Join(t.TempDir(), "make")
	build := func(libraries string) (*pipeline.Result, error, string) {
		s := miniSettings(t, broken)
		s.Rebuild, s.MakeCache = false, cache
		editRecipe(t, s, func(r string) string { return sharedRecipe(r, libraries, "") })
		var log strings.Builder
		res, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), "linux-x86_64", nil)
		return res, err, log.String()
	}
	res, err, log := build(`["shared"]`)
	if err != nil {
		t.Fatalf("a shared-only build made the archives: %v\n%s", err, log)
	}
	if names := libEntries(t, filepath.Join(res.Published.Dir, "lib"), true); !slices.Equal(names, []string{"libcrypto.so.9", "libssl.so.9"}) {
		t.Errorf("lib/ holds %v", names)
	}
	if !strings.Contains(log, "compiling 3 objects") || !strings.Contains(log, "validated libcrypto.so.9 x86_64") {
		t.Errorf("the log does not show the three shared objects compiled and the libraries validated:\n%s", log)
	}
	_, err, log = build(`["static", "shared"]`)
	if err == nil || !strings.Contains(err.Error(), "the archives are made") {
		t.Errorf("static and shared libraries: want make to fail making the archives, got %v\n%s", err, log)
	}
	if strings.Contains(log, "restored from the make cache") {
		t.Errorf("static and shared libraries restored the shared-only make:\n%s", log)
	}
}

// TestMiniSharedPrefix: install_name = "prefix" gives installer-style
// dylibs: install names under the install prefix's lib/, libssl loading
// libcrypto by it, recorded in the manifest, and check holding the
// artifact to those records. The recipe's Linux target still builds, with
// SONAMEs.
func TestMiniSharedPrefix(t *testing.T) {
	t.Parallel()
	res, err, log := sharedMini(t, "x86_64", `["shared"]`, `"prefix"`)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	dir := res.Published.Dir
	for _, tt := range []struct{ lib, id, loads string }{
		{"libcrypto.9.dylib", "/opt/osslbuild/lib/libcrypto.9.dylib", ""},
		{"libssl.9.dylib", "/opt/osslbuild/lib/libssl.9.dylib", "/opt/osslbuild/lib/libcrypto.9.dylib"},
	} {
		m, err := inspect.ParseMachOBytes(mustRead(t, filepath.Join(dir, "lib", tt.lib)))
		if err != nil {
			t.Fatal(err)
		}
		if m.ID == nil || m.ID.Name != tt.id {
			t.Errorf("%s: install name %+v, want %s", tt.lib, m.ID, tt.id)
		}
		if tt.loads != "" && !slices.ContainsFunc(m.Loads, func(d inspect.Dylib) bool { return d.Name == tt.loads }) {
			t.Errorf("%s: loads %+v, want %s", tt.lib, m.Loads, tt.loads)
		}
	}
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Target.Shared == nil || m.Target.Shared.InstallName != "prefix" || len(m.Dylibs) != 2 || m.Dylibs[1].InstallName != "/opt/osslbuild/lib/libssl.9.dylib" {
		t.Errorf("manifest: shared %+v, dylibs %+v", m.Target.Shared, m.Dylibs)
	}
	cr, err := check.Check(context.Background(), check.Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Failures) > 0 {
		t.Errorf("check: %q", cr.Failures)
	}
	// A manifest that records another install name than the dylib's,
	// resealed, is refused by check, naming both.
	bad := testfixture.CopyTree(t, dir, filepath.Join(t.TempDir(), filepath.Base(dir)))
	editManifest(t, bad, func(m *artifact.Manifest) { m.Dylibs[1].InstallName = "/usr/local/lib/libssl.9.dylib" })
	cr, err = check.Check(context.Background(), check.Options{Path: bad})
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Join(cr.Failures, "\n"); !strings.Contains(f, "install name is /opt/osslbuild/lib/libssl.9.dylib, expected /usr/local/lib/libssl.9.dylib") {
		t.Errorf("check on a manifest recording another install name: %q", cr.Failures)
	}

	// The same recipe's Linux target builds ELF libraries with their
	// SONAMEs, and the log says install_name did not apply to them.
	testfixture.Tools(t, "cc")
	res, err, log = sharedMini(t, "linux-x86_64", `["shared"]`, `"prefix"`)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if !strings.Contains(log, `install_name = "prefix" names the dylibs of macOS targets; linux-x86_64's ELF libraries carry their SONAMEs (libcrypto.so.9, libssl.so.9)`) {
		t.Errorf("the log does not say install_name left the ELF libraries alone:\n%s", log)
	}
	if m, err := artifact.LoadManifest(context.Background(), res.Published.Dir); err != nil || len(m.Dylibs) != 2 || m.Dylibs[1].InstallName != "libssl.so.9" {
		t.Errorf("manifest dylibs %+v, %v", m.Dylibs, err)
	}
}

// TestMiniSharedUniversal2: build:universal2 of a recipe of shared
// libraries merges each dylib with lipo: a universal libcrypto.9.dylib and
// libssl.9.dylib whose slices keep their install names and (arm64) valid
// signatures, recorded per architecture in the manifest.
func TestMiniSharedUniversal2(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	s := miniSettings(t, nil)
	editRecipe(t, s, func(r string) string { return sharedRecipe(r, `["shared", "static"]`, "") })
	var log strings.Builder
	res, err := pipeline.Universal2(context.Background(), s, minitest.Runtime(t, &log))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	lib := filepath.Join(res.Published.Dir, "lib")
	names := libEntries(t, lib, true)
	if want := []string{"libcrypto.9.dylib", "libcrypto.a", "libssl.9.dylib", "libssl.a"}; !slices.Equal(names, want) {
		t.Errorf("lib/ holds %v, want %v", names, want)
	}
	f, err := inspect.Inspect(filepath.Join(lib, "libssl.9.dylib"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Slices) != 2 {
		t.Fatalf("universal libssl has %d slices", len(f.Slices))
	}
	for _, sl := range f.Slices {
		m := sl.Objects[0].MachO
		if m.ID == nil || m.ID.Name != "@rpath/libssl.9.dylib" {
			t.Errorf("%s: install name %+v", sl.Arch, m.ID)
		}
		if cs := sl.Objects[0].Signature; sl.Arch == "arm64" && (cs == nil || !cs.Valid()) {
			t.Errorf("arm64 slice's signature in the universal file: %+v", cs)
		}
	}
	m, err := artifact.LoadManifest(context.Background(), res.Published.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Target.Shared == nil || len(m.Dylibs) != 4 {
		t.Errorf("universal manifest: shared %+v, dylibs %+v", m.Target.Shared, m.Dylibs)
	}

	// check holds the artifact's dylibs to its manifest like its archives,
	// and catches one changed after the build (its signature).
	res2, err := check.Check(context.Background(), check.Options{Path: res.Published.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Failures) > 0 {
		t.Errorf("check on the shared universal2 artifact: %q", res2.Failures)
	}
	bad := testfixture.CopyTree(t, res.Published.Dir, filepath.Join(t.TempDir(), "openssl-macos-universal2"))
	p := filepath.Join(bad, "lib", "libcrypto.9.dylib")
	bb, _ := os.ReadFile(p)
	for _, sl := range mustInspect(t, p).Slices {
		if sl.Arch == "arm64" {
			bb[sl.Offset+100] ^= 1
		}
	}
	os.WriteFile(p, bb, 0o755)
	res3, err := check.Check(context.Background(), check.Options{Path: bad})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res3.Failures, "\n"), "libcrypto.9.dylib") {
		t.Errorf("check on a changed dylib: %q", res3.Failures)
	}
	// With its digest resealed in the manifest, the dylib itself is what
	// check refuses: the arm64 slice's signature no longer holds.
	reseal(t, bad, "lib/libcrypto.9.dylib")
	res4, err := check.Check(context.Background(), check.Options{Path: bad})
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Join(res4.Failures, "\n"); !strings.Contains(f, "libcrypto.9.dylib") || !strings.Contains(f, "code signature is stale") || strings.Contains(f, "changed: the manifest lists") {
		t.Errorf("check on a changed dylib whose digest was resealed: %q", res4.Failures)
	}
}

// requireRefused builds target from the mini tree (with edits) with a
// recipe of shared libraries, and requires a refusal saying each of want,
// with nothing published.
func requireRefused(t *testing.T, target string, edits map[string][2]string, want ...string) {
	t.Helper()
	res, err, log := sharedMini(t, target, `["shared"]`, "", edits)
	t.Logf("refused: %v", err)
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("want a refusal saying %q, got %v\n%s", w, err, log)
		}
	}
	if res != nil {
		t.Errorf("published %+v", res.Published)
	}
}

// libEntries names what the directory lib holds, sorted; with files, only
// what is not a directory (pkgconfig/ and cmake/ sit beside the libraries).
func libEntries(t *testing.T, lib string, files bool) []string {
	t.Helper()
	ents, _ := os.ReadDir(lib)
	var names []string
	for _, e := range ents {
		if !files || !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

func mustInspect(t *testing.T, p string) *inspect.File {
	t.Helper()
	f, err := inspect.Inspect(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMiniSharedRefused: what the build would slip into a dylib or an
// artifact is refused, naming the dylib and what was expected: a symbol no
// object of libcrypto.a defines, and a link among the installed files.
// Nothing is published.
func TestMiniSharedRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		edits map[string][2]string
		want  string
	}{
		{"exported symbol from elsewhere", map[string][2]string{"Makefile.in": {
			"CRYPTO_SHOBJ=crypto/libcrypto-shlib-cversion.o crypto/libcrypto-shlib-mem.o",
			"CRYPTO_SHOBJ=crypto/libcrypto-shlib-cversion.o crypto/libcrypto-shlib-mem.o crypto/extra.o\ncrypto/extra.o:\n\tprintf 'int not_openssl(void){return 1;}\\n' > crypto/extra.c && $(CC) $(CNF_CFLAGS) $(CFLAGS) -c -o $@ crypto/extra.c\n"}},
			"libcrypto.9.dylib arm64: exports 1 symbols no object of the release's libraries defines: _not_openssl"},
		{"a link in the artifact", map[string][2]string{"Makefile.in": {
			"for l in $(INSTALL_LIBS); do cp $$l $(DESTDIR)$(INSTALLTOP)/lib/; done",
			"for l in $(INSTALL_LIBS); do cp $$l $(DESTDIR)$(INSTALLTOP)/lib/; done; ln -s libssl.a $(DESTDIR)$(INSTALLTOP)/lib/libextra.a"}},
			"lib/libextra.a is not a regular file"},
	} {
		t.Run(tt.name, func(t *testing.T) { requireRefused(t, "arm64", tt.edits, tt.want) })
	}
}

// TestSharedRealBuild: a recipe of shared libraries builds the real
// OpenSSL 3.5.7 for arm64 into dylibs: @rpath install names, libssl
// loading libcrypto by it and libSystem only, valid ad-hoc signatures
// after the rewrite, .pc and CMake files naming the versioned dylibs,
// every dylib recorded in the manifest, and check passing it at -minopt=3
// (the dylibs' own compiler line and machine code).
func TestSharedRealBuild(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(e2e.SharedArm64(t), "dist", "shared-openssl-aarch64-apple-darwin")
	names := libEntries(t, filepath.Join(dir, "lib"), true)
	if want := []string{"libcrypto.3.dylib", "libssl.3.dylib"}; !slices.Equal(names, want) {
		t.Errorf("lib/ holds %v, want %v", names, want)
	}
	for _, tt := range []struct{ lib, id string }{{"libcrypto.3.dylib", "@rpath/libcrypto.3.dylib"}, {"libssl.3.dylib", "@rpath/libssl.3.dylib"}} {
		f := mustInspect(t, filepath.Join(dir, "lib", tt.lib))
		o := f.Slices[0].Objects[0]
		if o.MachO.ID == nil || o.MachO.ID.Name != tt.id || o.Signature == nil || !o.Signature.Valid() {
			t.Errorf("%s: install name %+v, signature %+v", tt.lib, o.MachO.ID, o.Signature)
		}
		for _, l := range o.MachO.Loads {
			if l.Name != "/usr/lib/libSystem.B.dylib" && l.Name != "@rpath/libcrypto.3.dylib" {
				t.Errorf("%s loads %s", tt.lib, l.Name)
			}
		}
	}
	for file, want := range map[string]string{
		"lib/pkgconfig/libcrypto.pc":            "Libs: ${libdir}/libcrypto.3.dylib",
		"lib/cmake/OpenSSL/OpenSSLConfig.cmake": "/libcrypto.3.dylib",
	} {
		if b := mustRead(t, filepath.Join(dir, file)); !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q", file, want)
		}
	}
	if b := mustRead(t, filepath.Join(dir, "lib/cmake/OpenSSL/OpenSSLConfig.cmake")); strings.Contains(string(b), "/libcrypto.dylib") {
		t.Error("the CMake config names libcrypto.dylib, which the artifact does not hold")
	}
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Dylibs) != 2 || m.Dylibs[0].Signature != "ad hoc (linker-signed), valid" || m.Dylibs[0].Current != "3.0" {
		t.Errorf("manifest dylibs %+v", m.Dylibs)
	}
	res, err := check.Check(context.Background(), check.Options{Path: dir, MinOpt: "3", Archs: []string{"arm64"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 || len(res.Artifacts) != 1 || !res.Artifacts[0].OK {
		t.Errorf("check: %q %+v", res.Failures, res.Artifacts)
	}
}

// TestMiniSharedReproducible: two builds of a recipe of shared libraries,
// in different directories, give byte-identical tarballs: LC_UUID and the
// signature derive from the contents, the install names from the recipe.
// The macOS slices are proven through universal2's: its dylibs hold each
// slice's bytes as they are, so two equal merges are two equal arm64 and
// two equal x86_64 builds (a slice of its own would build each twice more).
func TestMiniSharedReproducible(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"linux-x86_64"} {
		t.Run(target, func(t *testing.T) {
			testfixture.Tools(t, "cc")
			var sums []string
			for i := 0; i < 2; i++ {
				res, err, log := sharedMini(t, target, `["shared"]`, "")
				if err != nil {
					t.Fatalf("%v\n%s", err, log)
				}
				sums = append(sums, res.Published.Digests.SHA256)
			}
			if sums[0] != sums[1] {
				t.Errorf("two builds: %s and %s", sums[0], sums[1])
			}
		})
	}
	t.Run("universal2", func(t *testing.T) {
		minitest.Require(t)
		var sums []string
		for i := 0; i < 2; i++ {
			s := miniSettings(t, nil)
			editRecipe(t, s, func(r string) string { return sharedRecipe(r, `["shared"]`, "") })
			var log strings.Builder
			res, err := pipeline.Universal2(context.Background(), s, minitest.Runtime(t, &log))
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			sums = append(sums, res.Published.Digests.SHA256)
		}
		if sums[0] != sums[1] {
			t.Errorf("two universal2 builds: %s and %s", sums[0], sums[1])
		}
	})
}

// TestMiniSharedLinux: a recipe of shared libraries gives a linux-x86_64
// artifact of ELF shared libraries: libcrypto.so.9 and libssl.so.9 (no
// links, no archives), SONAMEs as OpenSSL links them, libssl needing
// libcrypto by its SONAME and glibc only, no run path, the manifest
// recording each (the .pc and CMake files: TestSharedRealLinux, as the
// mini tree installs none). A program linked
// against them runs here, finding them through its run path, and check
// passes the artifact.
func TestMiniSharedLinux(t *testing.T) {
	t.Parallel()
	testfixture.Tools(t, "cc")
	res, err, log := sharedMini(t, "linux-x86_64", `["shared"]`, "")
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	dir := res.Published.Dir
	lib := filepath.Join(dir, "lib")
	names := libEntries(t, lib, false)
	if want := []string{"libcrypto.so.9", "libssl.so.9"}; !slices.Equal(names, want) {
		t.Errorf("lib/ holds %v, want %v", names, want)
	}
	for _, tt := range []struct {
		lib    string
		needed []string
	}{
		{"libcrypto.so.9", nil},
		{"libssl.so.9", []string{"libcrypto.so.9"}},
	} {
		f := mustInspect(t, filepath.Join(lib, tt.lib))
		e := f.Slices[0].Objects[0].ELF
		if e == nil || e.Dynamic == nil {
			t.Fatalf("%s: no ELF dynamic section read: %+v", tt.lib, f.Slices[0].Objects[0])
		}
		// The mini libraries call nothing of glibc's, and Debian's gcc
		// links --as-needed: libc.so.6 may be missing.
		needed := slices.DeleteFunc(slices.Clone(e.Dynamic.Needed), func(n string) bool { return n == "libc.so.6" })
		if d := e.Dynamic; d.Soname != tt.lib || !slices.Equal(needed, tt.needed) || len(d.Rpath)+len(d.Runpath) > 0 {
			t.Errorf("%s: dynamic section %+v, want SONAME %s and needed %v, no run path", tt.lib, d, tt.lib, tt.needed)
		}
	}
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Target.Shared == nil || m.Target.Shared.Version != "9" || len(m.Dylibs) != 2 ||
		m.Dylibs[1].InstallName != "libssl.so.9" || !slices.Contains(m.Dylibs[1].Loads, "libcrypto.so.9") ||
		m.Dylibs[0].Signature != "none" || m.Dylibs[0].Current != "" {
		t.Errorf("manifest: shared %+v, dylibs %+v", m.Target.Shared, m.Dylibs)
	}
	if len(m.LinkChecks) != 1 || !strings.Contains(m.LinkChecks[0].Result, "shared libraries") || !slices.Equal(m.LinkChecks[0].Libraries, []string{"libssl.so.9", "libcrypto.so.9"}) {
		t.Errorf("link checks %+v", m.LinkChecks)
	}

	// A program linked against the artifact runs, from elsewhere, and it
	// is the artifact's libcrypto it loads: without it, it cannot start.
	tc, err := toolchain.For("", m.Target)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "testdata", "mini-openssl", "consumer.c"))
	prog := filepath.Join(t.TempDir(), "consumer")
	if _, err := link.Build(context.Background(), tc, dir, m.Target, link.Program{Name: "consumer.c", Source: src}, prog); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(prog)
	run.Dir = t.TempDir()
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("the program linked against the shared libraries does not run: %v\n%s", err, out)
	}
	moved := filepath.Join(lib, "libcrypto.so.9")
	if err := os.Rename(moved, moved+".away"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(prog).CombinedOutput(); err == nil || !strings.Contains(string(out), "libcrypto.so.9") {
		t.Errorf("the program ran without the artifact's libcrypto.so.9: %v\n%s", err, out)
	}
	if err := os.Rename(moved+".away", moved); err != nil {
		t.Fatal(err)
	}

	cr, err := check.Check(context.Background(), check.Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Failures) > 0 {
		t.Errorf("check on the shared linux artifact: %q", cr.Failures)
	}
	// check's JSON gives each library's dynamic section.
	found := false
	for _, b := range cr.Binaries {
		if filepath.Base(b.Path) != "libssl.so.9" {
			continue
		}
		found = true
		if d := b.Slices[0].Dylib; d == nil || d.InstallName != "libssl.so.9" || !slices.Contains(d.Loads, "libcrypto.so.9") || len(d.Rpaths) > 0 {
			t.Errorf("check's dylib record of libssl.so.9: %+v", d)
		}
	}
	if !found {
		t.Errorf("check reported no libssl.so.9: %+v", cr.Binaries)
	}
}

// TestMiniSharedLinuxRefused: what an ELF library must not carry is
// refused at validation, naming the library and what was expected; nothing
// is published.
func TestMiniSharedLinuxRefused(t *testing.T) {
	t.Parallel()
	testfixture.Tools(t, "cc")
	extra := func(v string) map[string][2]string {
		return map[string][2]string{"Makefile.in": {"MINI_SHLIB_EXTRA=\n", "MINI_SHLIB_EXTRA=" + v + "\n"}}
	}
	for _, tt := range []struct {
		name  string
		edits map[string][2]string
		want  []string
	}{
		{"an extra dependency", extra("-Wl,--no-as-needed -lm"), []string{"libcrypto.so.9 x86_64: DT_NEEDED libm.so.6: expected only libc.so.6"}},
		{"a run path into the build directory", extra("-Wl,--disable-new-dtags,-rpath,$(CURDIR)"), []string{"libcrypto.so.9 x86_64: run path /", "names the build directory"}},
		{"a DT_RUNPATH", extra("-Wl,--enable-new-dtags,-rpath,/usr/local/lib"), []string{"libcrypto.so.9 x86_64: run path /usr/local/lib (DT_RPATH or DT_RUNPATH)"}},
		{"a SONAME that is not the file's", map[string][2]string{"Makefile.in": {
			"-shared -Wl,-soname=$@ -Wl,--version-script=libcrypto.ld", "-shared -Wl,-soname=libcrypto.so -Wl,--version-script=libcrypto.ld"}},
			[]string{"libcrypto.so.9 x86_64: SONAME is libcrypto.so, expected libcrypto.so.9"}},
		{"an exported symbol from elsewhere", map[string][2]string{"Makefile.in": {
			"CRYPTO_SHOBJ=crypto/libcrypto-shlib-cversion.o crypto/libcrypto-shlib-mem.o",
			"CRYPTO_SHOBJ=crypto/libcrypto-shlib-cversion.o crypto/libcrypto-shlib-mem.o crypto/extra.o\ncrypto/extra.o:\n\tprintf 'int not_openssl(void){return 1;}\\n' > crypto/extra.c && $(CC) $(CNF_CFLAGS) $(CFLAGS) -c -o $@ crypto/extra.c\n" +
				// ... and listed in the version script, which would hide it.
				"MINI_EXPORT=not_openssl;\n"}},
			[]string{"libcrypto.so.9 x86_64: exports 1 symbols no object of the release's libraries defines: not_openssl"}},
	} {
		t.Run(tt.name, func(t *testing.T) { requireRefused(t, "linux-x86_64", tt.edits, tt.want...) })
	}
}

// TestSharedRealLinux: the recipe of shared libraries builds the real
// OpenSSL 3.5.7 for linux-x86_64 into ELF libraries: libcrypto.so.3 and
// libssl.so.3 with their SONAMEs, libssl needing libcrypto by it and glibc
// only, no run path, .pc and CMake files naming the versioned files, the
// manifest recording both; check passes it at -minopt=3, and smoke links
// smoke/smoke.c against them and runs it here, the program finding the
// artifact's libraries (not the system's OpenSSL) through its run path.
func TestSharedRealLinux(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(e2e.SharedLinux(t), "dist", "shared-openssl-x86_64-unknown-linux-gnu")
	names := libEntries(t, filepath.Join(dir, "lib"), true)
	if want := []string{"libcrypto.so.3", "libssl.so.3"}; !slices.Equal(names, want) {
		t.Errorf("lib/ holds %v, want %v", names, want)
	}
	for _, lib := range names {
		e := mustInspect(t, filepath.Join(dir, "lib", lib)).Slices[0].Objects[0].ELF
		if e == nil || e.Dynamic == nil || e.Dynamic.Soname != lib || len(e.Dynamic.Rpath)+len(e.Dynamic.Runpath) > 0 {
			t.Fatalf("%s: %+v", lib, e)
		}
		for _, n := range e.Dynamic.Needed {
			if n != "libc.so.6" && n != "libcrypto.so.3" {
				t.Errorf("%s needs %s", lib, n)
			}
		}
	}
	for file, want := range map[string]string{
		"lib/pkgconfig/libcrypto.pc":            "Libs: ${libdir}/libcrypto.so.3",
		"lib/pkgconfig/libssl.pc":               "Libs: ${libdir}/libssl.so.3",
		"lib/cmake/OpenSSL/OpenSSLConfig.cmake": `/libcrypto.so.3"`,
	} {
		if b := mustRead(t, filepath.Join(dir, file)); !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q", file, want)
		}
	}
	if b := mustRead(t, filepath.Join(dir, "lib/cmake/OpenSSL/OpenSSLConfig.cmake")); strings.Contains(string(b), `/libcrypto.so"`) || strings.Contains(string(b), ".so.3.3") {
		t.Error("the CMake config names libcrypto.so, which the artifact does not hold, or a name rewritten twice")
	}
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Dylibs) != 2 || m.Dylibs[1].InstallName != "libssl.so.3" || !slices.Contains(m.Dylibs[1].Loads, "libcrypto.so.3") || m.Dylibs[0].Signature != "none" {
		t.Errorf("manifest dylibs %+v", m.Dylibs)
	}
	res, err := check.Check(context.Background(), check.Options{Path: dir, MinOpt: "3", Archs: []string{"x86_64"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 || len(res.Artifacts) != 1 || !res.Artifacts[0].OK {
		t.Errorf("check: %q %+v", res.Failures, res.Artifacts)
	}
	var log strings.Builder
	if err := link.RunSmoke(context.Background(), dir, "", t.TempDir(), &log, func(string) string { return "" }); err != nil {
		t.Fatalf("smoke: %v\n%s", err, log.String())
	}
	if out := log.String(); !strings.Contains(out, "OpenSSL 3.5.7") || strings.Contains(out, "linked only") {
		t.Errorf("smoke did not run the program against the artifact's 3.5.7:\n%s", out)
	}
	t.Logf("smoke:\n%s", log.String())
}

// flipIn flips one byte of a thin Mach-O dylib at the offset at chooses,
// and reseals the artifact's manifest, as an attacker who edits both
// would: only validation of the dylib itself can refuse it then.
func flipIn(t *testing.T, dir, lib string, at func(b []byte, m *inspect.MachO) int) {
	t.Helper()
	p := filepath.Join(dir, "lib", lib)
	b := mustRead(t, p)
	m, err := inspect.ParseMachOBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	b[at(b, m)] ^= 1
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	reseal(t, dir, "lib/"+lib)
}

// inText is the middle of __text; inCodeDirectory the first page hash of
// the code directory.
func inText(b []byte, m *inspect.MachO) int {
	for _, s := range m.Sections {
		if s.Name == "__text" {
			return int(s.Offset) + int(s.Size)/2
		}
	}
	panic("no __text")
}

func inCodeDirectory(b []byte, m *inspect.MachO) int {
	at := int(m.CodeSignature.Offset) + bytes.Index(b[m.CodeSignature.Offset:], []byte{0xfa, 0xde, 0x0c, 0x02})
	return at + (int(b[at+16])<<24 | int(b[at+17])<<16 | int(b[at+18])<<8 | int(b[at+19]))
}

// TestMiniSharedMergeRefuses: build:merge of dylib slices trusts them no
// more than archives. Copies of the two slices, each with a dylib changed
// and its digest resealed, are refused naming the slice, the dylib and
// what was expected: a byte of code or of the code directory changed
// after signing, an install name into the build directory, an extra
// dependency, a link among the libraries. The genuine pair merges.
func TestMiniSharedMergeRefuses(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	s := miniSettings(t, nil)
	editRecipe(t, s, func(r string) string { return sharedRecipe(r, `["shared"]`, "") })
	var log strings.Builder
	rt := minitest.Runtime(t, &log)
	if _, err := pipeline.Universal2(context.Background(), s, rt); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	arm, x86 := filepath.Join(s.Out, "openssl-macos-arm64"), filepath.Join(s.Out, "openssl-macos-x86-64")
	tc, err := toolchain.New("cross")
	if err != nil {
		t.Fatal(err)
	}
	rename := func(lib, id string, change map[string]string) func(t *testing.T, d string) {
		return func(t *testing.T, d string) {
			if err := tc.InstallNames(context.Background(), filepath.Join(d, "lib", lib), id, change); err != nil {
				t.Fatal(err)
			}
			reseal(t, d, "lib/"+lib)
		}
	}
	for _, tt := range []struct {
		name   string
		slice  string
		tamper func(t *testing.T, d string)
		want   []string
	}{
		{"a byte of code changed after signing", arm, func(t *testing.T, d string) { flipIn(t, d, "libcrypto.9.dylib", inText) },
			[]string{"openssl-macos-arm64", "libcrypto.9.dylib arm64", "code signature is stale", "changed after signing"}},
		{"a byte of the code directory changed", arm, func(t *testing.T, d string) { flipIn(t, d, "libssl.9.dylib", inCodeDirectory) },
			[]string{"openssl-macos-arm64", "libssl.9.dylib arm64", "code signature is stale"}},
		{"an install name into the build directory", x86, rename("libssl.9.dylib", "/tmp/build/work-1/lib/libssl.9.dylib", nil),
			[]string{"openssl-macos-x86-64", "libssl.9.dylib x86_64: install name is /tmp/build/work-1/lib/libssl.9.dylib, expected @rpath/libssl.9.dylib"}},
		{"an extra dependency", x86, rename("libssl.9.dylib", "@rpath/libssl.9.dylib", map[string]string{"@rpath/libcrypto.9.dylib": "/usr/local/lib/libcrypto.9.dylib"}),
			[]string{"libssl.9.dylib x86_64: LC_LOAD_DYLIB /usr/local/lib/libcrypto.9.dylib: expected only /usr/lib/libSystem.B.dylib and @rpath/libcrypto.9.dylib"}},
		{"a link among the libraries", arm, func(t *testing.T, d string) {
			os.Symlink("libcrypto.9.dylib", filepath.Join(d, "lib", "libcrypto.dylib"))
		}, []string{"lib/libcrypto.dylib", "symlink"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			copies := map[string]string{}
			for _, d := range []string{arm, x86} {
				copies[d] = testfixture.CopyTree(t, d, filepath.Join(t.TempDir(), filepath.Base(d)))
			}
			tt.tamper(t, copies[tt.slice])
			m := s
			m.Out, m.Work = filepath.Join(t.TempDir(), "dist"), filepath.Join(t.TempDir(), "work")
			_, err := pipeline.Merge(context.Background(), m, rt, copies[arm], copies[x86])
			if !errors.Is(err, universal.ErrRefused) {
				t.Fatalf("want a refusal, got %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			emptyOrMissing(t, m.Out)
		})
	}
	m := s
	m.Out = filepath.Join(t.TempDir(), "dist")
	if _, err := pipeline.Merge(context.Background(), m, rt, arm, x86); err != nil {
		t.Fatalf("the genuine dylib slices refused: %v", err)
	}
}
