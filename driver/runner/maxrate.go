package runner

import (
	"context"
	"fmt"
	"time"

	"wafbench/driver/load"
	"wafbench/driver/maxrate"
	"wafbench/driver/profile"
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
	Method      string  // "search", "sweep" or "both" (sweep after search, same trial)
	SweepStep   float64 // req/s between sweep rates; 0 with MethodBoth: the search's resolution (tolerance × its rate)
}

// Max-rate methods.
const (
	MethodSearch = "search"
	MethodSweep  = "sweep"
	MethodBoth   = "both"
)

// searchCase runs the max-rate search (and/or sweep) of case c against
// proxy p. The first result's rate is the one the case is measured at.
func searchCase(ctx context.Context, cfg *Config, c profile.Case, p *proxy, mode string) ([]*maxrate.Result, error) {
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
		for _, n := range res.Errors {
			w.Errors += n
		}
		if res.Requests == 0 {
			w.Errors++ // a window with no valid response cannot pass
		}
		return w, nil
	}
	var out []*maxrate.Result
	if mr.Method != MethodSweep {
		res, err := maxrate.Search(ctx, mr.Search, probe)
		if res != nil {
			out = append(out, res)
		}
		if err != nil {
			return out, fmt.Errorf("max-rate search: %w", err)
		}
	}
	if mr.Method != MethodSearch {
		step := mr.SweepStep
		if step == 0 && (len(out) == 0 || out[0].Rate == 0) {
			return out, nil // the search found no rate: nothing to sweep up to
		}
		if step == 0 {
			// A sweep as fine as the search: one step per tolerance of
			// the rate the search found.
			step = max(mr.Search.Tolerance*out[0].Rate, mr.Search.Start/64)
		}
		res, err := maxrate.Sweep(ctx, mr.Search.Objective, step, step, mr.Search.Limit, mr.Search.Votes, probe)
		if res != nil {
			out = append(out, res)
		}
		if err != nil {
			return out, fmt.Errorf("max-rate sweep: %w", err)
		}
	}
	return out, nil
}
