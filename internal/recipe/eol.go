package recipe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/osslbuild/osslbuild/internal/lifecycle"
)

// Mark is a recipe's end-of-life mark on a release: a comment line
// directly above its [[release]] that MarkLine writes. The dates are
// internal/lifecycle's; the mark only shows a reader of the recipe what a
// build will warn of.
type Mark struct{ Series, Date string }

var (
	markRe    = regexp.MustCompile(`^#[ \t]*end of life ([0-9]{4}-[0-9]{2}-[0-9]{2}): the ([0-9.]+) series`)
	asOfRe    = regexp.MustCompile(`^#.*\bas of ([0-9]{4}-[0-9]{2}-[0-9]{2})`)
	versionKV = regexp.MustCompile(`^[ \t]*version[ \t]*=[ \t]*"([^"]*)"`)
)

// MarkLine is the mark for a release of series s.
func MarkLine(s lifecycle.Series) string {
	name := s.Name + " series"
	if s.LTS {
		name += " (LTS)"
	}
	return fmt.Sprintf("# end of life %s: the %s; builds warn", s.EndOfLife, name)
}

// EndOfLifeMarks reads the marks of a recipe's text, by release version,
// and the "as of" date its comments state for them (zero if none).
func EndOfLifeMarks(data []byte) (map[string]Mark, time.Time, error) {
	marks := map[string]Mark{}
	var asOf time.Time
	var pending *Mark
	inRelease := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := bytes.TrimRight(sc.Bytes(), "\r")
		switch {
		case markRe.Match(l):
			m := markRe.FindSubmatch(l)
			pending = &Mark{Date: string(m[1]), Series: string(m[2])}
		case asOfRe.Match(l) && asOf.IsZero():
			d, err := time.Parse(time.DateOnly, string(asOfRe.FindSubmatch(l)[1]))
			if err != nil {
				return nil, asOf, fmt.Errorf("recipe end-of-life marks: %w", err)
			}
			asOf = d
		case releaseHeaderRe.Match(l):
			inRelease = true
		case inRelease && versionKV.Match(l):
			if pending != nil {
				marks[string(versionKV.FindSubmatch(l)[1])] = *pending
			}
			pending, inRelease = nil, false
		case len(bytes.TrimSpace(l)) > 0 && l[0] != '#' && !inRelease:
			if pending != nil {
				return nil, asOf, errors.New("recipe end-of-life marks: a mark is not directly above a [[release]]")
			}
		}
	}
	return marks, asOf, sc.Err()
}

var releaseHeaderRe = regexp.MustCompile(`^[ \t]*\[\[[ \t]*release[ \t]*\]\]`)
