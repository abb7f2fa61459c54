package main

import (
	"flag"
	"time"

	"wafbench/driver/maxrate"
	"wafbench/driver/runner"
)

// maxRateFlags are run's --max-rate-* flags.
type maxRateFlags struct {
	at, method        string
	start, limit, tol float64
	step              float64
	confirm           int
	window            time.Duration
}

func (f *maxRateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.at, "max-rate-at", "", "search each case's highest open-loop rate meeting this latency objective, e.g. 'p99<=10ms' (exponential from --max-rate-start, then bisection, each step a validated --max-rate-window; the rate found is confirmed by --max-rate-confirm repeats), then measure the case's window at it; the report lists rate and interval per mode; empty = off")
	fs.Float64Var(&f.start, "max-rate-start", 100, "first rate of the max-rate search, req/s")
	fs.Float64Var(&f.limit, "max-rate-limit", 100000, "highest rate the max-rate search or sweep probes, req/s")
	fs.Float64Var(&f.tol, "max-rate-tolerance", 0.05, "bisect until the interval's width is at most this fraction of its lower end")
	fs.IntVar(&f.confirm, "max-rate-confirm", 3, "windows repeated at the rate found; all must pass")
	fs.DurationVar(&f.window, "max-rate-window", 2*time.Second, "measured window of each max-rate probe (each also gets the --warmup)")
	fs.StringVar(&f.method, "max-rate-method", runner.MethodSearch, "search (exponential + bisection), sweep (every --max-rate-step from one step up, to the first failure) or both (the sweep after the search in the same trial, to compare them)")
	fs.Float64Var(&f.step, "max-rate-step", 0, "rate step of the max-rate sweep, req/s; 0 = with --max-rate-method both, the search's resolution (--max-rate-tolerance × the rate it found), so the sweep is as fine as the search (required > 0 with sweep alone)")
}

// resolve returns the runner's max-rate configuration, nil when off; every
// error is bad input.
func (f *maxRateFlags) resolve() (*runner.MaxRate, error) {
	if f.at == "" {
		return nil, nil
	}
	obj, err := maxrate.ParseObjective(f.at)
	if err != nil {
		return nil, usagef("--max-rate-at: %v", err)
	}
	mr := &runner.MaxRate{Search: maxrate.Options{Objective: obj, Start: f.start, Limit: f.limit, Tolerance: f.tol, Confirm: f.confirm},
		Window: f.window, Method: f.method, SweepStep: f.step}
	if err := mr.Search.Validate(); err != nil {
		return nil, usagef("--max-rate: %v", err)
	}
	switch f.method {
	case runner.MethodSearch, runner.MethodSweep, runner.MethodBoth:
	default:
		return nil, usagef("--max-rate-method: want search, sweep or both, got %q", f.method)
	}
	if f.window <= 0 {
		return nil, usagef("--max-rate-window: want > 0, got %v", f.window)
	}
	if f.step < 0 || (f.step == 0 && f.method == runner.MethodSweep) {
		return nil, usagef("--max-rate-step: want > 0 req/s with --max-rate-method sweep (0 = the search's resolution with both), got %v", f.step)
	}
	return mr, nil
}
