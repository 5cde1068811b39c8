// Command genadvisories builds internal/advisory/advisories.json from a
// checkout of OpenSSL's release metadata (github.com/openssl/release-metadata:
// its secjson/ records and secadv/ texts). The weekly advisory workflow
// runs it and proposes the result as a pull request; run it by hand the
// same way (the workflow adds -proposal DIR):
//
//	git clone https://github.com/openssl/release-metadata /tmp/release-metadata
//	go run ./internal/advisory/cmd/genadvisories -src /tmp/release-metadata \
//	    -as-of "$(date -u +%F)" -commit "$(git -C /tmp/release-metadata rev-parse HEAD)"
//
// Every note (a range left out, a severity the text supplied, a record and
// its text disagreeing) is printed; a record that cannot be read stops it
// with an error naming the file. The output is written whole or not at
// all. When the advisories are the ones already in -out, the file is kept
// as it is unless its as-of date is more than -refresh days older than
// -as-of: a week with no new advisory proposes nothing, and the table's
// as-of date still never falls behind far enough for check's staleness
// warning (advisory.StaleAfterDays).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/advisory/upstream"
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
	out := fs.String("out", filepath.Join("internal", "advisory", "advisories.json"), "the table to write")
	asOf := fs.String("as-of", "", "the day the records were read, YYYY-MM-DD (default: the newest advisory's date)")
	commit := fs.String("commit", "", "the commit of -src the records were read at")
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
	if *asOf != "" {
		if _, err := time.Parse(time.DateOnly, *asOf); err != nil {
			return fmt.Errorf("-as-of=%s: want YYYY-MM-DD", *asOf)
		}
	}
	if *proposal != "" {
		if ents, err := os.ReadDir(*proposal); err == nil && len(ents) > 0 {
			return fmt.Errorf("-proposal %s: not empty; a proposal of an earlier run must not be mixed with this one's", *proposal)
		}
	}
	records, texts, err := upstream.ReadDir(*src)
	if err != nil {
		return err
	}
	t, notes, err := upstream.Build(records, texts, upstream.Options{AsOf: *asOf, Commit: *commit})
	for _, n := range notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	if err != nil {
		return err
	}
	var prev *advisory.Table
	if old, err := os.ReadFile(*out); err == nil {
		var perr error
		prev, perr = advisory.Parse(*out, old)
		if perr != nil {
			prev = nil
		} else if sameAdvisories(prev, t) && prev.AgeDays(day(t.AsOf)) <= *refresh {
			fmt.Fprintf(stdout, "%s: %d advisories, unchanged; as of %s kept (%d days before %s, within -refresh=%d)\n", *out, len(t.Advisories), prev.AsOf, prev.AgeDays(day(t.AsOf)), t.AsOf, *refresh)
			return nil
		}
	}
	b, err := advisory.Encode(t)
	if err != nil {
		return err
	}
	if err := writeAtomic(*out, b); err != nil {
		return err
	}
	if *proposal != "" {
		if err := writeProposal(*proposal, b, prev, t, notes); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s: %d advisories as of %s (%d records, %d advisory texts, %d notes)\n", *out, len(t.Advisories), t.AsOf, len(records), len(texts), len(notes))
	return nil
}

// sameAdvisories compares the advisories of two tables, whatever their
// as-of dates and commits.
func sameAdvisories(a, b *advisory.Table) bool {
	x, y := *a, *b
	x.AsOf, y.AsOf, x.SourceCommit, y.SourceCommit = "", "", "", ""
	ea, err1 := advisory.Encode(&x)
	eb, err2 := advisory.Encode(&y)
	return err1 == nil && err2 == nil && string(ea) == string(eb)
}

func day(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}

// writeAtomic writes b to path through a temporary file in its directory:
// the table appears whole or not at all.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".advisories-*.json")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
