package check

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	cdx "github.com/osslbuild/osslbuild/internal/cyclonedx"
)

// An SBOM shipped with what is checked is held to what the binaries hold:
// a wheel's PEP 770 SBOMs (<name>.dist-info/sboms/*) and an osslbuild
// artifact's sbom.json. An OpenSSL component whose version is not the
// OpenSSL found in the binaries beside it fails (rule sbom-mismatch),
// naming the SBOM, both versions and the binary; OpenSSL found but listed
// by none of the SBOMs, or listed but found in no binary, is a note. An
// SBOM that cannot be read as the JSON it claims to be fails too (rule
// sbom-malformed): a shipped SBOM nobody can read vouches for nothing, and
// the rest of the check still runs.
const (
	// RuleSBOMMismatch: an SBOM shipped with the binaries lists another
	// OpenSSL than they hold.
	RuleSBOMMismatch Rule = "sbom-mismatch"
	// RuleSBOMMalformed: an SBOM shipped with the binaries cannot be read.
	RuleSBOMMalformed Rule = "sbom-malformed"
)

// SBOM is one SBOM found in the input and what holding it to the binaries
// beside it found.
type SBOM struct {
	Path     string          `json:"path"`             // the wheel or tarball, or the file on disk
	Member   string          `json:"member,omitempty"` // inside a wheel or tarball
	Format   string          `json:"format,omitempty"` // "CycloneDX 1.5", "SPDX-2.3"; "" when not read
	OpenSSL  []SBOMComponent `json:"openssl"`          // the OpenSSL components it lists
	Found    []string        `json:"found"`            // the OpenSSL versions the binaries beside it hold
	Error    string          `json:"error,omitempty"`  // why it could not be read (rule sbom-malformed)
	Problems []Problem       `json:"problems,omitempty"`
	Notes    []string        `json:"notes,omitempty"`
	OK       bool            `json:"ok"`

	root *root // the artifact it belongs to; nil for a wheel's
}

// SBOMComponent is one component an SBOM lists.
type SBOMComponent struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	PURL    string `json:"purl,omitempty"`
	CPE     string `json:"cpe,omitempty"`
}

// Name is "path" or "path(member)".
func (s SBOM) Name() string { return memberName(s.Path, s.Member) }

// MaxSBOMSize bounds an SBOM read into memory.
const MaxSBOMSize = 16 << 20

// ErrSBOMFormat is matched (errors.Is) by ParseSBOM's error for a
// document that is JSON but neither CycloneDX nor SPDX: not read.
var ErrSBOMFormat = errors.New("not read: format")

// wheelSBOM matches a PEP 770 SBOM in a wheel: a file under the top-level
// .dist-info directory's sboms/.
var wheelSBOM = regexp.MustCompile(`^[^/]+\.dist-info/sboms/.+`)

// isWheelSBOM reports whether a wheel member is one of its SBOMs.
func isWheelSBOM(member string) bool { return wheelSBOM.MatchString(path.Clean(member)) }

// sbomOf parses one SBOM's bytes when they are at most MaxSBOMSize; what
// it finds is returned, an unreadable one with its Error set.
func sbomOf(p, member string, b []byte) SBOM {
	s := SBOM{Path: p, Member: member, OpenSSL: []SBOMComponent{}, Found: []string{}}
	if len(b) > MaxSBOMSize {
		s.Error = fmt.Sprintf("larger than %d bytes: not read", MaxSBOMSize)
		return s
	}
	format, comps, err := ParseSBOM(b)
	switch {
	case err != nil && !looksJSON(b) && !strings.HasSuffix(strings.ToLower(member+p), ".json"):
		// PEP 770 allows any format: a file not named .json that does
		// not start like JSON is someone else's.
		s.Notes = append(s.Notes, fmt.Sprintf("%s: %v (not JSON)", s.Name(), ErrSBOMFormat))
	case errors.Is(err, ErrSBOMFormat):
		s.Notes = append(s.Notes, fmt.Sprintf("%s: %v (JSON, but neither CycloneDX nor SPDX)", s.Name(), err))
	case err != nil:
		s.Error = err.Error()
	default:
		s.Format = format
		for _, c := range comps {
			if IsOpenSSL(c) {
				s.OpenSSL = append(s.OpenSSL, c)
			}
		}
	}
	return s
}

