// Package sbom writes the CycloneDX SBOM of an osslbuild artifact.
package sbom

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// Write writes dir/sbom.json: a CycloneDX 1.6 SBOM whose subject is the
// artifact and whose one component is the OpenSSL release it was built from,
// with the static libraries as file components. It is deterministic: the
// timestamp is SOURCE_DATE_EPOCH and the serial number derives from the
// content.
//
// The OpenSSL component holds everything pyca/infra's generate_sbom.py
// writes, which pyca/cryptography copies into every wheel's
// .dist-info/sboms/: the purl pkg:generic/openssl@<v>?download_url=<GitHub
// release URL>, the tarball's SHA-256, a "distribution" reference to that
// URL, and the properties build:operating-system (macos),
// build:architecture (arm64, x86_64 or universal2) and build:flags (the
// Configure options, space-separated, as in pyca's OPENSSL_BUILD_FLAGS).
// osslbuild's additions follow: supplier, CPE, licence, the per-slice
// configure target, deployment target, compiler flags and the compiler
// lines found in the libraries (osslbuild:* properties).
func Write(dir string, m *artifact.Manifest) error {
	v := m.OpenSSL.Version
	download := DownloadURL(v)
	src := cdx.Component{
		BOMRef:     "pkg:generic/openssl@" + v,
		Type:       cdx.ComponentTypeLibrary,
		Supplier:   &cdx.OrganizationalEntity{Name: "OpenSSL"},
		Name:       "openssl",
		Version:    v,
		PackageURL: "pkg:generic/openssl@" + v + "?download_url=" + download,
		CPE:        "cpe:2.3:a:openssl:openssl:" + v + ":*:*:*:*:*:*:*",
		Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: m.OpenSSL.SHA256}},
		Licenses:   &cdx.Licenses{{License: &cdx.License{ID: "Apache-2.0"}}},
		ExternalReferences: &[]cdx.ExternalReference{
			{Type: cdx.ERTypeDistribution, URL: download},
			{Type: cdx.ERTypeWebsite, URL: "https://openssl-library.org/"},
		},
		Properties: buildProperties(m),
	}
	var libs []cdx.Component
	for _, lib := range artifact.Libraries {
		rel := "lib/" + lib
		sum, err := artifact.FileSHA256(filepath.Join(dir, rel))
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

	path := filepath.Join(dir, artifact.SBOMName)
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

// DownloadURL is where OpenSSL publishes release v: its GitHub release
// asset, the URL pyca's SBOM names whatever mirror served the bytes (the
// SHA-256 says which bytes they were).
func DownloadURL(v string) string { return recipe.UpstreamURLs(v)[0] }

// buildProperties records how OpenSSL was configured: pyca's three build:
// properties first, in pyca's order, then osslbuild's own, per slice for a
// universal artifact, sorted.
func buildProperties(m *artifact.Manifest) *[]cdx.Property {
	arch := m.Target.Arch
	if len(m.Slices) > 0 {
		arch = "universal2"
	}
	props := []cdx.Property{
		{Name: "build:operating-system", Value: m.Target.OS},
		{Name: "build:architecture", Value: arch},
		{Name: "build:flags", Value: strings.Join(m.Target.Options, " ")},
	}
	var own []cdx.Property
	add := func(prefix string, t platform.Slice) {
		own = append(own,
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
		own = append(own, cdx.Property{Name: "osslbuild:" + l.Arch + ":" + l.Library + ":compiler", Value: l.Line})
	}
	sort.SliceStable(own, func(i, j int) bool { return own[i].Name < own[j].Name })
	props = append(props, own...)
	return &props
}

// uuidFrom makes an RFC 4122 version-5-style UUID from data's SHA-256.
func uuidFrom(data []byte) string {
	h := sha256.Sum256(data)
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
