package advisory

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/osslbuild/osslbuild/internal/ctxio"
	cdx "github.com/osslbuild/osslbuild/internal/cyclonedx"
	"github.com/osslbuild/osslbuild/internal/osslver"
)

// Suppression is one assessed CVE: an advisory someone looked at and found
// does not apply (not affected, a false positive, resolved another way).
type Suppression struct {
	CVE    string
	Reason string
	// Every marks a plain list's entry: it names no product, so it applies
	// to every OpenSSL found. A CycloneDX entry applies only to the
	// OpenSSL releases its affects name: Releases, and the version ranges
	// of its affects' versions.
	Every    bool
	Releases []string
	ranges   []vers
	Where    string // "FILE:LINE" or "FILE: vulnerabilities[3]"
}

// Suppressions are the assessed CVEs of one file.
type Suppressions struct {
	Source  string // the file
	Entries []Suppression
	// Notes name the CycloneDX entries that would suppress but name no
	// OpenSSL release, and so suppress nothing.
	Notes []string
}

// ErrSuppressions is matched (errors.Is) by every error reading a file of
// assessed CVEs returns.
var ErrSuppressions = errors.New("malformed file of assessed CVEs")

// MaxSuppressionsSize bounds the file read.
const MaxSuppressionsSize = 16 << 20

// ReadSuppressions reads a file of assessed CVEs (ParseSuppressions). It
// opens without blocking (ctxio.OpenRegular): a named pipe given as the
// file would otherwise hold check until something wrote to it.
func ReadSuppressions(path string) (*Suppressions, error) {
	data, err := ctxio.ReadFile(context.Background(), path, true, MaxSuppressionsSize)
	if errors.Is(err, ctxio.ErrNotRegular) {
		return nil, fmt.Errorf("%w: not a regular file: %w", ErrSuppressions, err)
	}
	if err != nil {
		// A missing file, or one larger than MaxSuppressionsSize.
		return nil, fmt.Errorf("file of assessed CVEs: %w", err)
	}
	return ParseSuppressions(path, data)
}

// ParseSuppressions reads assessed CVEs from data, named name in errors:
// a CycloneDX document (JSON, a VEX or a BOM with a vulnerabilities
// section) or a plain list, one "CVE-YYYY-NNNN reason" a line ("#" starts
// a comment line; blank lines are skipped). In CycloneDX an entry
// suppresses when its analysis.state says the CVE does not apply
// (not_affected, false_positive, resolved, resolved_with_pedigree), its
// reason being the justification, response and detail; exploitable and
// in_triage suppress nothing; an id that is no CVE is skipped; and an
// entry applies only to the OpenSSL releases its affects name (see
// affected): one naming none suppresses nothing, and Notes says so. A
// plain list names no product: its entries apply to every OpenSSL.
func ParseSuppressions(name string, data []byte) (*Suppressions, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: %w: not UTF-8 text", name, ErrSuppressions)
	}
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		return parseCycloneDX(name, data)
	}
	return parsePlain(name, data)
}

func parsePlain(name string, data []byte) (*Suppressions, error) {
	s := &Suppressions{Source: name, Entries: []Suppression{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), MaxSuppressionsSize)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", name, n)
		id, reason := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			id, reason = line[:i], strings.TrimSpace(line[i+1:])
		}
		if !IsCVE(id) {
			return nil, fmt.Errorf("%s: %w: %q: want \"CVE-YYYY-NNNN reason\" (a CVE identifier, then why it does not apply)", where, ErrSuppressions, truncate(line, 60))
		}
		if reason == "" {
			return nil, fmt.Errorf("%s: %w: %s: no reason given: say why it does not apply", where, ErrSuppressions, id)
		}
		s.Entries = append(s.Entries, Suppression{CVE: id, Reason: reason, Every: true, Where: where})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrSuppressions, err)
	}
	return s, nil
}

