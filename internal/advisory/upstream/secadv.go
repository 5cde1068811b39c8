package upstream

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// ErrText is matched (errors.Is) by every error ParseText returns.
var ErrText = errors.New("malformed advisory text")

// Text is what Build reads of one secadv advisory: the sections that
// name a CVE in their title (advisories since 2012 have them; older ones
// are free text and give nothing here).
type Text struct {
	Name     string
	Sections []Section
}

// Section is one CVE's part of an advisory.
type Section struct {
	CVEs     []string // the CVEs its title names
	Severity string   // "Severity: High", as written; "" when none
	Fixes    []Fix    // "OpenSSL 3.0 users should upgrade to 3.0.8"
}

// Fix is one upgrade line of a section.
type Fix struct {
	Series  string
	Release string
	// Premium: the line, or the paragraph it is in, says the release is
	// for premium support customers only.
	Premium bool
}

var (
	titleCVE   = regexp.MustCompile(`\((CVE-[0-9]{4}-[0-9]{4,9})(?:[,; ]+(CVE-[0-9]{4}-[0-9]{4,9}))*\)`)
	anyCVE     = regexp.MustCompile(`CVE-[0-9]{4}-[0-9]{4,9}`)
	underline  = regexp.MustCompile(`^=+\s*$`)
	severityRe = regexp.MustCompile(`^\s*Severity:\s*([A-Za-z]+)`)
	// upgrade matches "OpenSSL 3.0 users should upgrade to OpenSSL 3.0.8"
	// and "Premium support customers of OpenSSL 1.0.2 should upgrade to
	// 1.0.2w", across a line break. The release is held to osslver's
	// grammar after the match.
	upgrade = regexp.MustCompile(`(?:OpenSSL|customers of OpenSSL)\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)\s+(?:users\s+)?should\s+upgrade\s+to\s+(?:OpenSSL\s+)?([0-9]+\.[0-9]+\.[0-9]+[a-z]*)`)
)

// ParseText reads one secadv advisory; name names it in errors. Bytes
// that are not UTF-8 read as "?"; a text with no CVE section is no error
// (the oldest advisories have none).
func ParseText(name string, data []byte) (*Text, error) {
	// The oldest advisories are Latin-1: their names, never the facts
	// read here, carry the other bytes.
	text := strings.ToValidUTF8(string(data), "?")
	if text == "" {
		return nil, fmt.Errorf("%s: %w: empty", name, ErrText)
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	t := &Text{Name: name}
	var cur *Section
	var body []string
	flush := func() {
		if cur != nil {
			cur.Fixes = fixes(body)
			t.Sections = append(t.Sections, *cur)
		}
		cur, body = nil, nil
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		heading := i+1 < len(lines) && underline.MatchString(lines[i+1]) && strings.TrimSpace(l) != ""
		if heading {
			flush()
			if titleCVE.MatchString(l) {
				cur = &Section{CVEs: anyCVE.FindAllString(titleCVE.FindString(l), -1)}
			}
			i++ // the underline
			continue
		}
		if cur == nil {
			continue
		}
		if m := severityRe.FindStringSubmatch(l); m != nil && cur.Severity == "" {
			cur.Severity = m[1]
		}
		body = append(body, l)
	}
	flush()
	return t, nil
}

// fixes finds the upgrade lines of a section's body, paragraph by
// paragraph: one that starts "Premium support customers only" makes all
// its lines premium, and so does "premium" after a line's release, before
// the paragraph's next line naming OpenSSL ("1.0.2zh (premium support
// customers only).", "1.1.1zd.\n(premium support customers only)").
func fixes(body []string) []Fix {
	var out []Fix
	for _, para := range strings.Split(strings.Join(body, "\n"), "\n\n") {
		flat := strings.Join(strings.Fields(para), " ")
		allPremium := strings.HasPrefix(strings.ToLower(flat), "premium support customers only")
		for _, m := range upgrade.FindAllStringSubmatchIndex(flat, -1) {
			series, rel := flat[m[2]:m[3]], flat[m[4]:m[5]]
			// What follows the release up to the next upgrade line:
			// "1.1.1zd. (premium support customers only)".
			rest := flat[m[1]:]
			if next := strings.Index(rest, "OpenSSL "); next >= 0 {
				rest = rest[:next]
			}
			premium := allPremium || strings.Contains(strings.ToLower(rest), "premium") ||
				strings.HasSuffix(strings.ToLower(flat[:m[0]]), "premium support ")
			if v, err := osslver.Parse(rel); err == nil && v.Series() == series {
				out = append(out, Fix{Series: series, Release: rel, Premium: premium})
			}
		}
	}
	return out
}
