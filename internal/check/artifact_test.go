package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// artifactKit builds osslbuild-shaped artifacts from small compiled
// libraries: lib/libcrypto.a (a cversion object and a plain one),
// lib/libssl.a, a header, sbom.json and a manifest listing every file.
type artifactKit struct {
	k                  *kit
	armCrypto, armSSL  string
	x86Crypto, x86SSL  string
	fatCrypto, fatSSL  string
	armTarget, x86Name string
}

func newArtifactKit(t *testing.T) *artifactKit {
	k := newKit(t)
	a := &artifactKit{k: k}
	arm, x86 := "arm64-apple-macos11", "x86_64-apple-macos10.12"
	a.armCrypto = k.ar("arm-libcrypto.a", true, k.macho("arm-cv.o", arm, cversion(lineArmO3, "darwin64-arm64-cc")), k.macho("arm-p.o", arm, plain))
	a.armSSL = k.ar("arm-libssl.a", true, k.macho("arm-ssl.o", arm, plain))
	a.x86Crypto = k.ar("x86-libcrypto.a", true, k.macho("x86-cv.o", x86, cversion(lineX86O3, "darwin64-x86_64-cc")), k.macho("x86-p.o", x86, plain))
	a.x86SSL = k.ar("x86-libssl.a", true, k.macho("x86-ssl.o", x86, plain))
	a.fatCrypto = k.lipo("fat-libcrypto.a", a.x86Crypto, a.armCrypto)
	a.fatSSL = k.lipo("fat-libssl.a", a.x86SSL, a.armSSL)
	return a
}

// dir writes an artifact; universal makes the universal2 one, whose
// manifest holds one manifest per slice.
func (a *artifactKit) dir(t *testing.T, universal bool) string {
	t.Helper()
	name := "openssl-macos-arm64"
	crypto, ssl := a.armCrypto, a.armSSL
	if universal {
		name, crypto, ssl = "openssl-macos-universal2", a.fatCrypto, a.fatSSL
	}
	d := filepath.Join(t.TempDir(), name)
	os.MkdirAll(filepath.Join(d, "lib"), 0o755)
	os.MkdirAll(filepath.Join(d, "include", "openssl"), 0o755)
	testfixture.CopyFile(t, crypto, filepath.Join(d, "lib", "libcrypto.a"))
	testfixture.CopyFile(t, ssl, filepath.Join(d, "lib", "libssl.a"))
	os.WriteFile(filepath.Join(d, "include", "openssl", "ssl.h"), []byte("/* ssl.h */\n"), 0o644)
	os.WriteFile(filepath.Join(d, "sbom.json"), []byte(artifactSBOM("4.0.2")), 0o644)
	if !universal {
		writeManifest(t, d, name, "arm64", "11.0")
		return d
	}
	slice := func(arch, minos string) *artifact.Manifest {
		return sliceManifest("openssl-macos-"+arch, arch, minos)
	}
	m := &artifact.Manifest{Name: name, OpenSSL: artifact.Source{Version: "4.0.2"},
		Target: platform.Slice{Name: "universal2", OS: "macos", Arch: "x86_64+arm64"},
		Slices: []*artifact.Manifest{slice("x86_64", "10.12"), slice("arm64", "11.0")}}
	if err := artifact.WriteManifest(context.Background(), d, m); err != nil {
		t.Fatal(err)
	}
	return d
}