// spdxDoc is the part of an SPDX JSON document check reads.
type spdxDoc struct {
	SPDXVersion *string `json:"spdxVersion"`
	Packages    []struct {
		Name         string `json:"name"`
		VersionInfo  string `json:"versionInfo"`
		ExternalRefs []struct {
			Type    string `json:"referenceType"`
			Locator string `json:"referenceLocator"`
		} `json:"externalRefs"`
	} `json:"packages"`
}

// ParseSBOM reads a CycloneDX or SPDX JSON document: its format ("CycloneDX
// 1.5", "SPDX-2.3") and every component it lists, nested ones (and the
// metadata's) too. It is strict about what it reads (components are
// objects, their name, version, purl and cpe strings) and ignores the
// rest. A JSON object that is neither gives an error matching
// ErrSBOMFormat; anything that is not one JSON object another error.
func ParseSBOM(b []byte) (string, []SBOMComponent, error) {
	var probe map[string]json.RawMessage
	if err := strictJSON(b, &probe); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return "", nil, fmt.Errorf("malformed JSON: not an object: %w", err)
		}
		return "", nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if probe == nil {
		return "", nil, errors.New("malformed JSON: null, not an object")
	}
	_, isCDX := probe["bomFormat"]
	_, isSPDX := probe["spdxVersion"]
	var out []SBOMComponent
	switch {
	case isCDX:
		// The probe read b as one JSON object: what is left to refuse is
		// a field of the wrong type.
		var d cdx.BOM
		if err := json.Unmarshal(b, &d); err != nil {
			return "", nil, fmt.Errorf("malformed CycloneDX: %w", err)
		}
		if d.BOMFormat != "CycloneDX" {
			return "", nil, fmt.Errorf("malformed CycloneDX: bomFormat is not \"CycloneDX\"")
		}
		var walk func([]cdx.Component)
		walk = func(cs []cdx.Component) {
			for _, c := range cs {
				out = append(out, SBOMComponent{Name: c.Name, Version: c.Version, PURL: c.PackageURL, CPE: c.CPE})
				walk(c.Components)
			}
		}
		if d.Metadata != nil && d.Metadata.Component != nil {
			walk([]cdx.Component{*d.Metadata.Component})
		}
		walk(d.Components)
		format := "CycloneDX"
		if d.SpecVersion != "" {
			format += " " + d.SpecVersion
		}
		return format, out, nil
	case isSPDX:
		var d spdxDoc
		if err := strictJSON(b, &d); err != nil {
			return "", nil, fmt.Errorf("malformed SPDX: %w", err)
		}
		if d.SPDXVersion == nil || !strings.HasPrefix(*d.SPDXVersion, "SPDX-") {
			return "", nil, fmt.Errorf("malformed SPDX: spdxVersion is not \"SPDX-...\"")
		}
		for _, p := range d.Packages {
			c := SBOMComponent{Name: p.Name, Version: p.VersionInfo}
			for _, r := range p.ExternalRefs {
				switch r.Type {
				case "purl":
					c.PURL = r.Locator
				case "cpe23Type":
					c.CPE = r.Locator
				}
			}
			out = append(out, c)
		}
		return *d.SPDXVersion, out, nil
	}
	return "", nil, ErrSBOMFormat
}

// strictJSON decodes exactly one JSON value from b into v.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return errors.New("empty document")
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON document")
	}
	return nil
}

// looksJSON reports whether b starts like a JSON document.
func looksJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n\ufeff")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// IsOpenSSL reports whether a component is OpenSSL: named openssl (in any
// case), or with a purl pkg:generic/openssl or pkg:github/openssl/openssl,
// or a CPE cpe:2.3:a:openssl:openssl.
func IsOpenSSL(c SBOMComponent) bool {
	if strings.EqualFold(strings.TrimSpace(c.Name), "openssl") {
		return true
	}
	if name, _ := purlOf(c.PURL); name == "pkg:generic/openssl" || name == "pkg:github/openssl/openssl" {
		return true
	}
	return strings.HasPrefix(strings.ToLower(c.CPE), "cpe:2.3:a:openssl:openssl:")
}

