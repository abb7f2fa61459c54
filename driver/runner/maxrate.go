package runner

import (
	"context"
	"fmt"
	"time"

	"wafbench/driver/load"
	"wafbench/driver/maxrate"
	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// MaxRate configures run --max-rate-at: instead of one window at a given
// rate, each case searches the highest open-loop rate meeting Objective
// (driver/maxrate), then measures its usual window at the rate found.
type MaxRate struct {
	Search maxrate.Options
	Window time.Duration // shortest measured window of a probe
	// MinRequests stretches a probe's window to hold this many arrivals at
	// its rate, up to MaxWindow (maxrate.WindowFor): a percentile objective
	// judged over a few dozen requests is decided by the slowest one.
	MinRequests int64
	MaxWindow   time.Duration
	Method      string  // "search", "sweep" or "both" (both in one trial, the order alternating by repeat)
	SweepStep   float64 // req/s between sweep rates; 0 with MethodBoth: the search's resolution (tolerance × its rate)
}

// Max-rate methods.
const (
	MethodSearch = "search"
	MethodSweep  = "sweep"
	MethodBoth   = "both"
)

// searchCase runs the max-rate search (and/or sweep) of case c against
// proxy p in the given repeat. The first result is the search's when it
// ran, the rate the case is measured at.
func searchCase(ctx context.Context, cfg *runner, c profile.Case, p *proxy, mode string, repeat int) ([]*maxrate.Result, error) {
	s := &caseSearch{ctx: ctx, cfg: cfg, mr: cfg.MaxRate, c: c, p: p, mode: mode, key: mode + " " + c.Key()}
	mr := s.mr
	switch mr.Method {
	case MethodSearch:
		res, err := s.search()
		return nonNil(res), err
	case MethodSweep:
		res, err := s.sweep(mr.SweepStep)
		return nonNil(res), err
	}
	// Both: the search first in odd repeats, the sweep first in even ones
	// when its step is known (given, or from an earlier repeat's search),
	// so that neither method always meets the fresher Envoy; the search's
	// result stays first in the record, the rate the case is measured at.
	step := mr.SweepStep
	if step == 0 {
		step = s.cfg.steps[s.key]
	}
	if repeat%2 == 0 && step > 0 {
		sw, err := s.sweep(step)
		if err != nil {
			return nonNil(sw), err
		}
		sw.First = true
		se, err := s.search()
		return append(nonNil(se), sw), err
	}
	se, err := s.search()
	if err != nil || se.Rate == 0 {
		return nonNil(se), err // no rate found: nothing to sweep up to
	}
	if mr.SweepStep == 0 {
		step = s.cfg.steps[s.key]
	}
	sw, err := s.sweep(step)
	return append([]*maxrate.Result{se}, nonNil(sw)...), err
}

// caseSearch is the max-rate search of one case against one proxy.
type caseSearch struct {
	ctx  context.Context
	cfg  *runner
	mr   *MaxRate
	c    profile.Case
	p    *proxy
	mode string
	key  string // mode and case: the key of the run's steps
}

// probe measures one open-loop window at rate for the search to judge.
func (s *caseSearch) probe(ctx context.Context, rate float64) (maxrate.Window, error) {
	cfg, mr, c := s.cfg, s.mr, s.c
	pct := mr.Search.Objective.Percentile
	win := maxrate.WindowFor(rate, mr.MinRequests, mr.Window, mr.MaxWindow)
	opts := load.Options{Target: s.p.Addr, Conns: c.Conns, Warmup: cfg.Warmup, Duration: win, Rate: rate,
		Timeout: cfg.Timeout, ConnMode: c.Workload.ConnModeIn(cfg.ConnMode), Arrival: cfg.Arrival, Seed: cfg.ArrivalSeed}
	res, err := drive(ctx, cfg, opts, c, s.mode)
	if err != nil {
		return maxrate.Window{}, err
	}
	// Held its rate: responses ≥ result.BehindRatio of the arrivals
	// its schedule made due in the window, less one (res.HeldRate) —
	// the schedule's own count, not rate × window, which a Poisson
	// window's count misses by √(rate × window) either way: a
	// search at a fixed seed then failed whichever rates drew a short
	// count, in every confirmation repeat. Late sends are not judged
	// apart: open-loop latency runs from the intended send, so
	// lateness is in the objective.
	w := maxrate.Window{Rate: rate, Achieved: res.RateAchieved, LatencyUs: res.Percentile(pct), Due: res.Due,
		Requests: res.Requests, WindowS: win.Seconds(), Behind: !res.HeldRate()}
	// Client-bound: the client's own send delay p99 is more than
	// result.ClientBoundShare of the latency p99. Such a window, if it
	// fails, is no failure of the proxy (maxrate.judge).
	if sd := res.Send; sd != nil && sd.Own.TotalCount() > 0 {
		w.OwnP99Us = float64(sd.Own.ValueAtQuantile(99))
		w.ClientBound = result.IsClientBound(w.OwnP99Us, res.Percentile(99))
	}
	for _, n := range res.Errors {
		w.Errors += n
	}
	if res.Requests == 0 {
		w.Errors++ // a window with no valid response cannot pass
	}
	return w, nil
}

// search runs the bisection search, from the closed-loop capacity when no
// start rate was given, and remembers the sweep step it implies.
func (s *caseSearch) search() (*maxrate.Result, error) {
	t0 := time.Now()
	mr := s.mr
	opts := mr.Search
	var capacity float64
	if opts.Start == 0 {
		var err error
		if capacity, err = s.capacity(); err != nil {
			return nil, err
		}
		opts.Start = min(capacity, opts.Limit) / 2
	}
	res, err := maxrate.Search(s.ctx, opts, s.probe)
	if res != nil {
		res.Capacity, res.WallS = capacity, time.Since(t0).Seconds()
	}
	if err != nil {
		return res, fmt.Errorf("max-rate search: %w", err)
	}
	if res.Rate > 0 {
		// A sweep as fine as the search: one step per tolerance of
		// the rate the search found.
		if s.cfg.steps == nil {
			s.cfg.steps = map[string]float64{}
		}
		s.cfg.steps[s.key] = max(mr.Search.Tolerance*res.Rate, mr.Search.Start/64)
	}
	return res, nil
}

// capacity is the case's closed-loop throughput over one window, in req/s.
// The search starts at half of it: the highest open-loop rate meeting any
// latency objective is below it, and a start far below it (100 req/s
// against a passthrough's thousands) spends the search's time in long
// windows at low rates. The window is part of the search's wall time.
func (s *caseSearch) capacity() (float64, error) {
	cfg, c := s.cfg, s.c
	win := maxrate.WindowFor(0, 0, s.mr.Window, s.mr.MaxWindow)
	res, err := drive(s.ctx, cfg, load.Options{Target: s.p.Addr, Conns: c.Conns, Warmup: cfg.Warmup, Duration: win,
		Timeout: cfg.Timeout, ConnMode: c.Workload.ConnModeIn(cfg.ConnMode)}, c, s.mode)
	if err != nil {
		return 0, fmt.Errorf("max-rate search: closed-loop capacity window: %w", err)
	}
	if res.Requests == 0 {
		return 0, fmt.Errorf("max-rate search: the closed-loop capacity window completed no valid request")
	}
	return float64(res.Requests) / win.Seconds(), nil
}

// sweep probes step, 2·step, … as maxrate.Sweep does.
func (s *caseSearch) sweep(step float64) (*maxrate.Result, error) {
	res, err := maxrate.Sweep(s.ctx, s.mr.Search, step, s.probe)
	if err != nil {
		return res, fmt.Errorf("max-rate sweep: %w", err)
	}
	return res, nil
}

// nonNil is res as a list, empty when res is nil.
func nonNil(res *maxrate.Result) []*maxrate.Result {
	if res == nil {
		return nil
	}
	return []*maxrate.Result{res}
}
