package check

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	cdx "github.com/osslbuild/osslbuild/internal/cyclonedx"
	"github.com/osslbuild/osslbuild/internal/osslver"
)

// CycloneDX (-format=cyclonedx) is what check found as a CycloneDX 1.5
// SBOM: 1.5, the version of the SBOM an osslbuild build writes
// (sbom.SpecVersion) and of the SBOMs pyca/cryptography's wheels carry,
// so one reader reads both; every field used here exists in 1.5.
//
// One component (type library) per OpenSSL-family library found in each
// binary: the slices of one file holding the same library and version
// string are one component, their architectures its evidence. OpenSSL has
// the purl pkg:generic/openssl@V and the CPE
// cpe:2.3:a:openssl:openssl:V:*:*:*:*:*:*:* that vulnerability databases
// match on (of the release matched: 3.0.5 for 3.0.5+quic), as the build's
// SBOM names it; a fork (BoringSSL, AWS-LC,
// LibreSSL) has its own name and purl, no OpenSSL CPE and no advisories;
// a library whose version is unknown has no version, purl or CPE, and says
// so in the property osslbuild:version. Evidence: the file (and each link
// to it) as occurrences, the version string found as identity; the
// member inside a wheel or tarball, the architectures, each slice's
// optimisation, instruction-set level, deployment target and verdict, the
// series' end of life and the file's SHA-256 as osslbuild:* properties.
//
// OpenSSL's advisories affecting the components are the vulnerabilities
// section: each advisory once, its affects naming every component it
// affects, rated as OpenSSL rated it, its recommendation the fixing
// release of each affected series or "no public fix". An advisory the
// -vex file assessed as not applying is a vulnerability entry of its own
// for the components it was assessed for, with the analysis the file
// gives (its state; a plain "CVE reason" line is written as not_affected)
// and its reason as detail: a reader sees it was looked at, not that it
// was missed.
//
// Deterministic: the same result gives the same bytes. The serial number
// derives from the content, and the timestamp is SOURCE_DATE_EPOCH's
// (sourceDateEpoch), left out when it is "".
func CycloneDX(w io.Writer, res *Result, version, timestamp string) error {
	bom := &cdx.BOM{Schema: "http://cyclonedx.org/schema/bom-1.5.schema.json", BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1}
	bom.Metadata = &cdx.Metadata{
		Timestamp:  timestamp,
		Tools:      &cdx.Tools{Components: []cdx.Component{{Type: "application", Name: "osslbuild check", Version: version}}},
		Properties: metadataProperties(res),
	}

	bom.Components = []cdx.Component{}
	vulns := vulnSet{}
	for bi, b := range res.Binaries {
		for _, lib := range libraries(b) {
			c := component(bi, b, lib)
			for _, s := range lib.slices {
				vulns.add(c.BOMRef, c.Version, s.Advisories)
			}
			bom.Components = append(bom.Components, c)
		}
	}
	bom.Vulnerabilities = vulns.list()

	// HTML characters as they are; the serial number derives from the
	// content, as the build's SBOM's does.
	body, err := cdx.Marshal(bom, false)
	if err != nil {
		return err
	}
	_, err = w.Write(body)
	return err
}

// sourceDateEpoch is SOURCE_DATE_EPOCH (read through env) as an RFC 3339
// date-time, "" when it is unset. A value that is not seconds since 1970,
// or whose year RFC 3339 (and so the CycloneDX schema) cannot write, past
// 9999, is a usage error: Run refuses it before checking anything.
func sourceDateEpoch(env func(string) string) (string, error) {
	s := env("SOURCE_DATE_EPOCH")
	if s == "" {
		return "", nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return "", usage("SOURCE_DATE_EPOCH=%q: want seconds since 1970", s)
	case sec < 0:
		return "", usage("SOURCE_DATE_EPOCH=%q: before 1970; want seconds since 1970", s)
	case sec > maxEpoch:
		return "", usage("SOURCE_DATE_EPOCH=%q: after 9999, which an RFC 3339 date-time cannot write; want at most %d (9999-12-31T23:59:59Z)", s, maxEpoch)
	}
	return time.Unix(sec, 0).UTC().Format(time.RFC3339), nil
}

// maxEpoch is 9999-12-31T23:59:59Z, RFC 3339's last second.
const maxEpoch = 253402300799

// library is the slices of one binary holding one library: same family,
// same version string.
type library struct {
	family  inspect.Family // "" when only build information, no version string, says what it is
	text    string         // the version string found, "" when none
	version string         // the library's own version number, "" when unknown
	slices  []Slice
}

