// Command genadvisories builds internal/advisory/advisories.json from
// OpenSSL's own advisory records: a checkout of
// github.com/openssl/release-metadata (its secjson/ records and secadv/
// texts; every advisory since 1998) and, where that lags, OpenSSL's
// records in the CVE Program's list (github.com/CVEProject/cvelistV5,
// where OpenSSL, the CNA for its CVEs, publishes each on the advisory's
// day). The weekly advisory workflow runs it and proposes the result as a
// pull request; run it by hand the same way (the workflow adds -proposal
// DIR):
//
//	git clone https://github.com/openssl/release-metadata /tmp/rm
//	git clone --depth 1 --filter=blob:none --sparse https://github.com/CVEProject/cvelistV5 /tmp/cves
//	git -C /tmp/cves sparse-checkout set cves/$(date -u +%Y) cves/$(($(date -u +%Y) - 1))
//	go run ./internal/advisory/cmd/genadvisories \
//	    -src /tmp/rm -through "$(date -u +%F)" \
//	    -cves /tmp/cves -cves-through "$(date -u +%F)" \
//	    -notes openssl-4.0.2.tar.gz
//
// Each source is named in the table with its commit (git rev-parse HEAD
// of the directory, or -commit / -cves-commit) and the day it was read
// through; the table's as-of date is the newest of those days, the day
// through which it is complete. It refuses to write a table with a hole
// it can see (ErrHole): a CVE an advisory text or a release's notes
// (-notes: a release tarball or a CHANGES.md) name with no record, a range
// it cannot read; the reviewed exceptions are internal/advisory/upstream/gaps.txt.
// Every note (a range's fix taken from a text, a record and its text
// disagreeing, the two sources' copies of a record differing) is printed.
// The output is written whole or not at all. When the advisories are the
// ones already in -out, the file is kept as it is unless its as-of date is
// more than -refresh days older: a week with no new advisory proposes
// nothing, and the table's as-of date still never falls behind far
// enough for check's staleness warning (advisory.StaleAfterDays).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/advisory/upstream"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "genadvisories:", err)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("genadvisories", flag.ContinueOnError)
	fs.SetOutput(stderr)
	src := fs.String("src", "", "a checkout of openssl/release-metadata (required)")
	commit := fs.String("commit", "", "the commit of -src read (default: git rev-parse HEAD in -src)")
	through := fs.String("through", "", "the day -src was read, YYYY-MM-DD: it holds every advisory up to that day (required)")
	cves := fs.String("cves", "", "a checkout of CVEProject/cvelistV5, or the part of one read (cves/2026/...): OpenSSL's records in it are read too")
	cvesCommit := fs.String("cves-commit", "", "the commit of -cves read (default: git rev-parse HEAD in -cves)")
	cvesThrough := fs.String("cves-through", "", "the day -cves was read, YYYY-MM-DD (required with -cves)")
	cvesCommits := fs.String("cves-commits", "", "for records read one by one into -cves: a file of \"PATH COMMIT\" lines, each record's commit (the table then names it per advisory)")
	var notesFiles []string // -notes may be given more than once
	fs.Func("notes", "a release tarball or CHANGES.md whose releases' CVEs must each have a record (repeatable)", func(v string) error {
		notesFiles = append(notesFiles, v)
		return nil
	})
	gapsFile := fs.String("gaps", "", "the reviewed holes to accept (default: internal/advisory/upstream/gaps.txt as built in)")
	out := fs.String("out", filepath.Join("internal", "advisory", "advisories.json"), "the table to write")
	refresh := fs.Int("refresh", 30, "with the advisories unchanged, rewrite -out only when its as-of date is more than this many days older")
	proposal := fs.String("proposal", "", "when -out changes, also write it with a pull request's title, body and commit message into this directory (empty or absent)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *src == "" {
		return errors.New("-src is required: a checkout of openssl/release-metadata")
	}
	if *cves == "" && (*cvesCommit != "" || *cvesThrough != "" || *cvesCommits != "") {
		return errors.New("-cves-commit, -cves-commits and -cves-through describe -cves: give -cves")
	}
	// (No -proposal, "", reads as no directory.)
	if ents, err := os.ReadDir(*proposal); err == nil && len(ents) > 0 {
		return fmt.Errorf("-proposal %s: not empty; a proposal of an earlier run must not be mixed with this one's", *proposal)
	}
	ctx := context.Background()
	rm, err := source(ctx, upstream.ReleaseMetadata, *src, *commit, *through, "-")
	if err != nil {
		return err
	}
	records, texts, err := upstream.ReadDir(*src)
	if err != nil {
		return err
	}
	inputs := []upstream.Input{{Source: rm, Records: records, Texts: texts}}
	if *cves != "" {
		cl, err := source(ctx, upstream.CVEList, *cves, *cvesCommit, *cvesThrough, "-cves-")
		if err != nil {
			return err
		}
		var commits map[string]string
		if *cvesCommits != "" {
			if commits, err = upstream.ReadCommits(*cvesCommits); err != nil {
				return fmt.Errorf("-cves-commits: %w", err)
			}
		}
		recs, err := upstream.ReadCVEDir(*cves, commits)
		if err != nil {
			return err
		}
		inputs = append(inputs, upstream.Input{Source: cl, Records: recs})
	}
	o := upstream.Options{}
	for _, f := range notesFiles {
		n, err := upstream.ReadNotes(ctx, f)
		if err != nil {
			return fmt.Errorf("-notes: %w", err)
		}
		o.Notes = append(o.Notes, n...)
	}
	if *gapsFile == "" {
		o.Gaps, err = upstream.KnownGaps()
	} else {
		var b []byte
		if b, err = os.ReadFile(*gapsFile); err == nil {
			o.Gaps, err = upstream.ParseGaps(*gapsFile, string(b))
		}
	}
	if err != nil {
		return fmt.Errorf("-gaps: %w", err)
	}
	t, notes, err := upstream.Build(inputs, o)
	for _, n := range notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	if err != nil {
		return err
	}
	var prev *advisory.Table
	if old, err := os.ReadFile(*out); err == nil {
		// A table Parse refuses (nil) is replaced, and no proposal compares with it.
		prev, _ = advisory.Parse(*out, old)
		if prev != nil && sameAdvisories(prev, t) && prev.AgeDays(day(t.AsOf)) <= *refresh {
			fmt.Fprintf(stdout, "%s: %d advisories, unchanged; as of %s kept (%d days before %s, within -refresh=%d)\n", *out, len(t.Advisories), prev.AsOf, prev.AgeDays(day(t.AsOf)), t.AsOf, *refresh)
			return nil
		}
	}
	b, err := advisory.Encode(t)
	if err != nil {
		return err
	}
	// Written whole or not at all (ctxio.WriteFile).
	if err := ctxio.WriteFile(*out, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	if *proposal != "" {
		if err := writeProposal(*proposal, b, prev, t, notes); err != nil {
			return err
		}
	}
	nrec := 0
	for _, in := range inputs {
		nrec += len(in.Records)
	}
	fmt.Fprintf(stdout, "%s: %d advisories as of %s (%d records, %d advisory texts, %d release notes, %d notes)\n", *out, len(t.Advisories), t.AsOf, nrec, len(texts), len(o.Notes), len(notes))
	return nil
}

