package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

func TestTableInOrder(t *testing.T) {
	for i, s := range table {
		if _, err := time.Parse(time.DateOnly, s.EndOfLife); err != nil {
			t.Errorf("%s: end of life %q: %v", s.Name, s.EndOfLife, err)
		}
		if i > 0 && !osslver.Less(mustStart(table[i-1].Name), mustStart(s.Name)) {
			t.Errorf("%s listed after %s: expected oldest first", s.Name, table[i-1].Name)
		}
	}
}

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		version, series, eol string
		ok, before           bool
	}{
		{"4.0.2", "4.0", "2027-05-14", true, false},
		{"3.0.5+quic", "3.0", "2026-09-07", true, false},
		{"3.6.0-alpha1", "3.6", "2026-11-01", true, false},
		{"1.1.1w", "1.1.1", "2023-09-11", true, false},
		{"1.0.2u", "1.0.2", "2019-12-31", true, false},
		{"0.9.7m", "0.9.7", "2015-12-31", true, true},
		{"4.1.0", "4.1", "2027-11-01", true, false}, // announced: the month rule's day
		{"4.2.0", "4.2", "2032-04-01", true, false},
		{"5.0.0", "5.0", "2028-11-01", true, false},
		{"5.1.0", "", "", false, false},  // newer than the table: not known yet
		{"10.0.0", "", "", false, false}, // numerically, not as text
		{"BoringSSL", "", "", false, false},
		{"", "", "", false, false},
	} {
		s, ok := Of(tc.version)
		if ok != tc.ok || s.Name != tc.series || s.EndOfLife != tc.eol || s.Before != tc.before {
			t.Errorf("Of(%q) = %+v, %v; want %s %s before=%v, %v", tc.version, s, ok, tc.series, tc.eol, tc.before, tc.ok)
		}
	}
}

func TestEnded(t *testing.T) {
	s, _ := Of("3.0.19")
	for _, tc := range []struct {
		now   string
		ended bool
	}{
		{"2026-09-06T23:59:59Z", false},
		{"2026-09-07T23:59:59Z", false}, // the last day is supported
		{"2026-09-08T00:00:00Z", true},
		{"2026-09-07T23:30:00-02:00", true}, // 2026-09-08 01:30 UTC
	} {
		now, err := time.Parse(time.RFC3339, tc.now)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Ended(now); got != tc.ended {
			t.Errorf("3.0 ended at %s = %v, want %v", tc.now, got, tc.ended)
		}
	}
	if got := s.EndedOn(); got != "the 3.0 series (LTS) reached its end of life on 2026-09-07" {
		t.Errorf("EndedOn = %q", got)
	}
	if s, _ := Of("0.9.7m"); s.EndedOn() != "the 0.9.7 series reached its end of life no later than 2015-12-31" {
		t.Errorf("EndedOn = %q", s.EndedOn())
	}
}

// TestAnnounced: the series upstream announced by month (4.1, 4.2 LTS,
// 5.0, release-metadata's forward entries) are in the table, marked
// announced, with the month rule applied to their end of life: the first
// day of the month is the last one supported.
func TestAnnounced(t *testing.T) {
	for _, tc := range []struct {
		name, due, eol string
		lts            bool
	}{
		{"4.1", "2026-10", "2027-11-01", false},
		{"4.2", "2027-04", "2032-04-01", true},
		{"5.0", "2027-10", "2028-11-01", false},
	} {
		s, ok := Of(tc.name + ".0")
		if !ok || !s.Announced || !s.Month || s.Due != tc.due || s.EndOfLife != tc.eol || s.LTS != tc.lts {
			t.Errorf("%s: %+v, %v; want announced, due %s, month-only end %s, LTS %v", tc.name, s, ok, tc.due, tc.eol, tc.lts)
		}
	}
	for _, s := range table {
		if _, err := time.Parse("2006-01", s.Due); (s.Due != "" || s.Announced) && err != nil {
			t.Errorf("%s: due %q: want YYYY-MM for an announced series: %v", s.Name, s.Due, err)
		}
		if s.Month && !strings.HasSuffix(s.EndOfLife, "-01") {
			t.Errorf("%s: month-only end of life %s: the rule makes it the month's first day", s.Name, s.EndOfLife)
		}
	}
	s, _ := Of("4.1.3")
	for now, ended := range map[string]bool{"2027-10-31T12:00:00Z": false, "2027-11-01T23:59:59Z": false, "2027-11-02T00:00:00Z": true} {
		at, _ := time.Parse(time.RFC3339, now)
		if s.Ended(at) != ended {
			t.Errorf("4.1 ended at %s = %v, want %v", now, !ended, ended)
		}
	}
	at, _ := time.Parse(time.DateOnly, "2027-12-01")
	msg, ok := Warning("4.1.3", at)
	if want := "OpenSSL 4.1.3: the 4.1 series reached its end of life in November 2027 (upstream announced the month only: osslbuild takes its first day, 2027-11-01, as the last day of support); upstream no longer fixes its vulnerabilities"; !ok || msg != want {
		t.Errorf("Warning = %q, %v\nwant %q", msg, ok, want)
	}
	if !strings.Contains(MonthRule, "first day of that month") {
		t.Errorf("MonthRule %q", MonthRule)
	}
}

func TestNamed(t *testing.T) {
	for name, want := range map[string]struct{ ok, before bool }{
		"3.0": {true, false}, "1.1.1": {true, false}, "0.9.8": {true, false}, "0.9.6": {true, true},
		"3": {false, false}, "3.0.0": {false, false}, "1.1": {false, false}, "9.9": {false, false},
	} {
		s, ok := Named(name)
		if ok != want.ok || s.Before != want.before || (ok && s.Name != name) {
			t.Errorf("Named(%q) = %+v, %v; want ok %v before %v", name, s, ok, want.ok, want.before)
		}
	}
}
