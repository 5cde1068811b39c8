package build

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress receives compile progress.
type Progress interface {
	Start(total int)
	Step(object string)
	Finish(err error)
}

type nopProgress struct{}

func (nopProgress) Start(int)    {}
func (nopProgress) Step(string)  {}
func (nopProgress) Finish(error) {}

// NewProgress picks the reporter for w: a progress bar on a terminal, plain
// lines at most every interval elsewhere (CI logs, where carriage-return
// frames would be noise: progressbar does no terminal detection itself).
func NewProgress(w io.Writer, label string, interval time.Duration) Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barProgress{w: w, label: label}
	}
	return &LineProgress{W: w, Label: label, Interval: interval}
}

type barProgress struct {
	w     io.Writer
	label string
	bar   *progressbar.ProgressBar
}

func (b *barProgress) Start(total int) {
	b.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(b.label),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func (b *barProgress) Step(string) { _ = b.bar.Add(1) }

func (b *barProgress) Finish(err error) {
	if err == nil {
		_ = b.bar.Finish()
	} else {
		_ = b.bar.Exit()
	}
	fmt.Fprintln(b.w)
}

// LineProgress prints "[412/1350 31%] crypto/evp/foo.o" at most once per
// Interval, and a final line.
type LineProgress struct {
	W        io.Writer
	Label    string
	Interval time.Duration

	mu    sync.Mutex
	total int
	n     int
	last  time.Time
}

func (p *LineProgress) Start(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.last = total, time.Now()
	fmt.Fprintf(p.W, "%s: compiling %d objects\n", p.Label, total)
}

func (p *LineProgress) Step(obj string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if time.Since(p.last) >= p.Interval {
		p.last = time.Now()
		fmt.Fprintf(p.W, "%s: [%d/%d %d%%] %s\n", p.Label, p.n, p.total, pct(p.n, p.total), obj)
	}
}

func (p *LineProgress) Finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	state := "done"
	if err != nil {
		state = "failed"
	}
	fmt.Fprintf(p.W, "%s: [%d/%d %d%%] %s\n", p.Label, p.n, p.total, pct(p.n, p.total), state)
}

func pct(n, total int) int {
	if total == 0 {
		return 100
	}
	return n * 100 / total
}
