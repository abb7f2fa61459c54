package runner

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"wafbench/driver/plan"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// Budget makes Run add whole blocks (every mode once, in the design's next
// rotation) after the planned trials, until every target's paired-t
// half-width is at or below TargetPct or the next block would not fit in
// Limit. It stops on interval width only, never on a p-value: stopping when
// a test first succeeds would bias the verdicts.
type Budget struct {
	Targets   []stats.Target
	TargetPct float64
	// Limit is the wall time the trials may take from Start, planned
	// blocks included.
	Limit time.Duration
	Start time.Time
	// Plan is the planned design; Repeats grows by one per added block.
	Plan plan.Options
	Log  io.Writer // one line per decision; nil = none

	// Added counts the blocks added; Stop says why no further block was
	// added; Status is where the targets stood at that decision.
	Added  int
	Stop   string
	Status []stats.TargetStatus
}

// Stop reasons.
const (
	stopMet         = "every target met"
	stopBudget      = "budget spent"
	stopMaxRepeats  = "repeat cap reached"
	stopInterrupted = "interrupted"
)

// extend appends the next block to c.Trials when c.Budget asks for one and
// reports whether it did. recs are the records measured so far.
func (c *Config) extend(ctx context.Context, recs []result.Record) bool {
	b := c.Budget
	if b == nil {
		return false
	}
	if ctx.Err() != nil {
		b.Stop = stopInterrupted
		return false
	}
	b.Status = stats.CheckTargets(stats.Summarize(recs), b.Targets, b.TargetPct)
	if stats.AllMet(b.Status) {
		b.Stop = stopMet
		b.logf("all %d targets within ±%g%% after %d repeats", len(b.Targets), b.TargetPct, b.Plan.Repeats)
		return false
	}
	if b.Plan.Repeats >= stats.MaxRepeats {
		b.Stop = stopMaxRepeats
		return false
	}
	elapsed := time.Since(b.Start)
	block := elapsed / time.Duration(max(b.Plan.Repeats, 1))
	if elapsed+block > b.Limit {
		b.Stop = stopBudget
		b.logf("budget: %s of %s used, a block takes ~%s; %s", elapsed.Round(time.Second), b.Limit, block.Round(time.Second), b.worst())
		return false
	}
	next := b.Plan
	next.Repeats++
	all, err := plan.Build(next)
	if err != nil { // the planned design built; one more repeat cannot fail
		b.Stop = err.Error()
		return false
	}
	var added []plan.Trial
	for _, t := range all {
		if t.Repeat == next.Repeats {
			added = append(added, t)
		}
	}
	b.Plan = next
	b.Added++
	c.Trials = append(c.Trials, added...)
	c.Progress.extend(added)
	b.logf("repeat %d added (%s used of %s): %s", next.Repeats, elapsed.Round(time.Second), b.Limit, b.worst())
	return true
}

// worst names the unmet targets' widest half-width.
func (b *Budget) worst() string {
	var unmet []string
	widest := 0.0
	for _, s := range b.Status {
		if !s.Met {
			unmet = append(unmet, s.Target.String())
			widest = math.Max(widest, s.HalfWidthPct)
		}
	}
	if len(unmet) == 0 {
		return "every target met"
	}
	return fmt.Sprintf("%d of %d targets above ±%g%% (widest ±%.1f%%: %s)", len(unmet), len(b.Status), b.TargetPct, widest, strings.Join(unmet, "; "))
}

func (b *Budget) logf(format string, a ...any) {
	if b.Log != nil {
		fmt.Fprintf(b.Log, "wafbench: precision: "+format+"\n", a...)
	}
}

// extend adds trials to the progress line's plan.
func (p *Progress) extend(trials []plan.Trial) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trials += len(trials)
	for _, t := range trials {
		p.cases += len(t.Cases)
	}
}
