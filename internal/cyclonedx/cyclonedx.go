// Package cyclonedx is osslbuild's one set of CycloneDX JSON types: what
// the build's sbom.json, check's -format=cyclonedx, check's reading of a
// shipped SBOM and the -vex reader use. Standard library only: osslcheck
// depends on no third-party module but golang.org/x (cmd/osslcheck's
// TestDependencies). Field order is the specification's, so the encoded
// bytes are what the writers always wrote.
package cyclonedx

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// BOM is a CycloneDX document (1.4 to 1.6 read; 1.5 written). Read with
// json.Unmarshal, it is strict about the types of the fields it knows (a
// version that is a number is an error naming the field) and ignores the
// rest; bomFormat and specVersion are not checked, each reader words
// their absence itself.
type BOM struct {
	Schema       string    `json:"$schema,omitempty"`
	BOMFormat    string    `json:"bomFormat"`
	SpecVersion  string    `json:"specVersion"`
	SerialNumber string    `json:"serialNumber,omitempty"`
	Version      int       `json:"version"`
	Metadata     *Metadata `json:"metadata,omitempty"`
	// Components is written even when empty: check's output always had it.
	Components []Component `json:"components"`
	// Vulnerabilities is nil when the document has none (absent or null),
	// an empty slice for [].
	Vulnerabilities []Vulnerability `json:"vulnerabilities,omitempty"`
}

type Metadata struct {
	Timestamp  string     `json:"timestamp,omitempty"`
	Tools      *Tools     `json:"tools,omitempty"`
	Component  *Component `json:"component,omitempty"`
	Properties []Property `json:"properties,omitempty"`
}

// Tools is 1.5's tools object. A 1.4 document's tools array is read into
// Legacy, never written.
type Tools struct {
	Components []Component `json:"components"`
	Legacy     []Component `json:"-"`
}

func (t *Tools) UnmarshalJSON(b []byte) error {
	type plain Tools
	var v any = (*plain)(t)
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		v = &t.Legacy
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("metadata.tools: %w", err)
	}
	return nil
}

type Component struct {
	BOMRef             string              `json:"bom-ref,omitempty"`
	Type               string              `json:"type,omitempty"`
	Supplier           *Organization       `json:"supplier,omitempty"`
	Name               string              `json:"name"`
	Version            string              `json:"version,omitempty"`
	Hashes             []Hash              `json:"hashes,omitempty"`
	Licenses           []LicenseChoice     `json:"licenses,omitempty"`
	CPE                string              `json:"cpe,omitempty"`
	PackageURL         string              `json:"purl,omitempty"`
	ExternalReferences []ExternalReference `json:"externalReferences,omitempty"`
	Properties         []Property          `json:"properties,omitempty"`
	Components         []Component         `json:"components,omitempty"`
	Evidence           *Evidence           `json:"evidence,omitempty"`
}

type Organization struct {
	Name string `json:"name,omitempty"`
}

type Hash struct {
	Algorithm string `json:"alg"`
	Value     string `json:"content"`
}

type LicenseChoice struct {
	License    *License `json:"license,omitempty"`
	Expression string   `json:"expression,omitempty"`
}

type License struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

type ExternalReference struct {
	URL  string `json:"url"`
	Type string `json:"type"`
}

type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Evidence is 1.5's. Another version's shape (1.4's licences and
// copyright only, 1.6's identity array) is tolerated: no reader needs
// evidence, so what does not fit is skipped, never an error.
type Evidence struct {
	Identity    *Identity    `json:"identity,omitempty"`
	Occurrences []Occurrence `json:"occurrences,omitempty"`
}

func (e *Evidence) UnmarshalJSON(b []byte) error {
	type plain Evidence
	var p plain
	if json.Unmarshal(b, &p) == nil {
		*e = Evidence(p)
	}
	return nil
}

type Identity struct {
	Field      string   `json:"field"`
	Confidence float64  `json:"confidence"`
	Methods    []Method `json:"methods"`
}

type Method struct {
	Technique  string  `json:"technique"`
	Confidence float64 `json:"confidence"`
	Value      string  `json:"value"`
}

type Occurrence struct {
	Location string `json:"location"`
}

type Source struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type Vulnerability struct {
	ID             string     `json:"id"`
	Source         *Source    `json:"source"`
	Ratings        []Rating   `json:"ratings"`
	Recommendation string     `json:"recommendation,omitempty"`
	Advisories     []Advisory `json:"advisories,omitempty"`
	Published      string     `json:"published,omitempty"`
	Analysis       *Analysis  `json:"analysis,omitempty"`
	Affects        []Affects  `json:"affects"`
}

type Rating struct {
	Source   *Source `json:"source"`
	Severity string  `json:"severity"`
}

type Advisory struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

type Analysis struct {
	State         string   `json:"state"`
	Justification string   `json:"justification,omitempty"`
	Response      []string `json:"response,omitempty"`
	Detail        string   `json:"detail,omitempty"`
}

type Affects struct {
	Ref      string     `json:"ref"`
	Versions []Affected `json:"versions"`
}

type Affected struct {
	Version string `json:"version,omitempty"`
	Range   string `json:"range,omitempty"`
	Status  string `json:"status"`
}

// Marshal is bom as indented JSON with a serial number made from what it
// says, so the same content gives the same bytes: the serial number is an
// RFC 4122 version-5-style UUID of the encoded content's SHA-256.
// escapeHTML escapes <, > and & as \u003c and the like: the build's
// sbom.json always had them escaped (as cyclonedx-go's encoder wrote it),
// check's output never.
func Marshal(bom *BOM, escapeHTML bool) ([]byte, error) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(escapeHTML)
	bom.SerialNumber = ""
	if err := enc.Encode(bom); err != nil {
		return nil, fmt.Errorf("cyclonedx: encode: %w", err)
	}
	h := sha256.Sum256(body.Bytes())
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	bom.SerialNumber = fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
	body.Reset()
	// What encoded once encodes again: only a string changed.
	_ = enc.Encode(bom)
	return body.Bytes(), nil
}
