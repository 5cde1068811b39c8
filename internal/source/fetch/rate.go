package fetch

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// rateGuard cuts off a transfer that receives fewer than min bytes per
// second over a window: a trickle of a byte now and then never trips the
// idle timeout, yet would take years to deliver a tarball. It checks when
// each window ends, from a timer, so a read blocked in between is cut off
// on time too.
type rateGuard struct {
	min    int64 // bytes per second
	window time.Duration
	cancel context.CancelCauseFunc
	n      atomic.Int64 // bytes read so far

	mu   sync.Mutex
	t    *time.Timer
	last int64 // n at the start of the current window
	done bool
}

// watchRate starts a guard that calls cancel with a *tooSlow cause when a
// window passes with too few bytes read through its rateReader.
func watchRate(min int64, window time.Duration, cancel context.CancelCauseFunc) *rateGuard {
	g := &rateGuard{min: min, window: window, cancel: cancel}
	g.mu.Lock()
	g.t = time.AfterFunc(window, g.check)
	g.mu.Unlock()
	return g
}

func (g *rateGuard) check() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return
	}
	n := g.n.Load()
	got, need := n-g.last, int64(float64(g.min)*g.window.Seconds())
	if got < need {
		g.done = true
		g.cancel(&tooSlow{got: got, window: g.window, min: g.min})
		return
	}
	g.last = n
	g.t.Reset(g.window)
}

// stop ends the watch: the body is complete or abandoned.
func (g *rateGuard) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	g.t.Stop()
}

// rateReader counts the bytes read for its guard, and stops the guard at the
// end of the body, so a file received whole is never cut off afterwards.
type rateReader struct {
	r io.Reader
	g *rateGuard
}

func (r *rateReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.g.n.Add(int64(n))
	if err == io.EOF {
		r.g.stop()
	}
	return n, err
}
