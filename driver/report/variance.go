package report

import (
	"fmt"
	"math"

	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// cvCell formats a coefficient of variation as a percentage.
func cvCell(v float64) string {
	if math.IsNaN(v) {
		return noValue
	}
	return f(100*v, 1) + "%"
}

// allocationNoise is what the allocation must serve: the run's precision
// targets, else every engine-vs-engine req/s and CPU comparison, else every
// req/s and CPU comparison.
func allocationNoise(meta *result.Meta, s *stats.Summary) (noise []stats.RatioNoise, what string) {
	if meta.Precision != nil {
		for _, t := range meta.Precision.Targets {
			tg, err := stats.ParseTarget(t)
			if err != nil {
				continue
			}
			if c := s.Comparison(tg.Num, tg.Den, tg.Metric, tg.WorkloadKey); c != nil {
				noise = append(noise, s.Noise(c))
			}
		}
		if len(noise) > 0 {
			return noise, "the run's precision targets"
		}
	}
	for _, fam := range []stats.Family{stats.FamilyEngines, ""} {
		for i := range s.Comparisons {
			c := &s.Comparisons[i]
			if (fam == "" || c.Family == fam) && (c.Metric == stats.MetricReqPerS || c.Metric == stats.MetricCPU) {
				noise = append(noise, s.Noise(c))
			}
		}
		if len(noise) > 0 {
			if fam == "" {
				return noise, "every req/s and CPU ratio"
			}
			return noise, "every " + modes.ModSecurity + "/" + modes.Coraza + " req/s and CPU ratio"
		}
	}
	return nil, ""
}

// writeVariance splits each group's throughput variance into within-window
// and between-process parts and chooses, Kalibera–Jones style, the repeats
// × window length that reach the precision target at the least wall time.
func writeVariance(m *md, fig *figures) {
	s := fig.Summary
	if len(s.Components) == 0 {
		return
	}
	m.p("## Variance components")
	m.nl()
	if oneRepeat(s) {
		m.p("%s", oneRepeatNote)
		m.nl()
		return
	}
	m.p("Per mode × workload, from this run's own data: the per-second throughput CV inside a measured window (pooled over windows), the CV of the windows' req/s between repeats (fresh Envoy processes), and its between-process part √(between² − within²/T) for windows of T s — the two-level model of Kalibera and Jones. Within-window seconds are treated as independent; correlated seconds would make the within part look smaller than it is.")
	m.nl()
	m.head("workload", "mode", "n", "window s", "req/s", "within-window CV (per s)", "between-repeat CV", "between-process CV", "process share", "CPU µs/req between-repeat CV")
	for _, c := range s.Components {
		share := noValue
		if !math.IsNaN(c.ProcessShare) {
			share = f(100*c.ProcessShare, 0) + "%"
		}
		win := noValue
		if c.WindowS > 0 {
			win = f(c.WindowS, 0)
		}
		m.row(c.WorkloadKey().String(), c.Mode, itoa(c.N), win, f(c.MeanReqPerS, 0), cvCell(c.WithinCV),
			cvCell(c.BetweenCV), cvCell(c.ProcessCV), share, cvCell(c.CPUBetweenCV))
	}
	m.nl()
	if a := buildAllocation(fig.Meta, fig.Records, s); a != nil {
		writeAllocation(m, a)
	}
}

// writeAllocation is the repeats × window table and the noisiest
// comparison behind it.
func writeAllocation(m *md, a *allocationModel) {
	m.p("### Repeats × window for ±%g%%", a.pct)
	m.nl()
	m.p("Cost model: a block (every mode once) takes %d × (%.1f s per trial for start-up, preflight, trial warmup and stop + %d workloads × (%.1f s warmup + T)), read from this run's wall time. Paired ratios cancel what the two modes share in a block; what is left of each ratio's per-repeat log SD beyond its predicted within-window part is its between-process part. For %s, the paired-t half-width at n repeats of T s windows is predicted from those two parts.",
		a.modes, a.trialS, a.workloads, a.warmupS, a.what)
	m.nl()
	m.head("allocation", "window T", "repeats", "block", "wall time (trials)")
	row := func(name string, a stats.Allocation) {
		n := itoa(a.Repeats)
		if !a.Feasible {
			n = fmt.Sprintf("> %d", stats.MaxRepeats)
		}
		m.row(name, f(a.WindowS, 1)+" s", n, minutes(a.BlockS), minutes(a.WallS))
	}
	if a.here.Repeats > 0 {
		row("this run's window", a.here)
	}
	if a.best.Repeats > 0 {
		row("least wall time", a.best)
	}
	m.nl()
	switch w := a.worst; {
	case w == nil:
	case w.WindowS == 0:
		c := w.Comparison
		m.p("The noisiest of them, %s %s on %s, has a per-repeat log-ratio SD of %.1f%%; its windows are too short (under 2 whole seconds) to split off a within-window part, so all of it counts as between processes.",
			c.Name(), c.Metric.Label(), c.WorkloadKey, 100*w.SDLog)
		m.nl()
	default:
		c := w.Comparison
		m.p("The noisiest of them, %s %s on %s, has a per-repeat log-ratio SD of %.1f%% at %.0f s windows: %.1f%% between processes, %.1f%% predicted from within the windows.",
			c.Name(), c.Metric.Label(), c.WorkloadKey, 100*w.SDLog, w.WindowS, 100*a.worstBetween, 100*a.worstWithin)
		m.nl()
	}
}