// purlOf splits a purl into its type/namespace/name, lowercased, and its
// version (unescaped); qualifiers and subpath are dropped.
func purlOf(p string) (name, version string) {
	p, _, _ = strings.Cut(p, "#")
	p, _, _ = strings.Cut(p, "?")
	name, version, _ = strings.Cut(p, "@")
	if v, err := url.PathUnescape(version); err == nil {
		version = v
	}
	return strings.ToLower(name), version
}

// Listed is the OpenSSL version a component lists: its version, else its
// purl's, else its CPE's; "" when none says.
func (c SBOMComponent) Listed() string {
	_, purl := purlOf(c.PURL)
	var cpe string
	if f := strings.Split(c.CPE, ":"); len(f) > 5 && f[5] != "*" && f[5] != "-" {
		cpe = strings.ReplaceAll(f[5], `\`, "")
	}
	return cmp.Or(c.Version, purl, cpe)
}

// sameVersion reports whether an SBOM's version names the release a
// binary's version string ("OpenSSL 3.5.7 9 Jun 2026") is: "3.5.7",
// "v3.5.7", "openssl-3.5.7", "OpenSSL_1_1_1w" all name 3.5.7 or 1.1.1w.
func sameVersion(listed, found string) bool {
	l := strings.ToLower(strings.TrimSpace(listed))
	for _, pre := range []string{"openssl-", "openssl_", "openssl ", "v"} {
		l = strings.TrimPrefix(l, pre)
	}
	if !strings.Contains(l, ".") {
		l = strings.ReplaceAll(l, "_", ".")
	}
	if f, num := inspect.FamilyOf(l); f == inspect.FamilyOpenSSL {
		l = num // "openssl 3.5.7 9 jun 2026" written whole
	} else if f, num := inspect.FamilyOf("OpenSSL " + l); f == inspect.FamilyOpenSSL {
		l = num
	}
	return l != "" && strings.EqualFold(l, found)
}

// sbomFound is an OpenSSL found in a binary beside an SBOM.
type sbomFound struct {
	binary, arch string
	family       inspect.Family
	num, version string
}

// holdSBOMs holds every SBOM found to the binaries beside it: a wheel's to
// the wheel's, an artifact's to the artifact's. It runs once every binary
// is judged, adding failures and notes to the result.
func (c *checker) holdSBOMs() {
	if len(c.sboms) == 0 {
		return
	}
	listedBy := map[string]bool{} // a group (wheel, artifact) with an SBOM listing OpenSSL, or noted as listing none
	key := func(s SBOM) string {
		if s.root != nil {
			return "artifact:" + s.root.where()
		}
		return "wheel:" + s.Path
	}
	for _, s := range c.sboms {
		if len(s.OpenSSL) > 0 {
			listedBy[key(s)] = true
		}
	}
	for i := range c.sboms {
		s := &c.sboms[i]
		s.Notes = append([]string(nil), s.Notes...)
		var found []sbomFound
		for _, b := range c.res.Binaries {
			if s.root != nil && b.root != s.root || s.root == nil && (b.Path != s.Path || b.Member == "") {
				continue
			}
			for _, sl := range b.Slices {
				if sl.Version == "" || !sl.Libcrypto && sl.OptStatus == string(validate.OptNone) {
					continue
				}
				f, num := inspect.FamilyOf(sl.Version)
				if f == "" {
					continue
				}
				found = append(found, sbomFound{binary: b.Name(), arch: sl.Arch, family: f, num: num, version: sl.Version})
				if !slices.Contains(s.Found, sl.Version) {
					s.Found = append(s.Found, sl.Version)
				}
			}
		}
		switch {
		case s.Error != "":
			s.Problems = append(s.Problems, Problem{Rule: RuleSBOMMalformed, Message: s.Error})
		case len(s.OpenSSL) == 0 && len(found) > 0 && s.Format != "" && !listedBy[key(*s)]:
			listedBy[key(*s)] = true
			s.Notes = append(s.Notes, fmt.Sprintf("%s: lists no OpenSSL, but %s %s holds %s (found, not listed)", s.Name(), found[0].binary, found[0].arch, found[0].version))
		case len(s.OpenSSL) > 0 && len(found) == 0:
			s.Notes = append(s.Notes, fmt.Sprintf("%s: lists OpenSSL %s, but no binary beside it holds OpenSSL (listed, not found)", s.Name(), listedVersions(s.OpenSSL)))
		case len(s.OpenSSL) > 0:
			c.compareSBOM(s, found)
		}
		s.OK = len(s.Problems) == 0
		for _, p := range s.Problems {
			c.res.Failures = append(c.res.Failures, s.Name()+": "+p.Message)
		}
		c.res.Notes = append(c.res.Notes, s.Notes...)
	}
	c.res.SBOMs = c.sboms
}

// compareSBOM fails every binary's OpenSSL the SBOM does not list and,
// when each binary's is listed, every version listed that none holds.
func (c *checker) compareSBOM(s *SBOM, found []sbomFound) {
	var versions []SBOMComponent
	for _, o := range s.OpenSSL {
		if o.Listed() == "" {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: lists OpenSSL (%s) without a version: not compared", s.Name(), o.Name))
			continue
		}
		versions = append(versions, o)
	}
	if len(versions) == 0 {
		return
	}
	matched := make([]bool, len(versions))
	for _, f := range found {
		ok := false
		for i, o := range versions {
			if f.family == inspect.FamilyOpenSSL && sameVersion(o.Listed(), f.num) {
				matched[i], ok = true, true
			}
		}
		if !ok {
			s.Problems = append(s.Problems, Problem{Rule: RuleSBOMMismatch,
				Message: fmt.Sprintf("lists OpenSSL %s, but %s %s holds %s", listedVersions(versions), f.binary, f.arch, f.version)})
		}
	}
	if len(s.Problems) > 0 {
		return // every line names the versions listed already
	}
	for i, o := range versions {
		if !matched[i] {
			s.Problems = append(s.Problems, Problem{Rule: RuleSBOMMismatch,
				Message: fmt.Sprintf("lists OpenSSL %s, which no binary beside it holds (%s holds %s)", o.Listed(), found[0].binary, found[0].version)})
		}
	}
}

// listedVersions is the versions the components list, "3.5.6" or
// "3.5.6, 3.0.2"; "(no version)" for one without.
func listedVersions(cs []SBOMComponent) string {
	var vs []string
	for _, c := range cs {
		vs = append(vs, cmp.Or(c.Listed(), "(no version)"))
	}
	return strings.Join(dedup(vs), ", ")
}

// containerSBOM reads an SBOM member of a wheel, or a sbom.json of a
// tarball (an artifact's, once the walk knows the artifacts: see
// attachSBOMs), recording its digest for the artifact's manifest.
func (c *checker) containerSBOM(p string, m inspect.Member, rd io.Reader, entries map[string]artifact.Entry, r *jobResult) error {
	var b bytes.Buffer
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(&b, h), io.LimitReader(rd, MaxSBOMSize+1))
	if err != nil {
		return memberErr(memberName(p, m.Name), err)
	}
	if n > MaxSBOMSize {
		if _, err := io.Copy(h, rd); err != nil { // the digest is of the whole member
			return err
		}
	}
	entries[path.Clean(m.Name)] = artifact.Entry{SHA256: hex.EncodeToString(h.Sum(nil))}
	r.sboms = append(r.sboms, sbomOf(p, m.Name, b.Bytes())) // over MaxSBOMSize when n is
	return nil
}

// attachSBOMs gives each sbom.json read from a tarball the artifact whose
// directory holds it; one beside no artifact's manifest is no SBOM check
// reads.
func attachSBOMs(r *jobResult, manifests []*root) {
	kept := r.sboms[:0]
	for _, s := range r.sboms {
		if path.Base(path.Clean(s.Member)) == artifact.SBOMName && !isWheelSBOM(s.Member) {
			for _, rt := range manifests {
				if rt.dir == path.Dir(path.Clean(s.Member)) {
					s.root = rt
				}
			}
			if s.root == nil {
				continue
			}
		}
		kept = append(kept, s)
	}
	r.sboms = kept
}