// libraries are the OpenSSL-family libraries in b, in slice order: every
// judged slice (it carries OpenSSL build information) and every slice a
// fork's version string or source paths name. A slice not judged whose
// only trace is OpenSSL's version string is a program compiled against
// OpenSSL's headers (it loads the library, which is a file of its own): no
// component, as check matches no advisories against it either.
func libraries(b Binary) []*library {
	var out []*library
	for _, s := range b.Slices {
		if s.Status == StatusNotJudged && (s.Family == "" || s.Family == string(inspect.FamilyOpenSSL)) {
			continue
		}
		f, num := inspect.FamilyOf(s.Version)
		f = cmp.Or(f, inspect.Family(s.Family))
		i := slices.IndexFunc(out, func(l *library) bool { return l.family == f && l.text == s.Version })
		if i < 0 {
			out = append(out, &library{family: f, text: s.Version, version: num})
			i = len(out) - 1
		}
		out[i].slices = append(out[i].slices, s)
	}
	return out
}

func component(bi int, b Binary, l *library) cdx.Component {
	c := cdx.Component{
		Type:    "library",
		Name:    strings.ToLower(cmp.Or(string(l.family), "openssl")), // openssl, boringssl, aws-lc, libressl
		Version: l.version,
	}
	// The bom-ref is unique per component: the binary's place in the
	// result, then the library.
	c.BOMRef = fmt.Sprintf("binary-%d:%s", bi+1, c.Name)
	if l.version != "" {
		c.BOMRef += "@" + l.version
		c.PackageURL = "pkg:generic/" + c.Name + "@" + strings.ReplaceAll(l.version, "+", "%2B")
		if l.family == inspect.FamilyOpenSSL {
			c.Supplier = &cdx.Organization{Name: "OpenSSL"}
			// The CPE names the release vulnerability databases list and
			// check matched advisories against: 3.0.5 for 3.0.5+quic (the
			// property osslbuild:advisories:caveat says what that misses).
			rel := l.version
			if v, err := osslver.Parse(l.version); err == nil {
				rel = v.Release()
			}
			c.CPE = "cpe:2.3:a:openssl:openssl:" + cpeEscape(rel) + ":*:*:*:*:*:*:*"
		}
	}
	ev := &cdx.Evidence{Occurrences: []cdx.Occurrence{{Location: b.Path}}}
	for _, ln := range b.Links {
		ev.Occurrences = append(ev.Occurrences, cdx.Occurrence{Location: ln})
	}
	if l.text != "" {
		ev.Identity = &cdx.Identity{Field: "version", Confidence: 1,
			Methods: []cdx.Method{{Technique: "binary-analysis", Confidence: 1, Value: l.text}}}
	}
	c.Evidence = ev
	c.Properties = componentProperties(b, l)
	return c
}

// cpeEscape quotes what CPE 2.3's formatted string binding reserves in a
// version: every character but letters, digits, "_", "." and "-".
func cpeEscape(v string) string {
	var s strings.Builder
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			s.WriteByte('\\')
		}
		s.WriteRune(r)
	}
	return s.String()
}

func componentProperties(b Binary, l *library) []cdx.Property {
	var props []cdx.Property
	add := func(name, value string) {
		if value != "" {
			props = append(props, cdx.Property{Name: "osslbuild:" + name, Value: value})
		}
	}
	add("file", b.Path)
	add("member", b.Member)
	add("artifact", b.Artifact)
	add("file:format", b.Format)
	add("file:sha256", b.SHA256)
	add("family", string(l.family))
	switch {
	case l.text == "":
		add("version", "unknown: no version string found; not matched against advisories")
	case l.version == "":
		add("version", "unknown: "+l.text+" names no version number; not matched against advisories")
	}
	var archs []string
	for _, s := range l.slices {
		archs = append(archs, s.Arch)
		p := s.Arch + ":"
		add(p+"status", s.Status)
		add(p+"opt", s.Opt)
		add(p+"opt-status", s.OptStatus)
		add(p+"opt-source", s.OptSource)
		if s.ISA != nil {
			add(p+"isa-level", s.ISA.Level)
		}
		add(p+"minos", s.MinOS)
		add(p+"platform", s.Platform)
		if s.Signature != nil {
			add(p+"signature", s.Signature.Kind)
		}
	}
	add("archs", strings.Join(archs, ",")) // sorted among the others below
	if s := l.slices[0]; s.Series != nil {
		add("series", s.Series.Name)
		add("end-of-life", s.Series.EndOfLife)
		add("end-of-life:ended", strconv.FormatBool(s.Series.Ended))
		add("lts", strconv.FormatBool(s.Series.LTS))
	}
	if sa := l.slices[0].Advisories; sa != nil {
		add("advisories:release", sa.Release)
		add("advisories:count", strconv.Itoa(sa.Total))
		add("advisories:highest", sa.Highest)
		add("advisories:fix", sa.Fix)
		add("advisories:suppressed", strconv.Itoa(sa.Suppressed))
		for _, cv := range sa.Caveats {
			add("advisories:caveat", cv)
		}
	}
	// Names sorted; a name's values keep their order.
	slices.SortStableFunc(props, func(a, b cdx.Property) int { return strings.Compare(a.Name, b.Name) })
	return props
}