// suppressing are the analysis states saying a CVE does not apply;
// assessing are the others CycloneDX defines.
var (
	suppressing = []string{"not_affected", "false_positive", "resolved", "resolved_with_pedigree"}
	assessing   = []string{"exploitable", "in_triage"}
)

func parseCycloneDX(name string, data []byte) (*Suppressions, error) {
	var doc cdx.BOM
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w: CycloneDX JSON: %v", name, ErrSuppressions, err)
	}
	switch {
	case doc.BOMFormat != "CycloneDX":
		return nil, fmt.Errorf("%s: %w: bomFormat is not \"CycloneDX\": a JSON file here must be a CycloneDX VEX document", name, ErrSuppressions)
	case doc.SpecVersion == "":
		return nil, fmt.Errorf("%s: %w: no specVersion", name, ErrSuppressions)
	case doc.Vulnerabilities == nil:
		return nil, fmt.Errorf("%s: %w: no vulnerabilities section: nothing assessed", name, ErrSuppressions)
	}
	refs := map[string][]string{} // bom-ref -> the component's purl and CPE
	var walk func([]cdx.Component)
	walk = func(cs []cdx.Component) {
		for _, c := range cs {
			if c.BOMRef != "" {
				refs[c.BOMRef] = []string{c.PackageURL, c.CPE}
			}
			walk(c.Components)
		}
	}
	if doc.Metadata != nil && doc.Metadata.Component != nil {
		walk([]cdx.Component{*doc.Metadata.Component})
	}
	walk(doc.Components)
	s := &Suppressions{Source: name, Entries: []Suppression{}}
	for i, v := range doc.Vulnerabilities {
		where := fmt.Sprintf("%s: vulnerabilities[%d]", name, i)
		if v.ID == "" {
			return nil, fmt.Errorf("%s: %w: no id", where, ErrSuppressions)
		}
		if !IsCVE(v.ID) {
			continue // another database's identifier: no OpenSSL advisory has it
		}
		if v.Analysis == nil || v.Analysis.State == "" {
			return nil, fmt.Errorf("%s (%s): %w: no analysis.state: an assessment says whether it applies", where, v.ID, ErrSuppressions)
		}
		st := v.Analysis.State
		if slices.Contains(assessing, st) {
			continue
		}
		if !slices.Contains(suppressing, st) {
			return nil, fmt.Errorf("%s (%s): %w: analysis.state %q: want one of %s", where, v.ID, ErrSuppressions, st, strings.Join(append(slices.Clone(suppressing), assessing...), ", "))
		}
		response := ""
		if len(v.Analysis.Response) > 0 {
			response = "response " + strings.Join(v.Analysis.Response, ", ")
		}
		// The reason is the state, then what of justification, response and detail is given.
		reason := slices.DeleteFunc([]string{st, v.Analysis.Justification, response, strings.TrimSpace(v.Analysis.Detail)}, func(s string) bool { return s == "" })
		e := Suppression{CVE: v.ID, Reason: strings.Join(reason, ": "), Where: where}
		var named []string
		for _, a := range v.Affects {
			named = append(named, a.Ref)
			if err := affected(&e, a, ids(a.Ref, doc.SerialNumber, refs)); err != nil {
				return nil, fmt.Errorf("%s (%s): %w: %v", where, v.ID, ErrSuppressions, err)
			}
		}
		if len(e.Releases) == 0 && len(e.ranges) == 0 {
			what := "no affects"
			if len(named) > 0 {
				what = "affects " + strings.Join(named, ", ")
			}
			s.Notes = append(s.Notes, fmt.Sprintf("%s (%s): %s: no OpenSSL release named, so it suppresses nothing (name one by purl, pkg:generic/openssl@4.0.2, or CPE, with a version or a versions range)", where, v.ID, what))
		}
		s.Entries = append(s.Entries, e)
	}
	return s, nil
}

