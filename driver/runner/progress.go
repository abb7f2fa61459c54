package runner

import (
	"fmt"
	"io"
	"sync"
	"time"

	"wafbench/driver/plan"
	"wafbench/driver/profile"
)

// Progress prints one self-overwriting status line (trial i/N, mode,
// workload, ETA) to a terminal. A nil *Progress prints nothing.
type Progress struct {
	w       io.Writer
	trials  int
	cases   int
	perCase time.Duration // warmup + duration
	perTrl  time.Duration // startup estimate + trial warmup
	start   time.Time
	done    int
	mu      sync.Mutex
}

// NewProgress returns a progress printer for the planned run, or nil when w
// is nil.
func NewProgress(w io.Writer, trials []plan.Trial, warmup, duration, trialWarmup time.Duration) *Progress {
	if w == nil {
		return nil
	}
	n := 0
	for _, t := range trials {
		n += len(t.Cases)
	}
	return &Progress{w: w, trials: len(trials), cases: n, perCase: warmup + duration,
		perTrl: time.Second + trialWarmup, start: time.Now()}
}

// Trial reports a trial-level step (starting, warming up).
func (p *Progress) Trial(t plan.Trial, what string) {
	if p == nil {
		return
	}
	p.print(fmt.Sprintf("trial %d/%d  %s  %s", t.Index, p.trials, t.Mode, what), t)
}

// Case reports the start of the i-th case of trial t.
func (p *Progress) Case(t plan.Trial, c profile.Case, i int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if i > 0 {
		p.done++
	}
	p.mu.Unlock()
	p.print(fmt.Sprintf("trial %d/%d  %s  %s  (%d/%d measured)", t.Index, p.trials, t.Mode, c.Key(), p.done+1, p.cases), t)
	if i == len(t.Cases)-1 {
		p.mu.Lock()
		p.done++
		p.mu.Unlock()
	}
}

func (p *Progress) print(s string, t plan.Trial) {
	p.mu.Lock()
	defer p.mu.Unlock()
	left := time.Duration(p.cases-p.done)*p.perCase + time.Duration(p.trials-t.Index+1)*p.perTrl
	fmt.Fprintf(p.w, "\r\033[K%s  elapsed %s  ETA %s", s, time.Since(p.start).Round(time.Second), left.Round(time.Second))
}

// Done ends the status line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	fmt.Fprintf(p.w, "\r\033[Kdone in %s\n", time.Since(p.start).Round(time.Second))
}
