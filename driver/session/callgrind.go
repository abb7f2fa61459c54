package session

import (
	"path/filepath"
	"slices"
	"time"

	"wafbench/driver/hosts"
	"wafbench/driver/internal/usage"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/runner"
)

// CallgrindRequest is run's --callgrind flags: Requests 0 is off.
type CallgrindRequest struct {
	Requests, Warmup    int64
	Bound, StartTimeout time.Duration
}

// Callgrind defaults: a request under callgrind takes 50–100× its native
// time (0.1 s for a headers-only request to ModSecurity, seconds for Coraza
// on a 4 KiB JSON body), and Envoy loads CRS in 0.5–5 min.
const (
	defaultCallgrindTimeout = 2 * time.Minute
	// meterDir is where `make modules` builds the meter (filters/meter),
	// relative to the checkout.
	meterDir = "build/meter"
)

// resolveCallgrind applies --callgrind: Envoy modes only, no timed or paced
// load, the cases with one connection, no warm-up time (the warm-up is
// counted in requests) and no request matrix; Normalize gave it a
// per-request timeout of minutes unless --timeout says otherwise.
func (p *Plan) resolveCallgrind(req Request) error {
	c := req.Callgrind
	if c.Requests == 0 {
		return nil
	}
	if c.Requests < 0 || c.Warmup < 0 || c.Bound <= 0 || c.StartTimeout <= 0 {
		return usage.Errorf("--callgrind %d, --callgrind-warmup %d, --callgrind-bound %v, --callgrind-start %v: want requests > 0, warm-up ≥ 0 and bounds > 0",
			c.Requests, c.Warmup, c.Bound, c.StartTimeout)
	}
	for _, m := range p.modeSpecs {
		if m.IsExternal() {
			return usage.Errorf("--callgrind: mode %s: its engine runs in the wafbench-extproc server, which callgrind would not count (--perf samples both processes)", m)
		}
		if m.Host != modes.Envoy || m.IsWasm() {
			return usage.Errorf("--callgrind: mode %s: counts Envoy with a native module or none only", m)
		}
	}
	switch {
	case p.PerfHz > 0, p.Rate > 0, p.MaxRate != nil, req.Precision != "":
		return usage.Errorf("--callgrind counts a fixed number of requests sent one at a time: not with --perf, --rate, --max-rate-at or --precision")
	}
	one := slices.DeleteFunc(slices.Clone(p.cases), func(c profile.Case) bool { return c.Conns != 1 })
	if len(one) == 0 {
		return usage.Errorf("--callgrind sends one request at a time: none of the workloads %v runs with one connection (--workloads headers@1,json_4k@1)", p.Workloads)
	}
	p.cases, p.Workloads = one, caseKeys(one)
	p.Design.Cases = len(one)
	p.Warmup, p.TrialWarmup, p.Duration = 0, 0, c.Bound
	p.Matrix = "none"
	p.Callgrind = &runner.Callgrind{Warmup: c.Warmup, Requests: c.Requests, Bound: c.Bound}
	p.callgrindStack = &hosts.Callgrind{MeterDir: filepath.Join(p.RepoDir, meterDir), StartTimeout: c.StartTimeout}
	p.Flags["duration"], p.Flags["warmup"], p.Flags["trial-warmup"] = p.Duration.String(), "0s", "0s"
	p.Flags["matrix"], p.Flags["timeout"] = p.Matrix, p.Timeout.String()
	return nil
}
