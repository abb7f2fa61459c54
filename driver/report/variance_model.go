package report

import (
	"math"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// allocationModel is the choice of repeats × window length for the
// precision target: the cost model read from the run's wall time, the
// allocation at this run's window and the one of least wall time, and the
// noisiest comparison, which sets the repeats.
type allocationModel struct {
	pct        float64 // precision target, ± %
	what       string  // which comparisons the noise is of
	modes      int     // cost model: modes per block
	trialS     float64 // seconds per trial outside the windows
	workloads  int
	warmupS    float64
	here, best stats.Allocation
	worst      *stats.RatioNoise // nil when no comparison has a log SD
	// worstBetween and worstWithin: the noisiest comparison's SD split
	// into its between-process part and the part predicted from within
	// the windows (both fractions; only when worst.WindowS > 0).
	worstBetween, worstWithin float64
}

// buildAllocation computes the allocation; nil when the run gives no
// ratio noise or no cost model.
func buildAllocation(meta *result.Meta, recs []result.Record, s *stats.Summary) *allocationModel {
	a := &allocationModel{pct: stats.PrecisionTargetPct}
	if meta.Precision != nil && meta.Precision.TargetPct > 0 {
		a.pct = meta.Precision.TargetPct
	}
	noise, what := allocationNoise(meta, s)
	cost := stats.EstimateCost(meta, recs)
	if len(noise) == 0 || cost.Modes == 0 || cost.Workloads == 0 {
		return nil
	}
	a.what, a.modes, a.trialS, a.workloads, a.warmupS = what, cost.Modes, cost.TrialS, cost.Workloads, cost.WarmupS
	a.best = stats.Allocate(noise, cost, a.pct, stats.Windows)
	a.here = stats.Allocate(noise, cost, a.pct, []float64{math.Round(cost.WindowS*10) / 10})
	for i := range noise {
		if math.IsNaN(noise[i].SDLog) {
			continue
		}
		if a.worst == nil || noise[i].SDAt(a.best.WindowS) > a.worst.SDAt(a.best.WindowS) {
			a.worst = &noise[i]
		}
	}
	if w := a.worst; w != nil && w.WindowS != 0 {
		a.worstBetween = math.Sqrt(w.BetweenVar())
		a.worstWithin = math.Sqrt(math.Max(0, w.SDLog*w.SDLog-w.BetweenVar()))
	}
	return a
}
