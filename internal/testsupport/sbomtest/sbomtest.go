// Package sbomtest checks SBOMs in tests: against the official CycloneDX
// JSON schema, loaded from where the cyclonedx-go module ships it (its
// schema/ directory in the module cache, so no copy lives in this
// repository), and against what pyca/infra's generate_sbom.py writes, which
// pyca/cryptography copies into every wheel.
package sbomtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	// Imported for its files only: the schemas are in the module, and
	// the import keeps it in go.mod (go list -m finds it) now that no
	// production code uses it.
	_ "github.com/CycloneDX/cyclonedx-go"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// Module is the Go module whose files hold the schemas.
const Module = "github.com/CycloneDX/cyclonedx-go"

// schemaFiles are the schema and the two it refers to ($ref by $id:
// spdx.schema.json, jsf-0.82.schema.json).
var schemaFiles = []string{"bom-1.5.schema.json", "spdx.schema.json", "jsf-0.82.schemax.json"}

// SchemaID is the $id of the CycloneDX 1.5 JSON schema, the version
// sbom.json is written in (sbom.SpecVersion).
const SchemaID = "http://cyclonedx.org/schema/bom-1.5.schema.json"

var (
	once   sync.Once
	schema *jsonschema.Schema
	dir    string
	errS   error
)

// SchemaDir is the cyclonedx-go module's schema directory, as the go
// command reports the module's location (go list -m).
func SchemaDir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-json", Module)
	cmd.Dir = testfixture.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m -json %s: %w", Module, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go list -m -json %s: no module directory in %s (%v)", Module, out, err)
	}
	return filepath.Join(m.Dir, "schema"), nil
}

func load() (*jsonschema.Schema, string, error) {
	d, err := SchemaDir()
	if err != nil {
		return nil, "", err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, name := range schemaFiles {
		f, err := os.Open(filepath.Join(d, name))
		if err != nil {
			return nil, d, err
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			return nil, d, fmt.Errorf("%s: %w", name, err)
		}
		obj, _ := doc.(map[string]any)
		id, _ := obj["$id"].(string)
		if id == "" {
			return nil, d, fmt.Errorf("%s: no $id", name)
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, d, fmt.Errorf("%s: %w", name, err)
		}
	}
	s, err := c.Compile(SchemaID)
	return s, d, err
}

// Schema is the compiled CycloneDX 1.5 schema, with format assertions on.
func Schema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	once.Do(func() { schema, dir, errS = load() })
	if errS != nil {
		t.Fatalf("CycloneDX schema from %s (%s): %v", Module, dir, errS)
	}
	return schema
}

// Validate checks the SBOM at path against the schema and returns it
// decoded.
func Validate(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := Schema(t).Validate(doc); err != nil {
		t.Fatalf("%s does not validate against the CycloneDX 1.5 schema: %v", path, err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Pyca is what pyca's generate_sbom.py states about one build.
type Pyca struct {
	Version string // "4.0.2"
	SHA256  string // of the release tarball
	OS      string // build:operating-system, "macos"
	Arch    string // build:architecture: x86_64, arm64, universal2
	Flags   string // build:flags: the OPENSSL_BUILD_FLAGS string
}

// CheckPyca requires doc (a decoded SBOM) to hold everything
// generate_sbom.py emits for want: a library component named openssl with
// the version, the purl with pyca's download_url, the SHA-256, a
// distribution reference to the download URL and the three build:
// properties with pyca's meaning.
func CheckPyca(t testing.TB, doc map[string]any, want Pyca) {
	t.Helper()
	url := "https://github.com/openssl/openssl/releases/download/openssl-" + want.Version + "/openssl-" + want.Version + ".tar.gz"
	if doc["bomFormat"] != "CycloneDX" {
		t.Errorf("bomFormat %v", doc["bomFormat"])
	}
	comps, _ := doc["components"].([]any)
	var c map[string]any
	for _, x := range comps {
		if m, ok := x.(map[string]any); ok && m["name"] == "openssl" {
			if c != nil {
				t.Fatalf("two components named openssl")
			}
			c = m
		}
	}
	if c == nil {
		t.Fatalf("no component named openssl in %v", comps)
	}
	if c["type"] != "library" || c["version"] != want.Version {
		t.Errorf("openssl component: type %v version %v, want library %s", c["type"], c["version"], want.Version)
	}
	if p := c["purl"]; p != "pkg:generic/openssl@"+want.Version+"?download_url="+url {
		t.Errorf("purl %v, want pyca's pkg:generic/openssl@%s?download_url=%s", p, want.Version, url)
	}
	found := false
	for _, h := range list(c["hashes"]) {
		if h["alg"] == "SHA-256" && h["content"] == want.SHA256 {
			found = true
		}
	}
	if !found {
		t.Errorf("no SHA-256 %s in hashes %v", want.SHA256, c["hashes"])
	}
	found = false
	for _, r := range list(c["externalReferences"]) {
		if r["type"] == "distribution" && r["url"] == url {
			found = true
		}
	}
	if !found {
		t.Errorf("no distribution reference to %s in %v", url, c["externalReferences"])
	}
	props := map[string][]string{}
	for _, p := range list(c["properties"]) {
		n, _ := p["name"].(string)
		v, _ := p["value"].(string)
		props[n] = append(props[n], v)
	}
	for name, v := range map[string]string{"build:operating-system": want.OS, "build:architecture": want.Arch, "build:flags": want.Flags} {
		if got := props[name]; len(got) != 1 || got[0] != v {
			t.Errorf("property %s = %q, want [%q]", name, got, v)
		}
	}
	if strings.Contains(fmt.Sprint(doc), "mirror:") {
		t.Errorf("SBOM names a local mirror")
	}
	// What a wheel embeds names only what it vendors: OpenSSL.
	if len(comps) != 1 {
		t.Errorf("%d components, want only openssl", len(comps))
	}
	if md, _ := doc["metadata"].(map[string]any); md["component"] != nil {
		t.Errorf("metadata.component %v: the SBOM must not name the artifact as its subject", md["component"])
	}
	if doc["dependencies"] != nil {
		t.Errorf("dependencies %v: a wheel holds no files of the artifact to relate", doc["dependencies"])
	}
}

func list(v any) []map[string]any {
	var out []map[string]any
	xs, _ := v.([]any)
	for _, x := range xs {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
