package artifact

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// SBOMName is the CycloneDX SBOM's file name inside an artifact.
const SBOMName = "sbom.json"

// WriteSBOM writes dir/sbom.json: a CycloneDX 1.6 SBOM whose subject is the
// artifact and whose one component is the OpenSSL release it was built from
// (version, purl, source hash, the build options as properties), with the
// static libraries as file components. It is deterministic: the timestamp
// is SOURCE_DATE_EPOCH and the serial number derives from the content.
func WriteSBOM(dir string, m *Manifest) error {
	src := cdx.Component{
		BOMRef:     "pkg:generic/openssl@" + m.OpenSSL.Version,
		Type:       cdx.ComponentTypeLibrary,
		Supplier:   &cdx.OrganizationalEntity{Name: "OpenSSL"},
		Name:       "openssl",
		Version:    m.OpenSSL.Version,
		PackageURL: "pkg:generic/openssl@" + m.OpenSSL.Version,
		CPE:        "cpe:2.3:a:openssl:openssl:" + m.OpenSSL.Version + ":*:*:*:*:*:*:*",
		Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: m.OpenSSL.SHA256}},
		Licenses:   &cdx.Licenses{{License: &cdx.License{ID: "Apache-2.0"}}},
		ExternalReferences: &[]cdx.ExternalReference{
			{Type: cdx.ERTypeWebsite, URL: "https://openssl-library.org/"},
		},
		Properties: buildProperties(m),
	}
	if m.OpenSSL.URL != "" && !strings.HasPrefix(m.OpenSSL.URL, "mirror:") {
		*src.ExternalReferences = append(*src.ExternalReferences, cdx.ExternalReference{Type: cdx.ERTypeDistribution, URL: m.OpenSSL.URL})
	}
	var libs []cdx.Component
	for _, lib := range Libraries {
		rel := "lib/" + lib
		sum, err := FileSHA256(filepath.Join(dir, rel))
		if err != nil {
			return fmt.Errorf("sbom: %w", err)
		}
		libs = append(libs, cdx.Component{
			BOMRef: "file:" + rel, Type: cdx.ComponentTypeFile, Name: rel,
			Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: sum}},
		})
	}
	comps := append([]cdx.Component{src}, libs...)
	var libRefs []string
	for _, l := range libs {
		libRefs = append(libRefs, l.BOMRef)
	}
	subject := &cdx.Component{
		BOMRef:  "artifact:" + m.Name,
		Type:    cdx.ComponentTypeLibrary,
		Name:    m.Name,
		Version: m.OpenSSL.Version,
	}
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Timestamp: time.Unix(m.SourceDateEpoch, 0).UTC().Format(time.RFC3339),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type: cdx.ComponentTypeApplication, Name: "osslbuild", Version: m.Osslbuild,
		}}},
		Component: subject,
	}
	bom.Components = &comps
	deps := []cdx.Dependency{
		{Ref: subject.BOMRef, Dependencies: &[]string{src.BOMRef}},
	}
	for _, r := range libRefs {
		deps = append(deps, cdx.Dependency{Ref: r, Dependencies: &[]string{src.BOMRef}})
	}
	bom.Dependencies = &deps

	path := filepath.Join(dir, SBOMName)
	tmp := path + ".tmp"
	// The serial number is a UUID made from what the SBOM says, so the same
	// build gives the same SBOM.
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("sbom: %w", err)
	}
	if err := encode(f, bom); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	f.Close()
	b, err := os.ReadFile(tmp)
	os.Remove(tmp)
	if err != nil {
		return err
	}
	bom.SerialNumber = "urn:uuid:" + uuidFrom(b)
	f, err = os.Create(path)
	if err != nil {
		return fmt.Errorf("sbom: %w", err)
	}
	if err := encode(f, bom); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func encode(f *os.File, bom *cdx.BOM) error {
	enc := cdx.NewBOMEncoder(f, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		return fmt.Errorf("sbom: encode: %w", err)
	}
	return nil
}

// buildProperties records how OpenSSL was configured, per slice for a
// universal artifact.
func buildProperties(m *Manifest) *[]cdx.Property {
	var props []cdx.Property
	add := func(prefix string, t Target) {
		props = append(props,
			cdx.Property{Name: prefix + "arch", Value: t.Arch},
			cdx.Property{Name: prefix + "configure-target", Value: t.Configure},
			cdx.Property{Name: prefix + "min-os", Value: t.MinOS},
			cdx.Property{Name: prefix + "options", Value: strings.Join(t.Options, " ")},
			cdx.Property{Name: prefix + "flags", Value: strings.Join(t.Flags, " ")},
		)
	}
	if len(m.Slices) == 0 {
		add("osslbuild:", m.Target)
	}
	for _, s := range m.Slices {
		add("osslbuild:"+s.Target.Arch+":", s.Target)
	}
	for _, l := range m.CompilerLines {
		props = append(props, cdx.Property{Name: "osslbuild:" + l.Arch + ":" + l.Library + ":compiler", Value: l.Line})
	}
	sort.SliceStable(props, func(i, j int) bool { return props[i].Name < props[j].Name })
	return &props
}

// uuidFrom makes an RFC 4122 version-5-style UUID from data's SHA-256.
func uuidFrom(data []byte) string {
	h := sha256.Sum256(data)
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