// ids are the identifiers an affects ref stands for: the ref itself (a
// purl or CPE given as the ref), and the purl and CPE of the component of
// the document whose bom-ref it is, directly or as a BOM-Link to this
// document (urn:cdx:UUID/VERSION#bom-ref, UUID that of its serialNumber
// urn:uuid:UUID).
func ids(ref, serial string, refs map[string][]string) []string {
	out := append([]string{ref}, refs[ref]...)
	self := "urn:cdx:" + strings.TrimPrefix(serial, "urn:uuid:") + "/"
	if link, frag, ok := strings.Cut(ref, "#"); ok && serial != "" && strings.HasPrefix(link, self) {
		if f, err := url.PathUnescape(frag); err == nil {
			out = append(out, refs[f]...)
		}
	}
	return out
}

// affected adds to e the OpenSSL releases one affects entry names: the
// versions and vers ranges it lists (a version whose status is affected
// or unknown is not assessed as unaffected, and is left out), else the
// version of the purl or CPE that names OpenSSL. A ref naming anything
// else adds nothing.
func affected(e *Suppression, a cdx.Affects, ids []string) error {
	openssl, rel := false, ""
	for _, id := range ids {
		if ok, r := opensslID(id); ok {
			openssl = true
			rel = cmp.Or(rel, r) // the first release named
		}
	}
	if !openssl {
		return nil
	}
	if len(a.Versions) == 0 {
		if rel != "" {
			e.Releases = append(e.Releases, rel)
		}
		return nil
	}
	for _, v := range a.Versions {
		switch v.Status {
		case "", "unaffected":
		case "affected", "unknown":
			continue
		default:
			return fmt.Errorf("affects %s: versions status %q: want affected, unaffected or unknown", a.Ref, v.Status)
		}
		switch {
		case v.Range != "":
			r, err := parseVers(v.Range)
			if err != nil {
				return fmt.Errorf("affects %s: %w", a.Ref, err)
			}
			e.ranges = append(e.ranges, r)
		case v.Version != "":
			pv, err := osslver.Parse(v.Version)
			if err != nil {
				return fmt.Errorf("affects %s: %w", a.Ref, err)
			}
			e.Releases = append(e.Releases, pv.Release())
		}
	}
	return nil
}

// opensslID reports whether a purl or CPE names OpenSSL, and the release
// it names ("" when it names none): "pkg:generic/openssl@3.0.5",
// "pkg:github/openssl/openssl@openssl-3.0.5",
// "cpe:2.3:a:openssl:openssl:3.0.5:*:*:*:*:*:*:*", "cpe:/a:openssl:openssl:3.0.5".
func opensslID(id string) (bool, string) {
	if f := strings.Split(id, ":"); len(f) >= 5 && f[0] == "cpe" && (f[1] == "2.3" || f[1] == "/a") {
		if f[1] == "/a" {
			f = append([]string{"cpe", "2.3", "a"}, f[2:]...)
		}
		if f[2] != "a" || !strings.EqualFold(f[3], "openssl") || !strings.EqualFold(f[4], "openssl") {
			return false, ""
		}
		if len(f) > 5 {
			if v, err := osslver.Parse(f[5]); err == nil {
				return true, v.Release()
			}
		}
		return true, ""
	}
	return opensslPurl(id)
}

// opensslPurl reports whether a package URL's name is openssl, with or
// without a version, and the release it names ("" when it names none):
// "pkg:generic/openssl@3.0.5", "pkg:github/openssl/openssl@openssl-3.0.5".
func opensslPurl(ref string) (bool, string) {
	rest, ok := strings.CutPrefix(ref, "pkg:")
	if !ok {
		return false, ""
	}
	rest, _, _ = strings.Cut(rest, "#")
	rest, _, _ = strings.Cut(rest, "?")
	path, ver, _ := strings.Cut(rest, "@")
	parts := strings.Split(path, "/")
	if len(parts) < 2 || !strings.EqualFold(parts[len(parts)-1], "openssl") {
		return false, ""
	}
	if u, err := url.PathUnescape(ver); err == nil {
		ver = u
	}
	v, err := osslver.Parse(strings.TrimPrefix(ver, "openssl-"))
	if err != nil {
		return true, ""
	}
	return true, v.Release()
}

