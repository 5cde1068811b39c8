package check

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// osslbuild's own cross-built 4.0.2 slices pass -minopt=3, as a directory
// and as the published tarball, with the manifest's deployment target.
func TestE2EOwnSlices(t *testing.T) {
	for _, tc := range []struct{ arch, artifact, minos string }{
		{"arm64", "openssl-macos-arm64", "11.0"},
		{"x86_64", "openssl-macos-x86-64", "10.12"},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			dist := filepath.Dir(e2e.Slice(t, tc.arch))
			for _, p := range []string{filepath.Join(dist, tc.artifact), filepath.Join(dist, tc.artifact+".tar.gz")} {
				var out bytes.Buffer
				err := Run(context.Background(), Options{Path: p, MinOpt: "3", Archs: []string{tc.arch}, Stdout: &out, Env: noEnv})
				t.Logf("%s:\n%s", p, out.String())
				if err != nil {
					t.Fatalf("check %s: %v", p, err)
				}
				res, err := Check(context.Background(), Options{Path: p, MinOpt: "3"})
				if err != nil || !res.OK {
					t.Fatalf("check %s without -arch: %v %+v", p, err, res)
				}
				libs := map[string]bool{}
				for _, b := range res.Binaries {
					libs[filepath.Base(b.Name())] = true
					if b.Artifact != tc.artifact || len(b.Slices) != 1 {
						t.Errorf("%s: artifact %q, %d slices", b.Name(), b.Artifact, len(b.Slices))
						continue
					}
					s := b.Slices[0]
					if s.Arch != tc.arch || s.MinOS != tc.minos || s.MinOSMixed {
						t.Errorf("%s: arch %s minos %s", b.Name(), s.Arch, s.MinOS)
					}
					if strings.HasSuffix(b.Name(), "libcrypto.a") &&
						(s.Opt != "-O3" || !strings.HasPrefix(s.Version, "OpenSSL 4.0.2 ") || s.Platform != "darwin64-"+tc.arch+"-cc" ||
							!strings.HasPrefix(s.Compiler, "cc -fPIC -arch "+tc.arch+" -O3 ")) {
						t.Errorf("%s: %+v", b.Name(), s)
					}
				}
				if !libs["libcrypto.a"] && !libs["libcrypto.a)"] {
					t.Errorf("%s: no libcrypto.a among %v", p, libs)
				}
				if n := len(res.Binaries); n != 2 {
					t.Errorf("%s: %d binaries, want libcrypto.a and libssl.a", p, n)
				}
			}
		})
	}
}

// The universal2 artifact (lipo of the two slices) passes -minopt=3, and
// its manifest's slices make both architectures required.
func TestE2EUniversal2(t *testing.T) {
	dist := filepath.Join(e2e.Universal2(t), "dist")
	for _, p := range []string{filepath.Join(dist, "openssl-macos-universal2"), filepath.Join(dist, "openssl-macos-universal2.tar.gz")} {
		res, err := Check(context.Background(), Options{Path: p, MinOpt: "3"})
		if err != nil || !res.OK {
			t.Fatalf("check %s: %v %q", p, err, res.Failures)
		}
		for _, b := range res.Binaries {
			if b.Format != "universal" || len(b.Slices) != 2 || b.Artifact != "openssl-macos-universal2" {
				t.Errorf("%s: format %s, %d slices, artifact %q", b.Name(), b.Format, len(b.Slices), b.Artifact)
			}
			for _, s := range b.Slices {
				if want := map[string]string{"arm64": "11.0", "x86_64": "10.12"}[s.Arch]; s.MinOS != want {
					t.Errorf("%s %s: minos %s, want %s", b.Name(), s.Arch, s.MinOS, want)
				}
			}
		}
	}
}

// The pyca case: arm64 built with CFLAGS in Configure's environment (-O0),
// lipo'd with osslbuild's good x86_64 slice into a wheel's extension
// module. The check fails, names the arm64 slice as built without
// optimisation and passes the x86_64 slice. The arm64 slice is the mini
// tree's, built the pyca way through the real pipeline (its Configure
// takes an environment CFLAGS as OpenSSL's does): what check reads of it,
// the member's compiler line, is what a real pyca-way build records, and
// real -O0 OpenSSL code is the code corpus's and the real-world set's.
func TestE2EPycaWheel(t *testing.T) {
	testfixture.Tools(t, "llvm-lipo-14")
	bad := filepath.Join(minitest.Build(t, "arm64", minitest.Options{Version: e2e.Version, Variant: pipeline.PycaWay}).Dir, "lib", "libcrypto.a")
	good := filepath.Join(e2e.Slice(t, "x86_64"), "lib", "libcrypto.a")
	dir := t.TempDir()
	fat := filepath.Join(dir, "_rust.abi3.so")
	testfixture.RunIn(t, dir, "llvm-lipo-14", "-create", bad, good, "-output", fat)
	const member = "cryptography/hazmat/bindings/_rust.abi3.so"
	whl := writeWheel(t, filepath.Join(dir, "cryptography-46.0.0-cp311-abi3-macosx_10_9_universal2.whl"),
		wheelMember{name: "cryptography/__init__.py", data: "__version__ = '46.0.0'\n"},
		wheelMember{name: member, file: fat})

	var out bytes.Buffer
	err := Run(context.Background(), Options{Path: whl, Archs: []string{"arm64", "x86_64"}, Stdout: &out, Env: noEnv})
	t.Logf("\n%s", out.String())
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("err = %v, want ErrFailed", err)
	}
	res, err := Check(context.Background(), Options{Path: whl})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Binaries) != 1 || res.Binaries[0].Member != member || res.Binaries[0].Format != "universal" {
		t.Fatalf("binaries: %+v", res.Binaries)
	}
	for _, s := range res.Binaries[0].Slices {
		switch s.Arch {
		case "arm64":
			if s.OK || s.Opt != "-O0" || s.OptFlag != "" || s.MinOS != "11.0" || len(s.Problems) != 1 ||
				!strings.Contains(s.Problems[0].Message, "built without optimisation (-O0)") {
				t.Errorf("arm64: %+v", s)
			}
		case "x86_64":
			if !s.OK || s.Opt != "-O3" || s.MinOS != "10.12" {
				t.Errorf("x86_64: %+v", s)
			}
		default:
			t.Errorf("unexpected slice %s", s.Arch)
		}
	}
	want := whl + "(" + member + ")(libcrypto-lib-cversion.o) arm64: compiler line has no -O flag (built without optimisation (-O0))"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q", want)
	}
}

