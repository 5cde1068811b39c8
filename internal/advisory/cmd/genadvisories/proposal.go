package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/advisory"
)

// The files of a proposal directory, read by
// scripts/advisory-pull-request.sh.
const (
	proposalTable  = "advisories.json" // the new table
	proposalTitle  = "title.txt"       // the pull request's title, one line
	proposalBody   = "body.md"         // the pull request's body
	proposalCommit = "commit.txt"      // the commit message
)

// change is what a new table changes against the one it replaces.
type change struct {
	added, changed, removed []advisory.Advisory
}

func diff(prev, next *advisory.Table) change {
	var c change
	var before []advisory.Advisory
	if prev != nil {
		before = prev.Advisories
	}
	old := map[string]string{}
	for _, a := range before {
		old[a.CVE] = line(a)
	}
	for _, a := range next.Advisories {
		switch was, ok := old[a.CVE]; {
		case !ok:
			c.added = append(c.added, a)
		case was != line(a):
			c.changed = append(c.changed, a)
		}
	}
	for _, a := range before {
		if !slices.ContainsFunc(next.Advisories, func(n advisory.Advisory) bool { return n.CVE == a.CVE }) {
			c.removed = append(c.removed, a)
		}
	}
	return c
}

// line is an advisory as the table encodes it.
func line(a advisory.Advisory) string {
	b, _ := advisory.Encode(&advisory.Table{Advisories: []advisory.Advisory{a}})
	return string(b)
}

func (c change) title(asOf string) string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{len(c.added), "new"}, {len(c.changed), "changed"}, {len(c.removed), "removed"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return "advisories: OpenSSL's records as of " + asOf + " (no advisory changed; the as-of date moves)"
	}
	return "advisories: OpenSSL's records as of " + asOf + " (" + strings.Join(parts, ", ") + ")"
}

// writeProposal writes the table and the pull request's text into dir
// (run checked that it is empty or absent).
func writeProposal(dir string, table []byte, prev, next *advisory.Table, notes []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c := diff(prev, next)
	title := c.title(next.AsOf)
	var body strings.Builder
	var srcs []string
	for _, s := range next.Sources {
		srcs = append(srcs, fmt.Sprintf("%s/commit/%s (through %s)", s.URL, s.Commit, s.Through))
	}
	src := strings.Join(srcs, " and ")
	fmt.Fprintf(&body, "`internal/advisory/cmd/genadvisories` read OpenSSL's advisory records at %s and rebuilt `internal/advisory/advisories.json`: %d advisories, complete through %s", src, len(next.Advisories), next.AsOf)
	if prev != nil {
		fmt.Fprintf(&body, " (the table it replaces: %d, as of %s)", len(prev.Advisories), prev.AsOf)
	}
	body.WriteString(". The advisory and check tests (short tier) passed on it before this was proposed.\n\n")
	section := func(name string, as []advisory.Advisory) {
		if len(as) == 0 {
			return
		}
		fmt.Fprintf(&body, "**%s**\n\n| CVE | date | severity | fixed in |\n|---|---|---|---|\n", name)
		for _, a := range as {
			var fixes []string
			for _, r := range a.Affected {
				fixes = append(fixes, r.Series+": "+r.Fix())
			}
			if len(fixes) == 0 {
				fixes = []string{"no OpenSSL release named"}
			}
			fmt.Fprintf(&body, "| %s | %s | %s | %s |\n", a.CVE, a.Date, a.Severity, strings.Join(fixes, "; "))
		}
		body.WriteString("\n")
	}
	section("New", c.added)
	section("Changed", c.changed)
	section("Removed", c.removed)
	if len(notes) > 0 {
		fmt.Fprintf(&body, "<details><summary>What the generator noted (%d)</summary>\n\n", len(notes))
		for _, n := range notes {
			fmt.Fprintf(&body, "- %s\n", strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(n))
		}
		body.WriteString("\n</details>\n")
	}
	commit := title + "\n\nRebuilt from " + src + " by internal/advisory/cmd/genadvisories.\n"
	if ids := cveList(c); ids != "" {
		commit += "\n" + ids + "\n"
	}
	for name, data := range map[string][]byte{proposalTable: table, proposalTitle: []byte(title + "\n"), proposalBody: []byte(body.String()), proposalCommit: []byte(commit)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func cveList(c change) string {
	var ids []string
	for _, a := range slices.Concat(c.added, c.changed, c.removed) {
		ids = append(ids, a.CVE)
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}
