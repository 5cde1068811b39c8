package sbom

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/sbomtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func TestSBOM(t *testing.T) {
	d := t.TempDir()
	testfixture.WriteTree(t, d, map[string]string{"lib/libcrypto.a": "c", "lib/libssl.a": "s"})
	pyca := []string{"no-zlib", "no-shared", "no-module", "no-comp", "no-apps", "no-docs", "no-sm2-precomp", "no-atexit", "enable-ec_nistp_64_gcc_128"}
	m := &artifact.Manifest{Name: "openssl-macos-arm64", Osslbuild: "v1", SourceDateEpoch: 1787657968,
		Recipe:        artifact.RecipeRef{Name: "openssl", Origin: "file", Path: "ci/openssl.toml", SHA256: strings.Repeat("ab", 32)},
		OpenSSL:       artifact.Source{Version: "4.0.2", SHA256: "736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8", URL: "mirror:openssl-4.0.2.tar.gz"},
		Target:        platform.Slice{OS: "macos", Arch: "arm64", Configure: "darwin64-arm64-cc", MinOS: "11.0", Options: pyca, Flags: []string{"-mmacosx-version-min=11.0"}},
		CompilerLines: []artifact.CompilerLine{{Arch: "arm64", Library: "libcrypto.a", Line: "compiler: cc -O3"}}}
	if err := Write(d, m); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(d, artifact.SBOMName))
	if err := Write(d, m); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(d, artifact.SBOMName))
	if !bytes.Equal(first, second) {
		t.Error("SBOM is not deterministic")
	}
	doc := sbomtest.Validate(t, filepath.Join(d, artifact.SBOMName))
	// Everything pyca's generate_sbom.py writes, though the bytes came
	// from a mirror.
	sbomtest.CheckPyca(t, doc, sbomtest.Pyca{Version: "4.0.2", SHA256: m.OpenSSL.SHA256, OS: "macos", Arch: "arm64", Flags: strings.Join(pyca, " ")})

	var sb struct {
		BOMFormat, SpecVersion, SerialNumber string
		Metadata                             struct{ Timestamp string }
		Components                           []struct {
			Name, Version, Purl, CPE string
			Properties               []struct{ Name, Value string }
		}
	}
	if err := json.Unmarshal(first, &sb); err != nil {
		t.Fatal(err)
	}
	if sb.BOMFormat != "CycloneDX" || sb.SpecVersion != "1.5" || !strings.HasPrefix(sb.SerialNumber, "urn:uuid:") || sb.Metadata.Timestamp != "2026-08-25T11:39:28Z" {
		t.Errorf("header: %+v", sb)
	}
	c := sb.Components[0]
	props := map[string]string{}
	for _, p := range c.Properties {
		props[p.Name] = p.Value
	}
	// osslbuild's additions.
	if c.CPE != "cpe:2.3:a:openssl:openssl:4.0.2:*:*:*:*:*:*:*" || props["osslbuild:options"] != strings.Join(pyca, " ") ||
		props["osslbuild:arm64:libcrypto.a:compiler"] != "compiler: cc -O3" || props["osslbuild:min-os"] != "11.0" ||
		props["osslbuild:revision"] != "v1" || props["osslbuild:recipe:sha256"] != m.Recipe.SHA256 ||
		props["osslbuild:recipe:origin"] != "file" || props["osslbuild:recipe:path"] != "ci/openssl.toml" {
		t.Errorf("osslbuild's properties: %v", props)
	}
	// pyca's three come first, in pyca's order.
	if len(c.Properties) < 3 || c.Properties[0].Name != "build:operating-system" || c.Properties[1].Name != "build:architecture" || c.Properties[2].Name != "build:flags" {
		t.Errorf("properties start %v", c.Properties[:3])
	}
	if len(sb.Components) != 1 {
		t.Errorf("components: %+v, want openssl alone", sb.Components)
	}

	// universal2: the architecture pyca names it by, and each slice's
	// configuration.
	u := *m
	u.Name, u.Target = "openssl-macos-universal2", platform.Slice{Name: "universal2", OS: "macos", Arch: "x86_64+arm64", Options: pyca}
	x86 := *m
	x86.Target = platform.Slice{OS: "macos", Arch: "x86_64", Configure: "darwin64-x86_64-cc", MinOS: "10.12", Options: pyca, Flags: []string{"-mmacosx-version-min=10.12", "-march=core2"}}
	u.Slices = []*artifact.Manifest{&x86, m}
	if err := Write(d, &u); err != nil {
		t.Fatal(err)
	}
	doc = sbomtest.Validate(t, filepath.Join(d, artifact.SBOMName))
	sbomtest.CheckPyca(t, doc, sbomtest.Pyca{Version: "4.0.2", SHA256: m.OpenSSL.SHA256, OS: "macos", Arch: "universal2", Flags: strings.Join(pyca, " ")})
	b, _ := os.ReadFile(filepath.Join(d, artifact.SBOMName))
	for _, w := range []string{`"osslbuild:x86_64:min-os"`, `"osslbuild:arm64:configure-target"`} {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("universal2 SBOM lacks %s", w)
		}
	}
}

// TestSBOMSchemaCatchesErrors: the schema check is not a formality: an
// SBOM the schema forbids is refused.
func TestSBOMSchemaCatchesErrors(t *testing.T) {
	d := t.TempDir()
	for name, doc := range map[string]string{
		"unknown field":  `{"bomFormat": "CycloneDX", "specVersion": "1.5", "colour": "blue"}`,
		"bad hash":       `{"bomFormat": "CycloneDX", "specVersion": "1.5", "components": [{"type": "library", "name": "openssl", "hashes": [{"alg": "SHA-256", "content": "xyz"}]}]}`,
		"bad serial":     `{"bomFormat": "CycloneDX", "specVersion": "1.5", "serialNumber": "42"}`,
		"component type": `{"bomFormat": "CycloneDX", "specVersion": "1.5", "components": [{"type": "static-lib", "name": "openssl"}]}`,
	} {
		p := filepath.Join(d, "sbom.json")
		os.WriteFile(p, []byte(doc), 0o644)
		raw := jsonschemaDecode(t, p)
		if err := sbomtest.Schema(t).Validate(raw); err == nil {
			t.Errorf("%s: schema accepted %s", name, doc)
		}
	}
}

func jsonschemaDecode(t *testing.T, p string) any {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
