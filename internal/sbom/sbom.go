// Package sbom writes the CycloneDX SBOM an osslbuild artifact carries for
// whoever vendors its libraries.
package sbom

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	cdx "github.com/osslbuild/osslbuild/internal/cyclonedx"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// SpecVersion is the CycloneDX version of sbom.json: 1.5, what pyca's
// generate_sbom.py writes and what pyca/cryptography's wheels carry today,
// so the drop-in changes nothing a reader of those wheels' SBOMs needs to
// understand (every field used here exists in 1.5; 1.6 adds nothing it
// needs).
const SpecVersion = "1.5"

// Write writes dir/sbom.json: the SBOM a consumer embeds where it vendors
// the libraries (maturin's --sbom-include puts it in a wheel's
// .dist-info/sboms/, PEP 770). It describes only what the consumer
// vendors: one component, the OpenSSL release the libraries were built
// from. No metadata.component names the artifact, no file components list
// lib/*.a and there is no dependency graph between them, since a wheel
// holds none of these; the artifact's files and their digests are the
// manifest's (manifest.json), which is the artifact's own record.
//
// The component holds everything pyca/infra's generate_sbom.py writes: the
// purl pkg:generic/openssl@<v>?download_url=<GitHub release URL>, the
// tarball's SHA-256, a "distribution" reference to that URL, and the
// properties build:operating-system (macos), build:architecture (arm64,
// x86_64 or universal2) and build:flags (the Configure options,
// space-separated, as in pyca's OPENSSL_BUILD_FLAGS), first and in pyca's
// order. What only osslbuild knows follows as osslbuild:* properties: the
// osslbuild revision, the recipe's digest and where it came from, each
// slice's configure target, deployment target, options and compiler flags,
// and the compiler line found in each library (the effective flags). Also
// supplier, CPE and licence.
//
// It is deterministic: the timestamp is SOURCE_DATE_EPOCH and the serial
// number derives from the content.
func Write(dir string, m *artifact.Manifest) error {
	v := m.OpenSSL.Version
	// Where OpenSSL publishes release v: its GitHub release asset, the URL
	// pyca's SBOM names whatever mirror served the bytes (the SHA-256 says
	// which bytes they were).
	download := recipe.UpstreamURLs(v)[0]
	src := cdx.Component{
		BOMRef:     "pkg:generic/openssl@" + v,
		Type:       "library",
		Supplier:   &cdx.Organization{Name: "OpenSSL"},
		Name:       "openssl",
		Version:    v,
		PackageURL: "pkg:generic/openssl@" + v + "?download_url=" + download,
		CPE:        "cpe:2.3:a:openssl:openssl:" + v + ":*:*:*:*:*:*:*",
		Hashes:     []cdx.Hash{{Algorithm: "SHA-256", Value: m.OpenSSL.SHA256}},
		Licenses:   []cdx.LicenseChoice{{License: &cdx.License{ID: "Apache-2.0"}}},
		ExternalReferences: []cdx.ExternalReference{
			{Type: "distribution", URL: download},
			{Type: "website", URL: "https://openssl-library.org/"},
		},
		Properties: buildProperties(m),
	}
	bom := &cdx.BOM{
		Schema: "http://cyclonedx.org/schema/bom-" + SpecVersion + ".schema.json", BOMFormat: "CycloneDX", SpecVersion: SpecVersion, Version: 1,
		Metadata: &cdx.Metadata{
			Timestamp: time.Unix(m.SourceDateEpoch, 0).UTC().Format(time.RFC3339),
			Tools: &cdx.Tools{Components: []cdx.Component{{
				Type: "application", Name: "osslbuild", Version: m.Osslbuild,
			}}},
		},
		Components: []cdx.Component{src},
	}
	// HTML characters escaped, as cyclonedx-go's encoder wrote them; the
	// serial number is made from what the SBOM says, so the same build
	// gives the same SBOM.
	body, err := cdx.Marshal(bom, true)
	if err != nil {
		return fmt.Errorf("sbom: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.SBOMName), body, 0o644); err != nil {
		return fmt.Errorf("sbom: %w", err)
	}
	return nil
}

// buildProperties records how OpenSSL was configured: pyca's three build:
// properties first, in pyca's order, then osslbuild's own, per slice for a
// universal artifact, sorted.
func buildProperties(m *artifact.Manifest) []cdx.Property {
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
	own = append(own, slices.DeleteFunc([]cdx.Property{
		{Name: "osslbuild:revision", Value: m.Osslbuild},
		{Name: "osslbuild:recipe:sha256", Value: m.Recipe.SHA256},
		{Name: "osslbuild:recipe:origin", Value: m.Recipe.Origin},
		{Name: "osslbuild:recipe:path", Value: m.Recipe.Path},
	}, func(p cdx.Property) bool { return p.Value == "" })...)
	slices.SortStableFunc(own, func(a, b cdx.Property) int { return strings.Compare(a.Name, b.Name) })
	return append(props, own...)
}