// source names a source directory as the table records it: its commit
// (given, or git's HEAD there) and the day it was read through. flagPrefix
// names the flags in messages ("-" or "-cves-").
func source(ctx context.Context, name, dir, commit, through, flagPrefix string) (advisory.Source, error) {
	if through == "" {
		return advisory.Source{}, fmt.Errorf("%sthrough is required: the day %s (%s) was read, YYYY-MM-DD", flagPrefix, dir, name)
	}
	if _, err := time.Parse(time.DateOnly, through); err != nil {
		return advisory.Source{}, fmt.Errorf("%sthrough=%s: want YYYY-MM-DD", flagPrefix, through)
	}
	if commit == "" {
		out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
		if err != nil {
			return advisory.Source{}, fmt.Errorf("%scommit: not given, and %s is no git checkout (git rev-parse HEAD: %v): name the commit of %s read", flagPrefix, dir, err, name)
		}
		commit = strings.TrimSpace(string(out))
	}
	return advisory.Source{Name: name, URL: upstream.URLOf(name), Commit: commit, Through: through}, nil
}

// sameAdvisories compares the advisories of two tables, whatever their
// as-of dates and commits.
func sameAdvisories(a, b *advisory.Table) bool {
	x, y := *a, *b
	x.AsOf, y.AsOf, x.Sources, y.Sources = "", "", nil, nil
	ea, err1 := advisory.Encode(&x)
	eb, err2 := advisory.Encode(&y)
	return err1 == nil && err2 == nil && string(ea) == string(eb)
}

func day(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}