// osslbuild's real universal2 artifact, changed after publishing: a line
// appended to a header, or the embedded version edited in the arm64 slice
// together with the manifest's digest, is refused, naming the file; so is
// a manifest whose recorded code verdict is not the code's.
func TestE2ETamperedUniversal2(t *testing.T) {
	src := filepath.Join(e2e.Universal2(t), "dist", "openssl-macos-universal2")
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, d string)
		want   string
	}{
		{"header", func(t *testing.T, d string) {
			p := filepath.Join(d, "include", "openssl", "ssl.h")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(p, append(b, "#define OSSLBUILD_TAMPERED 1\n"...), 0o644)
		}, "include/openssl/ssl.h: changed: the manifest lists sha256 "},
		{"version", func(t *testing.T, d string) {
			p := filepath.Join(d, "lib", "libcrypto.a")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			n := bytes.Count(b, []byte("OpenSSL 4.0.2 "))
			i := bytes.LastIndex(b, []byte("OpenSSL 4.0.2 ")) // in the second (arm64) slice
			if n == 0 {
				t.Fatal("no version string in libcrypto.a")
			}
			copy(b[i:], "OpenSSL 4.0.3 ")
			os.WriteFile(p, b, 0o644)
			m, err := artifact.LoadManifest(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(d, artifact.ManifestName))
			if err := artifact.WriteManifest(context.Background(), d, m); err != nil {
				t.Fatal(err)
			}
		}, `arm64: embeds "OpenSSL 4.0.3 `},
		{"code evidence", func(t *testing.T, d string) {
			m, err := artifact.LoadManifest(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for i, e := range m.CodeEvidence {
				if e.Library == "libssl.a" && e.Arch == "arm64" {
					m.CodeEvidence[i].Class = "-O0-like"
					n++
				}
			}
			if n != 1 {
				t.Fatalf("manifest records code evidence for libssl.a arm64 %d times, want 1: %+v", n, m.CodeEvidence)
			}
			os.Remove(filepath.Join(d, artifact.ManifestName))
			if err := artifact.WriteManifest(context.Background(), d, m); err != nil {
				t.Fatal(err)
			}
		}, "manifest records the machine code of lib/libssl.a arm64 as -O0-like (score "},
		{"code score", editCode(func(e *artifact.CodeEvidence) { e.Score += 0.001 }), "manifest records the machine code of lib/libssl.a arm64 as optimised (score "},
		{"code functions", editCode(func(e *artifact.CodeEvidence) { e.Functions++ }), "manifest records the machine code of lib/libssl.a arm64 as optimised (score "},
		{"code entry removed", editCode(nil), "manifest records no machine-code verdict for lib/libssl.a arm64"},
		{"a slice's Configure ran with CFLAGS=-O0", func(t *testing.T, d string) {
			m, err := artifact.LoadManifest(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			m.Slices[0].Configure.Env = append(m.Slices[0].Configure.Env, "CFLAGS=-O0")
			os.Remove(filepath.Join(d, artifact.ManifestName))
			if err := artifact.WriteManifest(context.Background(), d, m); err != nil {
				t.Fatal(err)
			}
		}, "manifest: x86_64 slice: configure environment sets CFLAGS=-O0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := testfixture.CopyTree(t, src, filepath.Join(t.TempDir(), "openssl-macos-universal2"))
			tc.tamper(t, d)
			res, err := Check(context.Background(), Options{Path: d})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || !strings.Contains(strings.Join(res.Failures, "\n"), tc.want) {
				t.Errorf("failures %q lack %q", res.Failures, tc.want)
			}
		})
	}
}

// editCode rewrites the manifest with libssl.a arm64's code evidence
// edited by edit, or removed when edit is nil, and its digests resealed.
func editCode(edit func(*artifact.CodeEvidence)) func(t *testing.T, d string) {
	return func(t *testing.T, d string) {
		m, err := artifact.LoadManifest(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		var kept []artifact.CodeEvidence
		for _, e := range m.CodeEvidence {
			if e.Library == "libssl.a" && e.Arch == "arm64" {
				if edit == nil {
					continue
				}
				edit(&e)
			}
			kept = append(kept, e)
		}
		m.CodeEvidence = kept
		os.Remove(filepath.Join(d, artifact.ManifestName))
		if err := artifact.WriteManifest(context.Background(), d, m); err != nil {
			t.Fatal(err)
		}
	}
}
