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
// workload, elapsed, ETA) to a terminal, refreshed every second. A nil
// *Progress prints nothing.
type Progress struct {
	w      io.Writer
	trials int
	cases  int
	left   []time.Duration // left[k]: planned time of the cases from the k-th measured on
	perTrl time.Duration   // startup estimate + trial warmup
	start  time.Time

	mu      sync.Mutex
	done    int           // cases finished
	msg     string        // what is running now
	at      time.Time     // when msg was set
	leftAt  time.Duration // planned time left when msg was set
	stop    chan struct{}
	stopped sync.WaitGroup
}

// NewProgress returns a progress printer for the planned run, or nil when w
// is nil. Call Done to end it.
func NewProgress(w io.Writer, trials []plan.Trial, cases []profile.Case, warmup, duration, trialWarmup time.Duration) *Progress {
	if w == nil {
		return nil
	}
	var each []time.Duration
	for _, t := range trials {
		for _, ci := range t.Cases {
			each = append(each, warmup+cases[ci].Window(duration))
		}
	}
	left := make([]time.Duration, len(each)+1)
	for k := len(each) - 1; k >= 0; k-- {
		left[k] = left[k+1] + each[k]
	}
	p := &Progress{w: w, trials: len(trials), cases: len(each), left: left,
		perTrl: time.Second + trialWarmup, start: time.Now(), stop: make(chan struct{})}
	p.stopped.Add(1)
	go p.tick()
	return p
}

func (p *Progress) tick() {
	defer p.stopped.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.msg != "" {
				p.print()
			}
			p.mu.Unlock()
		}
	}
}

// trial reports a trial-level step (starting, warming up).
func (p *Progress) trial(t plan.Trial, what string) {
	if p == nil {
		return
	}
	p.set(t, fmt.Sprintf("trial %d/%d  %s  %s", t.Index, p.trials, t.Mode, what))
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
	p.set(t, fmt.Sprintf("trial %d/%d  %s  %s  (%d/%d measured)", t.Index, p.trials, t.Mode, c.Key(), p.done+1, p.cases))
	if i == len(t.Cases)-1 {
		p.mu.Lock()
		p.done++
		p.mu.Unlock()
	}
}

func (p *Progress) set(t plan.Trial, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msg, p.at = msg, time.Now()
	p.leftAt = p.left[min(p.done, p.cases)] + time.Duration(p.trials-t.Index+1)*p.perTrl
	p.print()
}

// print writes the current line; p.mu is held.
func (p *Progress) print() {
	left := max(p.leftAt-time.Since(p.at), 0)
	fmt.Fprintf(p.w, "\r\033[K%s  elapsed %s  ETA %s", p.msg, time.Since(p.start).Round(time.Second), left.Round(time.Second))
}

// Done ends the status line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	close(p.stop)
	p.stopped.Wait()
	fmt.Fprintf(p.w, "\r\033[K%d of %d workloads measured in %s\n", p.done, p.cases, time.Since(p.start).Round(time.Second))
}