func metadataProperties(res *Result) []cdx.Property {
	var props []cdx.Property
	add := func(name, value string) { props = append(props, cdx.Property{Name: "osslbuild:" + name, Value: value}) }
	add("check:path", res.Path)
	add("check:ok", strconv.FormatBool(res.OK))
	add("check:min-opt", res.MinOpt)
	if a := res.Advisories; a != nil {
		add("advisories:as-of", a.AsOf)
		add("advisories:table", a.Table)
		add("advisories:origin", a.Origin)
		for _, src := range a.Sources {
			add("advisories:source", src.URL+"/commit/"+src.Commit+" (through "+src.Through+")")
		}
		if a.FailOn != "" {
			add("advisories:fail-on", a.FailOn)
		}
		if a.Assessed != "" {
			add("advisories:vex", a.Assessed)
			add("advisories:suppressed", strconv.Itoa(a.Suppressed))
		}
	}
	return props
}

// vulnSet gathers the vulnerabilities: one entry per advisory affecting
// components, and one per advisory and assessment for the components the
// assessment suppressed it for. The key is the CVE, a NUL, then the
// assessment ("" for the affecting entry): in byte order, CVE order with
// affecting before assessed.
type vulnSet map[string]*vulnEntry

type vulnEntry struct {
	f        AdvisoryFinding   // its Suppressed is the assessment, "" for the affecting entry
	refs     []string          // components
	versions map[string]string // component -> version
	fixes    map[string]string // series -> fix
}

func (v vulnSet) add(ref, version string, sa *SliceAdvisories) {
	if sa == nil {
		return
	}
	for _, f := range sa.List {
		key := f.CVE + "\x00" + f.Suppressed
		e := v[key]
		if e == nil {
			e = &vulnEntry{f: f, versions: map[string]string{}, fixes: map[string]string{}}
			v[key] = e
		}
		if !slices.Contains(e.refs, ref) {
			e.refs = append(e.refs, ref)
			e.versions[ref] = version
		}
		e.fixes[f.Series] = f.Fix
		if f.PublicFix {
			e.fixes[f.Series] = "upgrade to " + f.Fix
		}
	}
}

// severity is OpenSSL's rating in CycloneDX's words.
func severity(s string) string {
	switch advisory.Severity(s) {
	case advisory.Critical, advisory.High, advisory.Low:
		return s
	case advisory.Moderate:
		return "medium"
	}
	return "unknown"
}

// list is the entries in CVE order, affecting before assessed.
func (v vulnSet) list() []cdx.Vulnerability {
	var out []cdx.Vulnerability
	src := &cdx.Source{Name: "OpenSSL", URL: "https://openssl-library.org/news/vulnerabilities/"}
	for _, k := range slices.Sorted(maps.Keys(v)) {
		e := v[k]
		vu := cdx.Vulnerability{
			ID:      e.f.CVE,
			Source:  src,
			Ratings: []cdx.Rating{{Source: src, Severity: severity(e.f.Severity)}},
		}
		if e.f.Date != "" {
			vu.Published = e.f.Date + "T00:00:00Z"
		}
		if e.f.URL != "" {
			vu.Advisories = []cdx.Advisory{{Title: "OpenSSL Security Advisory", URL: e.f.URL}}
		}
		var rec []string
		for _, ser := range slices.Sorted(maps.Keys(e.fixes)) {
			rec = append(rec, "OpenSSL "+ser+": "+e.fixes[ser])
		}
		vu.Recommendation = strings.Join(rec, "; ")
		st := "affected"
		if e.f.Suppressed != "" {
			st = "unaffected"
			vu.Analysis = &cdx.Analysis{State: assessedState(e.f.Suppressed), Detail: e.f.Suppressed}
		}
		for _, ref := range e.refs {
			vu.Affects = append(vu.Affects, cdx.Affects{Ref: ref, Versions: []cdx.Affected{{Version: e.versions[ref], Status: st}}})
		}
		out = append(out, vu)
	}
	return out
}

// assessedState is the analysis state an assessment gives: a CycloneDX
// VEX entry's own (its reason starts with it), not_affected for a plain
// "CVE reason" line.
func assessedState(reason string) string {
	for _, st := range []string{"resolved_with_pedigree", "resolved", "false_positive", "not_affected"} {
		if r, ok := strings.CutPrefix(reason, st); ok && (r == "" || strings.HasPrefix(r, ":") || strings.HasPrefix(r, " (")) {
			return st
		}
	}
	return "not_affected"
}
