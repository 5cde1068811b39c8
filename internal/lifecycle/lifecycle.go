// Package lifecycle holds OpenSSL's release series and the day upstream's
// support for each ends, as the OpenSSL project publishes them (its release
// strategy page; openssl-library.org's lifecycle, generated from the
// openssl/release-metadata repository's data.json). It is the one table of
// these dates: check names a library whose series has ended, and the
// recipe marks the releases it lists by it.
//
// Series upstream has announced but not yet released are in the table too,
// marked Announced: their dates are upstream's plans, given by month only
// ("Oct 2026", "Nov 2027"). The rule for a month-only date (MonthRule): it
// counts as the first day of that month, the earliest day the
// announcement allows, so a build or a check warns from the day after it,
// no later than the full date, once upstream gives it, would.
package lifecycle

import (
	"fmt"
	"time"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// Series is one release series and its end of life.
type Series struct {
	Name string // "3.0", "1.1.1": MAJOR.MINOR from 3.0, the letter-release series before
	// EndOfLife is the last day of upstream support, YYYY-MM-DD.
	EndOfLife string
	LTS       bool
	// Before says the version is older than every series in the table,
	// whose support ended no later than EndOfLife (that of the oldest).
	Before bool
	// Announced marks a series whose dates are upstream's announcement
	// (release-metadata's forward entries), not those of a release made:
	// Due is the month its first release is announced for (YYYY-MM).
	Announced bool
	Due       string
	// Month says upstream gave the end of life as a month only;
	// EndOfLife is then that month's first day (MonthRule).
	Month bool
}

// MonthRule is how a month-only date upstream announces becomes a day.
const MonthRule = "a month-only date counts as the first day of that month: the earliest day the announcement allows, so a warning comes no later than the full date would bring it"

// table lists every series, oldest first. A new series gets its row when
// upstream announces its date; TestRecipeSeriesKnown fails until it does.
var table = []Series{
	{Name: "0.9.8", EndOfLife: "2015-12-31"},
	{Name: "1.0.0", EndOfLife: "2015-12-31"},
	{Name: "1.0.1", EndOfLife: "2016-12-31"},
	{Name: "1.0.2", EndOfLife: "2019-12-31", LTS: true},
	{Name: "1.1.0", EndOfLife: "2019-09-11"},
	{Name: "1.1.1", EndOfLife: "2023-09-11", LTS: true},
	{Name: "3.0", EndOfLife: "2026-09-07", LTS: true},
	{Name: "3.1", EndOfLife: "2025-03-14"},
	{Name: "3.2", EndOfLife: "2025-11-23"},
	{Name: "3.3", EndOfLife: "2026-04-09"},
	{Name: "3.4", EndOfLife: "2026-10-22"},
	{Name: "3.5", EndOfLife: "2030-04-08", LTS: true},
	{Name: "3.6", EndOfLife: "2026-11-01"},
	{Name: "4.0", EndOfLife: "2027-05-14"},
	// Announced by month in openssl/release-metadata (data.json, commit
	// 05408e9, "Add forward release metadata"): release, end of life.
	{Name: "4.1", EndOfLife: "2027-11-01", Month: true, Announced: true, Due: "2026-10"},            // Oct 2026, Nov 2027
	{Name: "4.2", EndOfLife: "2032-04-01", LTS: true, Month: true, Announced: true, Due: "2027-04"}, // Apr 2027, Apr 2032
	{Name: "5.0", EndOfLife: "2028-11-01", Month: true, Announced: true, Due: "2027-10"},            // Oct 2027, Nov 2028
}

// Of returns the series of an OpenSSL version number. ok is false for a
// series newer than the table knows (its date is not published yet) and
// for a string that is no version number. A version older than every
// series in the table belongs to one long out of support: it is returned
// with Before set.
func Of(version string) (s Series, ok bool) {
	v, err := osslver.Parse(version)
	if err != nil {
		return Series{}, false
	}
	return Named(v.Series())
}

// Named is the series called name ("3.0", "1.1.1"), as Of returns it.
func Named(name string) (s Series, ok bool) {
	for _, row := range table {
		if row.Name == name {
			return row, true
		}
	}
	if first, err := start(name); err == nil && osslver.Less(first, mustStart(table[0].Name)) {
		return Series{Name: name, EndOfLife: table[0].EndOfLife, Before: true}, true
	}
	return Series{}, false
}

// start is a series' first release: "3.0.0" for "3.0", "1.1.1" for
// "1.1.1"; an error for a name no series has.
func start(name string) (osslver.Version, error) {
	v, err := osslver.Parse(name + ".0")
	if err != nil || v.Series() != name {
		if v, err = osslver.Parse(name); err != nil || v.Series() != name {
			return osslver.Version{}, fmt.Errorf("OpenSSL series %q: expected MAJOR.MINOR from 3.0, MAJOR.MINOR.PATCH before", name)
		}
	}
	return v, nil
}

func mustStart(name string) osslver.Version {
	v, err := start(name)
	if err != nil {
		panic(err)
	}
	return v
}

// Ended reports whether the series' support ended before the day of now
// (in UTC): on its EndOfLife date it is still supported.
func (s Series) Ended(now time.Time) bool {
	end, err := time.Parse(time.DateOnly, s.EndOfLife)
	if err != nil {
		return false
	}
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).After(end)
}

// EndedOn says when support ended, for a series that has: "the 3.0
// series (LTS) reached its end of life on 2026-09-07"; for a month-only
// date, the month and the day MonthRule makes of it.
func (s Series) EndedOn() string {
	name := "the " + s.Name + " series"
	if s.LTS {
		name += " (LTS)"
	}
	switch {
	case s.Before:
		return name + " reached its end of life no later than " + s.EndOfLife
	case s.Month:
		month := s.EndOfLife
		if t, err := time.Parse(time.DateOnly, s.EndOfLife); err == nil {
			month = t.Format("January 2006")
		}
		return fmt.Sprintf("%s reached its end of life in %s (upstream announced the month only: osslbuild takes its first day, %s, as the last day of support)", name, month, s.EndOfLife)
	}
	return name + " reached its end of life on " + s.EndOfLife
}

// Warning is what a build or a check says of a release whose series has
// ended by now: "OpenSSL 3.0.22: the 3.0 series (LTS) reached its end of
// life on 2026-09-07; upstream no longer fixes its vulnerabilities". ok is
// false for a supported series or one the table does not know.
func Warning(version string, now time.Time) (msg string, ok bool) {
	s, known := Of(version)
	if !known || !s.Ended(now) {
		return "", false
	}
	return fmt.Sprintf("OpenSSL %s: %s; upstream no longer fixes its vulnerabilities", version, s.EndedOn()), true
}
