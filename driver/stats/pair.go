package stats

import (
	"sort"

	"wafbench/driver/result"
)

// Pair is the paired comparison num/den of metric m on workload w over the
// valid records of recs, computed exactly as the run's own comparisons
// are (per-repeat ratios within a repeat, their geometric mean with its
// paired-t interval, the median and its intervals), but outside any Holm
// family and without a verdict: for descriptive tables whose rows are
// chosen after measuring. nil when no repeat holds both modes, or for
// MetricCPUAdj.
func Pair(recs []result.Record, num, den string, w WorkloadKey, m metric) *Comparison {
	if m == metricCPUAdj {
		return nil
	}
	first := func(mode string) map[int]*result.Record {
		out := map[int]*result.Record{}
		for i := range recs {
			r := &recs[i]
			if r.Mode != mode || r.Workload != w.Workload || r.Conns != w.Conns || !Valid(r) {
				continue
			}
			if _, dup := out[r.Repeat]; !dup {
				out[r.Repeat] = r
			}
		}
		return out
	}
	a, b := first(num), first(den)
	c := &Comparison{WorkloadKey: w, Num: num, Den: den, Metric: m}
	var reps []int
	for rep := range a {
		reps = append(reps, rep)
	}
	sort.Ints(reps)
	for _, rep := range reps {
		y := b[rep]
		if y == nil {
			continue
		}
		xv, yv := metricValue(m, a[rep]), metricValue(m, y)
		if yv <= 0 || xv < 0 {
			continue // a ratio needs a positive denominator
		}
		c.Repeats = append(c.Repeats, rep)
		c.NumValues, c.DenValues = append(c.NumValues, xv), append(c.DenValues, yv)
		c.Ratios = append(c.Ratios, xv/yv)
		c.NumPositions, c.DenPositions = append(c.NumPositions, a[rep].Position), append(c.DenPositions, y.Position)
	}
	if len(c.Ratios) == 0 {
		return nil
	}
	fillRatio(c)
	return c
}
