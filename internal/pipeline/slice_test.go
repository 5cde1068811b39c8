package pipeline_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// The compiler lines a Mac build of 4.0.2 embeds, per the environment notes:
// OpenSSL's own -O3 -Wall, the recipe's flags after them.
var wantCompiler = map[string]string{
	"arm64":  "compiler: cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DNDEBUG",
	"x86_64": "compiler: cc -fPIC -arch x86_64 -O3 -Wall -mmacosx-version-min=10.12 -march=core2 -DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DNDEBUG",
}

var artifactName = map[string]string{"arm64": "openssl-macos-arm64", "x86_64": "openssl-macos-x86-64"}

func plan(t testing.TB, target string) *recipe.Plan {
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan(e2e.Version, target)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSliceEndToEnd cross-builds real OpenSSL 4.0.2 for each target and
// checks what a consumer gets: the layout, the compiler line, the
// deployment target of every object, the manifest and the tarball.
func TestSliceEndToEnd(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"arm64", "x86_64"} {
		t.Run(target, func(t *testing.T) {
			dir := e2e.Slice(t, target)
			out, name := filepath.Dir(dir), artifactName[target]
			for _, f := range []string{"include/openssl/ssl.h", "include/openssl/opensslv.h", "include/openssl/configuration.h",
				"lib/libcrypto.a", "lib/libssl.a", "lib/pkgconfig/libcrypto.pc", "lib/pkgconfig/libssl.pc", "lib/pkgconfig/openssl.pc",
				"lib/cmake/OpenSSL/OpenSSLConfig.cmake", "manifest.json"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("artifact lacks %s", f)
				}
			}
			// The embedded compiler line reads exactly as on a Mac.
			lines := compilerLines(t, filepath.Join(dir, "lib", "libcrypto.a"))
			if len(lines) != 1 || lines[0] != wantCompiler[target] {
				t.Errorf("compiler lines = %q\nwant [%q]", lines, wantCompiler[target])
			}
			// An independent reading of one object's deployment target.
			p := plan(t, target)
			for _, lib := range artifact.Libraries {
				if _, err := validate.StaticLibraryContext(context.Background(), filepath.Join(dir, "lib", lib), pipeline.Expect(p, lib)); err != nil {
					t.Errorf("published %s fails validation: %v", lib, err)
				}
			}
			pc, _ := os.ReadFile(filepath.Join(dir, "lib", "pkgconfig", "libcrypto.pc"))
			if !strings.Contains(string(pc), "prefix=${pcfiledir}/../..") || strings.Contains(string(pc), "/opt/osslbuild") {
				t.Errorf("libcrypto.pc is not relocatable:\n%s", pc)
			}
			m, err := artifact.LoadManifest(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if m.OpenSSL.Version != e2e.Version || m.Target.Arch != target || len(m.CompilerLines) != 1 ||
				m.CompilerLines[0].Opt != "-O3" || m.OpenSSL.Signer == "" || m.Files["lib/libcrypto.a"] == "" {
				t.Errorf("manifest incomplete: %+v", m)
			}
			// The link stage linked every member for the deployment target.
			if len(m.LinkChecks) != 1 || m.LinkChecks[0].Arch != target || m.LinkChecks[0].Platform != "macos "+p.Slice.MinOS ||
				m.LinkChecks[0].Members < 1000 || !strings.HasPrefix(m.LinkChecks[0].System, "libSystem.11.tbd") {
				t.Errorf("manifest link checks: %+v", m.LinkChecks)
			}
			checkTarball(t, filepath.Join(out, name+".tar.gz"), name)
		})
	}
}

// compilerLines reads the compiler lines a thin library records.
func compilerLines(t *testing.T, lib string) []string {
	t.Helper()
	f, err := inspect.Inspect(lib)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, bi := range f.Slices[0].BuildInfo {
		if bi.Kind == inspect.InfoCompiler {
			lines = append(lines, bi.Text)
		}
	}
	return lines
}

// checkTarball checks the published tarball matches its .sha256 and holds
// the artifact under its name with normalised headers.
func checkTarball(t *testing.T, path, name string) {
	t.Helper()
	sum, err := os.ReadFile(path + ".sha256")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sha256sum", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Fields(string(sum))[0] != strings.Fields(string(out))[0] {
		t.Errorf("%s.sha256 says %s, file is %s", path, sum, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header carries name %q / time %v", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !strings.HasPrefix(h.Name, name+"/") || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("tar entry %s: uid %d gid %d uname %q", h.Name, h.Uid, h.Gid, h.Uname)
		}
	}
	if n < 100 {
		t.Errorf("tarball has only %d entries", n)
	}
}

// TestValidatorRefusesCorruptedSlice swaps a wrong object into a copy of a
// real, validated libcrypto.a: first an -O0 compiled one, then one for the
// other architecture. Validation must refuse each, naming the member.
func TestValidatorRefusesCorruptedSlice(t *testing.T) {
	t.Parallel()
	arm := filepath.Join(e2e.Slice(t, "arm64"), "lib", "libcrypto.a")
	x86 := filepath.Join(e2e.Slice(t, "x86_64"), "lib", "libcrypto.a")
	p := plan(t, "arm64")
	exp := pipeline.Expect(p, "libcrypto.a")
	tmp := t.TempDir()

	t.Run("O0 cversion", func(t *testing.T) {
		// Recompile crypto/cversion.c's role: an object carrying the pyca
		// compiler line, built at -O0, replacing the real member.
		lib := testfixture.CopyFile(t, arm, filepath.Join(tmp, "o0.a"))
		obj := compile(t, "arm64-apple-macos11", `const char *info = "compiler: cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN";
const char *plat = "platform: darwin64-arm64-cc";`, "libcrypto-lib-cversion.o")
		testfixture.Run(t, "llvm-ar-14", "r", lib, obj)
		_, err := validate.StaticLibraryContext(context.Background(), lib, exp)
		if !errors.Is(err, validate.ErrInvalid) || !strings.Contains(err.Error(), "libcrypto-lib-cversion.o") || !strings.Contains(err.Error(), "-O0") {
			t.Errorf("want a refusal naming libcrypto-lib-cversion.o and -O0, got %v", err)
		}
	})
	t.Run("wrong arch member", func(t *testing.T) {
		lib := testfixture.CopyFile(t, arm, filepath.Join(tmp, "arch.a"))
		member := "libcrypto-lib-bn_add.o"
		dir := t.TempDir()
		testfixture.RunIn(t, dir, "llvm-ar-14", "x", x86, member)
		testfixture.Run(t, "llvm-ar-14", "r", lib, filepath.Join(dir, member))
		_, err := validate.StaticLibraryContext(context.Background(), lib, exp)
		if !errors.Is(err, validate.ErrInvalid) || !strings.Contains(err.Error(), member) || !strings.Contains(err.Error(), "x86_64") {
			t.Errorf("want a refusal naming %s and x86_64, got %v", member, err)
		}
	})
}

func compile(t *testing.T, triple, src, name string) string {
	dir := t.TempDir()
	c := filepath.Join(dir, "x.c")
	os.WriteFile(c, []byte(src), 0o644)
	obj := filepath.Join(dir, name)
	testfixture.Run(t, "clang-14", "-target", triple, "-O0", "-c", "-o", obj, c)
	return obj
}
