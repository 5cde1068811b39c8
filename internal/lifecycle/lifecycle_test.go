package lifecycle

import (
	"testing"
	"time"
)

func TestTableInOrder(t *testing.T) {
	for i, s := range table {
		if _, err := time.Parse(time.DateOnly, s.EndOfLife); err != nil {
			t.Errorf("%s: end of life %q: %v", s.Name, s.EndOfLife, err)
		}
		if i > 0 && !older(table[i-1].Name, s.Name) {
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
		{"4.1.0", "", "", false, false},  // newer than the table: not known yet
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
