package runner

import (
	"context"
	"fmt"
	"time"

	"wafbench/driver/plan"
	"wafbench/driver/profile"

	"wafbench/driver/load"
	"wafbench/driver/result"
	"wafbench/driver/verdict"
)

// probeVerdict sends a measure_verdict workload's request once and makes
// the status it got the window's expected status, keeping the profile's
// as DeclaredStatus. A probe without a status (refused, reset, timeout)
// is the record's error: the window could not count anything valid. It
// returns how long the probe took (recorded as VerdictProbeMs).
func probeVerdict(ctx context.Context, addr string, timeout time.Duration, req *load.Request, rec *result.Record) (took time.Duration, err error) {
	rec.DeclaredStatus = rec.ExpectStatus
	t0 := time.Now()
	a := verdict.Probe(ctx, addr, req.Raw, timeout)
	took = time.Since(t0)
	rec.VerdictProbeMs = float64(took.Microseconds()) / 1e3
	if a.Status == 0 {
		rec.ExpectStatus = 0
		return took, fmt.Errorf("verdict probe: no status (%s) within %v: %v", a.Kind, timeout, a.Err)
	}
	rec.ExpectStatus = a.Status
	req.ExpectStatus = a.Status
	return took, nil
}

// verdictPoint reports a measured-verdict record whose failure is its own:
// the trial goes on to its other points unless the proxy died.
func verdictPoint(rec *result.Record, p *proxy) bool {
	return rec.DeclaredStatus != 0 && !exited(p.Done, 0)
}

// startAttacks starts the workload's attack stream, if it declares one, as
// a second load generator beside the window's (driver/verdict).
func startAttacks(ctx context.Context, cfg *runner, tr plan.Trial, c profile.Case, addr string, rec *result.Record) *verdict.Stream {
	w := c.Workload
	if w.AttackStream == "" {
		return nil
	}
	aw := cfg.Set.Workloads[w.AttackStream]
	req := cfg.Set.Request(aw)
	rec.AttackWorkload = aw.Name
	rec.AttackExpect = aw.Expected(tr.Mode)
	workers := int(w.AttackRate/10) + 1
	max := int(w.AttackRate*c.Window(cfg.Duration).Seconds()) + workers
	return verdict.StartStream(ctx, verdict.StreamOptions{Target: addr, Rate: w.AttackRate, Workers: workers, Max: max, Timeout: cfg.Timeout}, req.Raw)
}

// stopAttacks ends a running stream once and records its answers.
func stopAttacks(s *verdict.Stream, rec *result.Record) {
	if s == nil || rec.Attacks != nil {
		return
	}
	rec.Attacks = s.Stop()
	if rec.Attacks == nil {
		rec.Attacks = map[string]int64{}
	}
}