// tarball publishes dir as osslbuild does.
func tarball(t *testing.T, dir string) string {
	t.Helper()
	p := dir + ".tar.gz"
	var b bytes.Buffer
	if _, err := artifact.WriteTarball(context.Background(), dir, filepath.Base(dir), time.Unix(0, 0), &b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// An artifact is held to everything its manifest promises: an unchanged
// one passes; a file changed after publishing is refused by name with both
// digests; a library whose embedded version was edited together with its
// digest is still refused.
func TestArtifactVerified(t *testing.T) {
	a := newArtifactKit(t)
	for _, tc := range []struct {
		name      string
		universal bool
		tamper    func(t *testing.T, dir string)
		fail      []string // substrings of failures; none: it passes
	}{
		{"arm64, untouched", false, nil, nil},
		{"universal2, untouched", true, nil, nil},
		{"a line appended to a header", true, func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "include", "openssl", "ssl.h"), []byte("/* ssl.h */\n#define X 1\n"), 0o644)
		}, []string{"include/openssl/ssl.h: changed: the manifest lists sha256 " + sha([]byte("/* ssl.h */\n")) +
			", the file has " + sha([]byte("/* ssl.h */\n#define X 1\n"))}},
		{"a file added", false, func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "include", "openssl", "extra.h"), []byte("x"), 0o644)
		}, []string{"include/openssl/extra.h: not listed in the manifest (sha256 " + sha([]byte("x")) + ")"}},
		{"a symlink to a host file added", false, func(t *testing.T, d string) {
			os.Symlink("/etc/hostname", filepath.Join(d, "include", "openssl", "leak.h"))
		}, []string{"include/openssl/leak.h: symlink to /etc/hostname, expected a regular file (not listed in the manifest): not opened"}},
		{"the embedded version edited, digest and all", true, func(t *testing.T, d string) {
			p := filepath.Join(d, "lib", "libcrypto.a")
			b, _ := os.ReadFile(p)
			i := bytes.LastIndex(b, []byte("OpenSSL 4.0.2 "))
			copy(b[i:], "OpenSSL 4.0.3 ")
			os.WriteFile(p, b, 0o644)
			m, _ := artifact.LoadManifest(context.Background(), d)
			os.Remove(filepath.Join(d, artifact.ManifestName))
			artifact.WriteManifest(context.Background(), d, m)
		}, []string{`(arm-cv.o) arm64: embeds "OpenSSL 4.0.3 25 Aug 2026", expected OpenSSL 4.0.2`,
			`slices embed different versions: x86_64 "OpenSSL 4.0.2 25 Aug 2026", arm64 "OpenSSL 4.0.3 25 Aug 2026"`}},
		{"a library missing from artifact and manifest", false, func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, "lib", "libssl.a"))
			m, _ := artifact.LoadManifest(context.Background(), d)
			os.Remove(filepath.Join(d, artifact.ManifestName))
			artifact.WriteManifest(context.Background(), d, m)
		}, []string{"no lib/libssl.a library was found in the artifact"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := a.dir(t, tc.universal)
			if tc.tamper != nil {
				tc.tamper(t, d)
			}
			paths := []string{d}
			if !strings.Contains(tc.name, "symlink") { // a tarball of osslbuild's refuses links
				paths = append(paths, tarball(t, d))
			}
			for _, p := range paths {
				res, err := Check(context.Background(), Options{Path: p})
				if err != nil {
					t.Fatal(err)
				}
				if res.OK != (tc.fail == nil) {
					t.Errorf("%s: OK = %v; failures %q", p, res.OK, res.Failures)
				}
				all := strings.Join(res.Failures, "\n")
				for _, w := range tc.fail {
					if !strings.Contains(all, w) {
						t.Errorf("%s: failures lack %q:\n%s", p, w, all)
					}
				}
			}
		})
	}
}

// A tarball whose artifact sits at its top (no directory) is verified too.
func TestArtifactTarballAtTop(t *testing.T) {
	a := newArtifactKit(t)
	d := a.dir(t, false)
	var b bytes.Buffer
	if _, err := artifact.WriteTarball(context.Background(), d, ".", time.Unix(0, 0), &b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "flat.tar.gz")
	os.WriteFile(p, b.Bytes(), 0o644)
	res, err := Check(context.Background(), Options{Path: p})
	if err != nil || !res.OK || len(res.Artifacts) != 1 || !res.Artifacts[0].OK || res.Binaries[0].Artifact != "openssl-macos-arm64" {
		t.Fatalf("%v %+v", err, res)
	}
}
