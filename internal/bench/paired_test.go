package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// fake is a harness whose slice medians come from ms(op, slice number on
// the shared clock, calls); it records the order it was asked in.
type fake struct {
	name  string
	clock *int
	log   *[]string
	ms    func(now, calls int) float64
}

func (f fake) Slice(op string, calls int) (float64, error) {
	*f.log = append(*f.log, fmt.Sprintf("%s%d", f.name, calls))
	*f.clock++
	return f.ms(*f.clock, calls), nil
}

func pair(a, b func(now, calls int) float64) (fake, fake, *[]string) {
	var clock int
	var log []string
	return fake{"a", &clock, &log, a}, fake{"b", &clock, &log, b}, &log
}

func opts(min, max int) Options {
	o := Options{SliceMS: 20, MinPairs: min, MaxPairs: max}
	o.defaults()
	return o
}

// TestMeasureAlternates: a calibration slice of one cycle, a warm-up slice
// on each side, then pairs alternating A B, B A, every slice whole cycles
// (about SliceMS: 20 ms at 0.1 ms a call is 200 calls, 6 cycles).
func TestMeasureAlternates(t *testing.T) {
	a, b, log := pair(func(int, int) float64 { return 0.1 }, func(int, int) float64 { return 0.2 })
	p, err := measure(context.Background(), a, b, "op", opts(5, 5))
	if err != nil {
		t.Fatal(err)
	}
	want := "a32 a192 b192 a192 b192 b192 a192 a192 b192 b192 a192 a192 b192"
	if got := strings.Join(*log, " "); got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	if p.Calls != 192 || p.Ratio != 2 || p.Lo != 2 || p.Hi != 2 || !p.Narrow || len(p.Ratios) != 5 {
		t.Errorf("%+v", p)
	}
	// A slow operation still gets one whole cycle.
	a, b, log = pair(func(int, int) float64 { return 5 }, func(int, int) float64 { return 5 })
	if p, err := measure(context.Background(), a, b, "op", opts(5, 5)); err != nil || p.Calls != harnessCycle {
		t.Errorf("slow operation: %d calls per slice (%v), want %d", p.Calls, err, harnessCycle)
	}
}

// TestMeasureLoadCancels: identical code (same true time) under a load
// that jumps between 1x and 1.8x every few slices. Timed in separate runs
// the two sides would differ by up to 1.8x; pair by pair the median ratio
// is 1 and its interval narrow, with the pairs that straddle a jump as the
// outliers the median ignores.
func TestMeasureLoadCancels(t *testing.T) {
	load := func(now int) float64 { return 1 + 0.8*float64((now/7)%2) }
	same := func(now, calls int) float64 { return 0.1 * load(now) }
	a, b, _ := pair(same, same)
	p, err := measure(context.Background(), a, b, "op", opts(15, 400))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Narrow || p.Ratio != 1 || p.Lo < 0.97 || p.Hi > 1.03 {
		t.Errorf("ratio %.3f (%.3f-%.3f), narrow %v after %d pairs", p.Ratio, p.Lo, p.Hi, p.Narrow, len(p.Ratios))
	}
	if lo, hi := minMax(p.Ratios); lo > 0.6 || hi < 1.7 {
		t.Errorf("single pairs span %.2f-%.2f: the load jumps did not reach them, so the test shows nothing", lo, hi)
	}
}

// TestMeasureTooNoisy: pair ratios scattered from 0.5x to 2x never give a
// narrow interval; sampling stops at MaxPairs and says why.
func TestMeasureTooNoisy(t *testing.T) {
	seed := uint32(1)
	noise := func(now, calls int) float64 {
		seed = seed*1664525 + 1013904223
		return 0.1 * math.Pow(2, float64(seed>>8)/float64(1<<24)*2-1)
	}
	a, b, _ := pair(func(int, int) float64 { return 0.1 }, noise)
	p, err := measure(context.Background(), a, b, "op", opts(15, 40))
	if err != nil {
		t.Fatal(err)
	}
	if p.Narrow || len(p.Ratios) != 40 || !strings.Contains(p.Stopped, "too noisy to conclude") {
		t.Errorf("narrow %v after %d pairs: %s", p.Narrow, len(p.Ratios), p.Stopped)
	}
}

func TestMedianCI(t *testing.T) {
	seq := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i + 1) // s[i] is the (i+1)th order statistic
		}
		return s
	}
	for _, tt := range []struct {
		n      int
		lo, hi float64
	}{{1, 1, 1}, {5, 1, 5}, {6, 1, 6}, {10, 2, 9}, {100, 40, 61}} {
		lo, hi := medianCI(seq(tt.n))
		if lo != tt.lo || hi != tt.hi {
			t.Errorf("n=%d: interval x(%v)-x(%v), want x(%v)-x(%v)", tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}
