package advisory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

// Suppression is one assessed CVE: an advisory someone looked at and found
// does not apply (not affected, a false positive, resolved another way).
type Suppression struct {
	CVE    string
	Reason string
	// Releases, when set, limits it to OpenSSL of these releases (a
	// CycloneDX entry whose affects names OpenSSL by purl); empty means
	// every OpenSSL found.
	Releases []string
	Where    string // "FILE:LINE" or "FILE: vulnerabilities[3]"
}

// Suppressions are the assessed CVEs of one file.
type Suppressions struct {
	Source  string // the file
	Entries []Suppression
}

// ErrSuppressions is matched (errors.Is) by every error reading a file of
// assessed CVEs returns.
var ErrSuppressions = errors.New("malformed file of assessed CVEs")

// MaxSuppressionsSize bounds the file read.
const MaxSuppressionsSize = 16 << 20

// ReadSuppressions reads a file of assessed CVEs (ParseSuppressions).
func ReadSuppressions(path string) (*Suppressions, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("file of assessed CVEs: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("file of assessed CVEs: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", path, ErrSuppressions)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSuppressionsSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxSuppressionsSize {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrSuppressions, MaxSuppressionsSize)
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
// entry whose affects names OpenSSL by purl (pkg:generic/openssl@3.0.5)
// applies to those releases only.
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
		s.Entries = append(s.Entries, Suppression{CVE: id, Reason: reason, Where: where})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrSuppressions, err)
	}
	return s, nil
}

// cdxDoc is the part of a CycloneDX document assessments live in.
type cdxDoc struct {
	BOMFormat       *string    `json:"bomFormat"`
	SpecVersion     *string    `json:"specVersion"`
	Vulnerabilities *[]cdxVuln `json:"vulnerabilities"`
}

type cdxVuln struct {
	ID       string `json:"id"`
	Analysis *struct {
		State         string   `json:"state"`
		Justification string   `json:"justification"`
		Response      []string `json:"response"`
		Detail        string   `json:"detail"`
	} `json:"analysis"`
	Affects []struct {
		Ref string `json:"ref"`
	} `json:"affects"`
}

// suppressing are the analysis states saying a CVE does not apply;
// assessing are the others CycloneDX defines.
var (
	suppressing = []string{"not_affected", "false_positive", "resolved", "resolved_with_pedigree"}
	assessing   = []string{"exploitable", "in_triage"}
)

func parseCycloneDX(name string, data []byte) (*Suppressions, error) {
	var doc cdxDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w: CycloneDX JSON: %v", name, ErrSuppressions, err)
	}
	if doc.BOMFormat == nil || *doc.BOMFormat != "CycloneDX" {
		return nil, fmt.Errorf("%s: %w: bomFormat is not \"CycloneDX\": a JSON file here must be a CycloneDX VEX document", name, ErrSuppressions)
	}
	if doc.SpecVersion == nil || *doc.SpecVersion == "" {
		return nil, fmt.Errorf("%s: %w: no specVersion", name, ErrSuppressions)
	}
	if doc.Vulnerabilities == nil {
		return nil, fmt.Errorf("%s: %w: no vulnerabilities section: nothing assessed", name, ErrSuppressions)
	}
	s := &Suppressions{Source: name, Entries: []Suppression{}}
	for i, v := range *doc.Vulnerabilities {
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
		reason := []string{st}
		if j := v.Analysis.Justification; j != "" {
			reason = append(reason, j)
		}
		if len(v.Analysis.Response) > 0 {
			reason = append(reason, "response "+strings.Join(v.Analysis.Response, ", "))
		}
		if d := strings.TrimSpace(v.Analysis.Detail); d != "" {
			reason = append(reason, d)
		}
		e := Suppression{CVE: v.ID, Reason: strings.Join(reason, ": "), Where: where}
		for _, a := range v.Affects {
			if rel, ok := opensslPurl(a.Ref); ok {
				e.Releases = append(e.Releases, rel)
			}
		}
		s.Entries = append(s.Entries, e)
	}
	return s, nil
}

// opensslPurl reads the release of a package URL naming OpenSSL:
// "pkg:generic/openssl@3.0.5", "pkg:github/openssl/openssl@openssl-3.0.5".
func opensslPurl(ref string) (string, bool) {
	rest, ok := strings.CutPrefix(ref, "pkg:")
	if !ok {
		return "", false
	}
	rest, _, _ = strings.Cut(rest, "#")
	rest, _, _ = strings.Cut(rest, "?")
	path, ver, ok := strings.Cut(rest, "@")
	if !ok {
		return "", false
	}
	parts := strings.Split(path, "/")
	if !strings.EqualFold(parts[len(parts)-1], "openssl") {
		return "", false
	}
	if u, err := url.PathUnescape(ver); err == nil {
		ver = u
	}
	ver = strings.TrimPrefix(ver, "openssl-")
	v, err := ParseVersion(ver)
	if err != nil {
		return "", false
	}
	return v.Release(), true
}

// Lookup finds the assessment of cve for OpenSSL release rel ("3.0.5").
func (s *Suppressions) Lookup(cve, rel string) (Suppression, bool) {
	if s == nil {
		return Suppression{}, false
	}
	for _, e := range s.Entries {
		if e.CVE == cve && (len(e.Releases) == 0 || slices.Contains(e.Releases, rel)) {
			return e, true
		}
	}
	return Suppression{}, false
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
