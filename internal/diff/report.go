package diff

// The log verify:rebuild and verify:reproducible print, gorebuild's
// Report -> File model: one line per file, PASS, FAIL or SKIP, each FAIL
// explained by the comparer, then the caller's verdict.

import (
	"fmt"
	"io"
	"strings"
)

// Line is one line of a report: a file and its verdict.
type Line struct {
	Status string // PASS, FAIL or SKIP
	File   string
	Detail string
}

func (l Line) String() string {
	if l.Detail == "" {
		return l.Status + " " + l.File
	}
	return l.Status + " " + l.File + ": " + l.Detail
}

// Log prints each line as it is added and keeps them for the verdict.
type Log struct {
	W     io.Writer
	Lines []Line
	// Sides renames the comparer's "the first build" and "the second
	// build" in FAIL lines (nil: they stay).
	Sides *strings.Replacer
}

// Add prints l and keeps it.
func (r *Log) Add(l Line) {
	r.Lines = append(r.Lines, l)
	fmt.Fprintln(r.W, l)
}

// File adds file's line: PASS without differences, else FAIL with the
// first maxFailDetail of them.
func (r *Log) File(file string, diffs []Difference) {
	if len(diffs) == 0 {
		r.Add(Line{Status: "PASS", File: file})
		return
	}
	var parts []string
	for i, d := range diffs {
		if i == maxFailDetail {
			parts = append(parts, fmt.Sprintf("and %d more", len(diffs)-i))
			break
		}
		switch {
		case d.Member != "" && d.Offset >= 0:
			parts = append(parts, fmt.Sprintf("member %s differs at byte %d of the member: %s", d.Member, d.Offset, d.Detail))
		case d.Member != "":
			parts = append(parts, "member "+d.Member+": "+d.Detail)
		default:
			parts = append(parts, d.Detail)
		}
	}
	detail := strings.Join(parts, "; ")
	if r.Sides != nil {
		detail = r.Sides.Replace(detail)
	}
	r.Add(Line{Status: "FAIL", File: file, Detail: detail})
}

// maxFailDetail bounds a FAIL line: the first differences are the ones to read.
const maxFailDetail = 5

// Files adds one line per file of files, with its differences in diffs.
func (r *Log) Files(files []string, diffs []Difference) {
	byFile := map[string][]Difference{}
	for _, d := range diffs {
		byFile[d.Path] = append(byFile[d.Path], d)
	}
	for _, n := range files {
		r.File(n, byFile[n])
	}
}

// Count is how many lines passed and failed.
func (r *Log) Count() (passed, failed int) {
	for _, l := range r.Lines {
		switch l.Status {
		case "FAIL":
			failed++
		case "PASS":
			passed++
		}
	}
	return passed, failed
}
