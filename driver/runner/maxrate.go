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

	// steps remembers, per mode and case, the sweep step a search gave,
	// for a later repeat that sweeps first. Trials run one at a time.
	steps map[string]float64
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
func searchCase(ctx context.Context, cfg *Config, c profile.Case, p *proxy, mode string, repeat int) ([]*maxrate.Result, error) {
	mr := cfg.MaxRate
	pct := mr.Search.Objective.Percentile
	probe := func(ctx context.Context, rate float64) (maxrate.Window, error) {
		win := maxrate.WindowFor(rate, mr.MinRequests, mr.Window, mr.MaxWindow)
		opts := load.Options{Target: p.Addr, Conns: c.Conns, Warmup: cfg.Warmup, Duration: win, Rate: rate,
			Timeout: cfg.Timeout, ConnMode: c.Workload.ConnModeIn(cfg.ConnMode), Arrival: cfg.Arrival, Seed: cfg.ArrivalSeed}
		res, err := drive(ctx, cfg, opts, c, mode)
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
		if s := res.Send; s != nil && s.Own.TotalCount() > 0 {
			w.OwnP99Us = float64(s.Own.ValueAtQuantile(99))
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
	key := mode + " " + c.Key()
	search := func() (*maxrate.Result, error) {
		t0 := time.Now()
		opts := mr.Search
		var capacity float64
		if opts.Start == 0 {
			// Start at half the case's closed-loop throughput: the
			// highest open-loop rate meeting any latency objective is
			// below it, and a start far below it (100 req/s against a
			// passthrough's thousands) spends the search's time in long
			// windows at low rates. The window is part of the search's
			// wall time.
			win := maxrate.WindowFor(0, 0, mr.Window, mr.MaxWindow)
			res, err := drive(ctx, cfg, load.Options{Target: p.Addr, Conns: c.Conns, Warmup: cfg.Warmup, Duration: win,
				Timeout: cfg.Timeout, ConnMode: c.Workload.ConnModeIn(cfg.ConnMode)}, c, mode)
			if err != nil {
				return nil, fmt.Errorf("max-rate search: closed-loop capacity window: %w", err)
			}
			if res.Requests == 0 {
				return nil, fmt.Errorf("max-rate search: the closed-loop capacity window completed no valid request")
			}
			capacity = float64(res.Requests) / win.Seconds()
			opts.Start = min(capacity, opts.Limit) / 2
		}
		res, err := maxrate.Search(ctx, opts, probe)
		if res != nil {
			res.Capacity, res.WallS = capacity, time.Since(t0).Seconds()
		}
		if err != nil {
			return res, fmt.Errorf("max-rate search: %w", err)
		}
		if res.Rate > 0 {
			// A sweep as fine as the search: one step per tolerance of
			// the rate the search found.
			if mr.steps == nil {
				mr.steps = map[string]float64{}
			}
			mr.steps[key] = max(mr.Search.Tolerance*res.Rate, mr.Search.Start/64)
		}
		return res, nil
	}
	sweep := func(step float64) (*maxrate.Result, error) {
		res, err := maxrate.Sweep(ctx, mr.Search, step, probe)
		if err != nil {
			return res, fmt.Errorf("max-rate sweep: %w", err)
		}
		return res, nil
	}
	switch mr.Method {
	case MethodSearch:
		res, err := search()
		return nonNil(res), err
	case MethodSweep:
		res, err := sweep(mr.SweepStep)
		return nonNil(res), err
	}
	// Both: the search first in odd repeats, the sweep first in even ones
	// when its step is known (given, or from an earlier repeat's search),
	// so that neither method always meets the fresher Envoy; the search's
	// result stays first in the record, the rate the case is measured at.
	step := mr.SweepStep
	if step == 0 {
		step = mr.steps[key]
	}
	if repeat%2 == 0 && step > 0 {
		sw, err := sweep(step)
		if err != nil {
			return nonNil(sw), err
		}
		sw.First = true
		se, err := search()
		return append(nonNil(se), sw), err
	}
	se, err := search()
	if err != nil || se.Rate == 0 {
		return nonNil(se), err // no rate found: nothing to sweep up to
	}
	if mr.SweepStep == 0 {
		step = mr.steps[key]
	}
	sw, err := sweep(step)
	return append([]*maxrate.Result{se}, nonNil(sw)...), err
}

// nonNil is res as a list, empty when res is nil.
func nonNil(res *maxrate.Result) []*maxrate.Result {
	if res == nil {
		return nil
	}
	return []*maxrate.Result{res}
}
