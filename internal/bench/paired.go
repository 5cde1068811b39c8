package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// A shared machine's load moves from one moment to the next: two builds
// timed in separate runs seconds apart (the first version of this
// benchmark) differed by 1.7x between rounds, and identical assembly was
// reported as 0.6x. So the two builds are measured side by side: both
// harnesses stay up (Server), each operation alternates short slices
// between them (A B, then B A, so a trend in the load cancels), every pair
// gives a ratio, and the result is the median ratio with a 95% confidence
// interval, sampled until that interval is narrow or the pair budget is
// spent, in which case the machine was too noisy to conclude. A slice is
// timed in the harness thread's CPU time: in wall time, the pyca way's
// longer calls were preempted more often than osslbuild's on a busy
// machine, which moved ML-DSA-65 sign between 7x and 9x from run to run;
// in CPU time it measured 5.1x with quartiles 5.0-5.4.

// harnessCycle is osslbench.c's SERVE_CYCLE: call j of a slice does the
// work of index j mod harnessCycle (ML-DSA signs that message), so slices
// of whole cycles do the same mix of work in every run and on every
// machine.
const harnessCycle = 32

// slicer runs one slice of calls calls of op and returns its CPU time per
// call, in ms.
type slicer interface {
	Slice(op string, calls int) (float64, error)
}

// Paired is one operation measured pair by pair.
type Paired struct {
	Calls   int       // calls per slice, the same on both sides: whole cycles of harnessCycle
	A, B    []float64 // slice times (CPU ms per call) of osslbuild and the pyca way, pair by pair
	Ratios  []float64 // B[i] / A[i]
	Ratio   float64   // median of Ratios
	Lo, Hi  float64   // distribution-free 95% confidence interval of that median
	Narrow  bool      // the interval lies within ±Tolerance of Ratio
	Spread  float64   // (Hi - Lo) / 2 / Ratio: the interval's half-width, relative
	Q1, Q3  float64   // quartiles of Ratios: how much single pairs scatter
	Stopped string    // why sampling stopped
}

// measure alternates slices of op between a (osslbuild) and b (the pyca
// way) until the median ratio's interval is within ±o.Tolerance of it
// (checked every 5 pairs from o.MinPairs on) or o.MaxPairs pairs are in.
func measure(ctx context.Context, a, b slicer, op string, o Options) (*Paired, error) {
	// Calibrate: how many calls make a slice of about o.SliceMS here, in
	// whole cycles.
	t, err := a.Slice(op, harnessCycle)
	if err != nil {
		return nil, err
	}
	cycles := 1.0
	if t > 0 {
		cycles = math.Min(math.Max(math.Round(o.SliceMS/t/harnessCycle), 1), 1e4)
	}
	p := &Paired{Calls: int(cycles) * harnessCycle}
	// One untimed slice each: caches, branch predictors, page faults.
	for _, s := range []slicer{a, b} {
		if _, err := s.Slice(op, p.Calls); err != nil {
			return nil, err
		}
	}
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// a's and b's slice times: A B, then B A (a trend in the load
		// cancels).
		var t [2]float64
		for _, j := range [][]int{{0, 1}, {1, 0}}[i%2] {
			if t[j], err = []slicer{a, b}[j].Slice(op, p.Calls); err != nil {
				return nil, err
			}
		}
		x, y := t[0], t[1]
		p.A, p.B = append(p.A, x), append(p.B, y)
		if x > 0 {
			p.Ratios = append(p.Ratios, y/x)
		}
		n := i + 1
		if n >= o.MinPairs && n%5 == 0 {
			p.stats(o.Tolerance)
			if p.Narrow {
				p.Stopped = fmt.Sprintf("the interval was within ±%.0f%% after %d pairs", 100*o.Tolerance, n)
				return p, nil
			}
		}
		if n >= o.MaxPairs {
			p.stats(o.Tolerance)
			p.Stopped = fmt.Sprintf("%d pairs (the most allowed) left the interval at ±%.1f%%, wider than ±%.0f%%: too noisy to conclude", n, 100*p.Spread, 100*o.Tolerance)
			return p, nil
		}
	}
}

// stats computes the median ratio, its interval and the quartiles.
func (p *Paired) stats(tolerance float64) {
	if len(p.Ratios) == 0 {
		return
	}
	s := slices.Clone(p.Ratios)
	slices.Sort(s)
	p.Ratio = Median(s)
	p.Lo, p.Hi = medianCI(s)
	p.Q1, p.Q3 = Median(s[:len(s)/2]), Median(s[(len(s)+1)/2:])
	if len(s) < 2 {
		p.Q1, p.Q3 = s[0], s[0]
	}
	p.Spread = (p.Hi - p.Lo) / 2 / p.Ratio
	p.Narrow = p.Ratio > 0 && p.Lo >= p.Ratio*(1-tolerance) && p.Hi <= p.Ratio*(1+tolerance)
}

// medianCI is the distribution-free 95% confidence interval of the median
// of sorted: order statistics j and n+1-j, with j the largest rank for
// which P(Binomial(n, 1/2) < j) <= 2.5%. Below 6 values there is none
// narrower than the whole range.
func medianCI(sorted []float64) (lo, hi float64) {
	n := len(sorted)
	if n == 0 {
		return 0, 0
	}
	j := 0
	p := math.Pow(0.5, float64(n)) // P(X = 0)
	cdf := 0.0
	for x := 0; x < n; x++ {
		cdf += p
		if cdf > 0.025 {
			break
		}
		j = x + 1
		p = p * float64(n-x) / float64(x+1)
	}
	if j == 0 {
		return sorted[0], sorted[n-1]
	}
	return sorted[j-1], sorted[n-j]
}
