package sbom

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/platform"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/*.golden.json")

// TestSBOMGolden pins sbom.json's bytes for fixed manifests, a single
// architecture and a universal2 one: HTML characters in a value are
// escaped (\u003c), as the encoder always wrote them.
func TestSBOMGolden(t *testing.T) {
	pyca := []string{"no-zlib", "no-shared", "enable-ec_nistp_64_gcc_128"}
	m := &artifact.Manifest{Name: "openssl-macos-arm64", Osslbuild: "v1", SourceDateEpoch: 1787657968,
		Recipe:        artifact.RecipeRef{Name: "openssl", Origin: "file", Path: "ci/openssl.toml", SHA256: strings.Repeat("ab", 32)},
		OpenSSL:       artifact.Source{Version: "4.0.2", SHA256: "736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8", URL: "mirror:openssl-4.0.2.tar.gz"},
		Target:        platform.Slice{OS: "macos", Arch: "arm64", Configure: "darwin64-arm64-cc", MinOS: "11.0", Options: pyca, Flags: []string{"-mmacosx-version-min=11.0", "-DX=<a&b>"}},
		CompilerLines: []artifact.CompilerLine{{Arch: "arm64", Library: "libcrypto.a", Line: "compiler: cc -O3 -DX=<a&b>"}}}
	x86 := *m
	x86.Target = platform.Slice{OS: "macos", Arch: "x86_64", Configure: "darwin64-x86_64-cc", MinOS: "10.12", Options: pyca, Flags: []string{"-march=core2"}}
	u := *m
	u.Name, u.Target = "openssl-macos-universal2", platform.Slice{Name: "universal2", OS: "macos", Arch: "x86_64+arm64", Options: pyca}
	u.Slices = []*artifact.Manifest{&x86, m}
	for name, man := range map[string]*artifact.Manifest{"arm64": m, "universal2": &u} {
		d := t.TempDir()
		if err := Write(d, man); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(d, artifact.SBOMName))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", name+".golden.json")
		if *updateGolden {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: sbom.json differs from %s:\n%s", name, golden, got)
		}
	}
}