// Lookup finds the assessment of cve for OpenSSL release rel ("3.0.5").
func (s *Suppressions) Lookup(cve, rel string) (Suppression, bool) {
	if s == nil {
		return Suppression{}, false
	}
	for _, e := range s.Entries {
		if e.CVE == cve && e.covers(rel) {
			return e, true
		}
	}
	return Suppression{}, false
}

// covers reports whether the entry applies to OpenSSL release rel.
func (e Suppression) covers(rel string) bool {
	if e.Every || slices.Contains(e.Releases, rel) {
		return true
	}
	v, err := osslver.Parse(rel)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(e.ranges, func(r vers) bool { return r.contains(v) })
}

// vers is a version range in the package-URL project's vers syntax, which
// CycloneDX uses for a range of affected versions:
// "vers:generic/>=4.0.0|<4.0.3", "vers:generic/*". Versions are OpenSSL's
// (osslver.Parse, osslver.Compare) whatever the scheme.
type vers struct {
	all bool
	cs  []versConstraint // sorted by version
}

type versConstraint struct {
	op string // "=", "!=", "<", "<=", ">", ">="
	v  osslver.Version
}

func parseVers(s string) (vers, error) {
	rest, ok := strings.CutPrefix(s, "vers:")
	_, cons, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || cons == "" {
		return vers{}, fmt.Errorf("range %q: want vers:SCHEME/CONSTRAINTS, such as vers:generic/>=4.0.0|<4.0.3", s)
	}
	if cons == "*" {
		return vers{all: true}, nil
	}
	var r vers
	for _, c := range strings.Split(cons, "|") {
		c = strings.TrimSpace(c)
		op := "="
		for _, o := range []string{">=", "<=", "!=", "<", ">", "="} {
			if after, ok := strings.CutPrefix(c, o); ok {
				op, c = o, after
				break
			}
		}
		if u, err := url.PathUnescape(c); err == nil {
			c = u
		}
		v, err := osslver.Parse(c)
		if err != nil {
			return vers{}, fmt.Errorf("range %q: %w", s, err)
		}
		r.cs = append(r.cs, versConstraint{op, v})
	}
	slices.SortStableFunc(r.cs, func(a, b versConstraint) int { return osslver.Compare(a.v, b.v) })
	return r, nil
}

// contains is the vers specification's test: an equal "=" is in and an
// equal "!=" out; of the other constraints, below a leading "<" or "<=",
// above a trailing ">" or ">=", or between a ">"/">=" and the "<"/"<="
// after it is in; anything else is out.
func (r vers) contains(v osslver.Version) bool {
	if r.all {
		return true
	}
	var cs []versConstraint
	for _, c := range r.cs {
		switch eq := osslver.Compare(v, c.v) == 0; c.op {
		case "=":
			if eq {
				return true
			}
		case "!=":
			if eq {
				return false
			}
		default:
			cs = append(cs, c)
		}
	}
	holds := func(c versConstraint) bool {
		d := osslver.Compare(v, c.v)
		switch c.op {
		case "<":
			return d < 0
		case "<=":
			return d <= 0
		case ">":
			return d > 0
		}
		return d >= 0
	}
	below := func(c versConstraint) bool { return c.op == "<" || c.op == "<=" }
	for i, c := range cs {
		switch {
		case i == 0 && below(c) && holds(c):
			return true
		case i == len(cs)-1 && !below(c) && holds(c):
			return true
		case i+1 < len(cs) && !below(c) && below(cs[i+1]) && holds(c) && holds(cs[i+1]):
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
