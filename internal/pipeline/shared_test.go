package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/check"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
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
	requireMini(t)
	var e map[string][2]string
	if len(edits) > 0 {
		e = edits[0]
	}
	s := miniSettings(t, e)
	editRecipe(t, s, func(r string) string { return sharedRecipe(r, libraries, installName) })
	var log strings.Builder
	res, err := pipeline.Slice(context.Background(), s, miniRuntime(t, &log), target, nil)
	return res, err, log.String()
}

// TestMiniShared: a recipe of shared libraries gives an artifact of
// dylibs over the mini tree: versioned names only (no links, no archives),
// install names @rpath/..., libssl loading libcrypto by it, ad-hoc
// signatures that hold after the rewrite (arm64), .pc files naming the
// dylibs, and a manifest recording it all.
func TestMiniShared(t *testing.T) {
	for _, target := range []string{"arm64", "x86_64"} {
		t.Run(target, func(t *testing.T) {
			res, err, log := sharedMini(t, target, `["shared"]`, "")
			if err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			t.Logf("log:\n%s", log)
			lib := filepath.Join(res.Published.Dir, "lib")
			var names []string
			ents, _ := os.ReadDir(lib)
			for _, e := range ents {
				names = append(names, e.Name())
			}
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
				cs, err := inspect.ReadCodeSignature(bytes.NewReader(b), 0, m)
				if target == "arm64" && (err != nil || cs == nil || !cs.Valid()) {
					t.Errorf("%s: signature %+v, %v", tt.lib, cs, err)
				}
			}
			m, err := artifact.ReadManifest(res.Published.Dir)
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
				m.Dylibs[0].Current != "9.0" || m.Dylibs[0].Signature != sig {
				t.Errorf("manifest dylibs %+v", m.Dylibs)
			}
		})
	}
}

// TestMiniSharedUniversal2: build:universal2 of a recipe of shared
// libraries merges each dylib with lipo: a universal libcrypto.9.dylib and
// libssl.9.dylib whose slices keep their install names and (arm64) valid
// signatures, recorded per architecture in the manifest.
func TestMiniSharedUniversal2(t *testing.T) {
	requireMini(t)
	s := miniSettings(t, nil)
	editRecipe(t, s, func(r string) string { return sharedRecipe(r, `["shared", "static"]`, "") })
	var log strings.Builder
	res, err := pipeline.Universal2(context.Background(), s, miniRuntime(t, &log))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	lib := filepath.Join(res.Published.Dir, "lib")
	var names []string
	ents, _ := os.ReadDir(lib)
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
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
	m, err := artifact.ReadManifest(res.Published.Dir)
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
			"cp libcrypto.a libssl.a $(DESTDIR)$(INSTALLTOP)/lib/",
			"cp libcrypto.a libssl.a $(DESTDIR)$(INSTALLTOP)/lib/ && ln -s libssl.a $(DESTDIR)$(INSTALLTOP)/lib/libextra.a"}},
			"lib/libextra.a is not a regular file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err, log := sharedMini(t, "arm64", `["shared"]`, "", tt.edits)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want a refusal saying %q, got %v\n%s", tt.want, err, log)
			}
			if res != nil {
				t.Errorf("published %+v", res.Published)
			}
		})
	}
}

// TestSharedRealBuild: a recipe of shared libraries builds the real
// OpenSSL 3.5.7 for arm64 into dylibs: @rpath install names, libssl
// loading libcrypto by it and libSystem only, valid ad-hoc signatures
// after the rewrite, .pc and CMake files naming the versioned dylibs,
// every dylib recorded in the manifest, and check passing it at -minopt=3
// (the dylibs' own compiler line and machine code).
func TestSharedRealBuild(t *testing.T) {
	dir := filepath.Join(e2e.SharedUniversal2(t), "dist", "shared-openssl-aarch64-apple-darwin")
	var names []string
	ents, _ := os.ReadDir(filepath.Join(dir, "lib"))
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
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
	m, err := artifact.ReadManifest(dir)
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
func TestMiniSharedReproducible(t *testing.T) {
	var sums []string
	for i := 0; i < 2; i++ {
		res, err, log := sharedMini(t, "arm64", `["shared"]`, "")
		if err != nil {
			t.Fatalf("%v\n%s", err, log)
		}
		sums = append(sums, res.Published.Digests.SHA256)
	}
	if sums[0] != sums[1] {
		t.Errorf("two builds: %s and %s", sums[0], sums[1])
	}
}

// TestSharedRealUniversal2: both slices of dylibs of the real 3.5.7,
// merged: each universal dylib holds an arm64 and an x86_64 slice with
// their install names, the arm64 one signed with hashes that hold inside
// the fat file, and check passes the universal artifact for both
// architectures at -minopt=3.
func TestSharedRealUniversal2(t *testing.T) {
	dir := filepath.Join(e2e.SharedUniversal2(t), "dist", "openssl-macos-universal2")
	for _, lib := range []string{"libcrypto.3.dylib", "libssl.3.dylib"} {
		f := mustInspect(t, filepath.Join(dir, "lib", lib))
		if len(f.Slices) != 2 {
			t.Fatalf("%s: %d slices", lib, len(f.Slices))
		}
		for _, s := range f.Slices {
			o := s.Objects[0]
			if o.MachO.ID == nil || o.MachO.ID.Name != "@rpath/"+lib {
				t.Errorf("%s %s: install name %+v", lib, s.Arch, o.MachO.ID)
			}
			if s.Arch == "arm64" && (o.Signature == nil || !o.Signature.Valid()) {
				t.Errorf("%s arm64: signature %+v", lib, o.Signature)
			}
		}
	}
	res, err := check.Check(context.Background(), check.Options{Path: dir, MinOpt: "3", Archs: []string{"arm64", "x86_64"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 || len(res.Artifacts) != 1 || !res.Artifacts[0].OK {
		t.Errorf("check: %q %+v", res.Failures, res.Artifacts)
	}
}
