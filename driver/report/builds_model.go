package report

import (
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// buildsModel is the Builds section's content: every build-vs-default
// comparison, then per workload each engine's cheapest build against the
// other's. prot: the run has protection.json, so a best build must keep
// its default's protection.
type buildsModel struct {
	rows []*stats.Comparison
	prot bool
	best []bestBuilds
}

// bestBuilds is one workload's cheapest modsecurity build (a) against the
// cheapest coraza build (b), and the cheaper builds set aside because they
// fail tests their default passes.
type bestBuilds struct {
	w       stats.WorkloadKey
	a, b    string
	cpuA    float64 // median Envoy CPU µs/request
	cpuB    float64
	pair    *stats.Comparison // a ÷ b
	cheaper []cheaperBuild
}

// cheaperBuild is a build cheaper than its engine's best that protects
// differently, with its paired ratio against the other engine's best
// (num ÷ den).
type cheaperBuild struct {
	mode     string
	cpu      float64
	num, den string
	pair     *stats.Comparison
}

// buildBuilds computes the section; nil when the run measured no build
// besides the default ones.
func buildBuilds(meta *result.Meta, recs []result.Record, s *stats.Summary) *buildsModel {
	b := &buildsModel{prot: meta.Protection != nil}
	for i := range s.Comparisons {
		c := &s.Comparisons[i]
		if c.Family == stats.FamilyBuilds && (c.Metric == stats.MetricCPU || c.Metric == stats.MetricReqPerS) {
			b.rows = append(b.rows, c)
		}
	}
	if len(b.rows) == 0 {
		return nil
	}
	for _, w := range s.Workloads {
		if bb, ok := bestBuildsOf(meta, recs, s, w, b.prot); ok {
			b.best = append(b.best, bb)
		}
	}
	return b
}

// bestBuildsOf picks, for workload w, each engine's build with the lowest
// median CPU per request (among those keeping protection when prot).
func bestBuildsOf(meta *result.Meta, recs []result.Record, s *stats.Summary, w stats.WorkloadKey, prot bool) (bestBuilds, bool) {
	best := map[string]string{}
	bestV := map[string]float64{}
	var differ []string // cheaper builds set aside: they protect differently
	for _, mode := range s.Modes {
		e := modes.Engine(mode)
		if modes.IntegrationOf(mode) != modes.Module {
			continue
		}
		g := s.Group(stats.Key{Mode: mode, Workload: w.Workload, Conns: w.Conns})
		if g == nil || g.CPUUsPerReq.N == 0 || !(g.CPUUsPerReq.Median > 0) {
			continue
		}
		if prot && !keepsProtection(meta, mode) {
			differ = append(differ, mode)
			continue
		}
		if v, ok := bestV[e]; !ok || g.CPUUsPerReq.Median < v {
			best[e], bestV[e] = mode, g.CPUUsPerReq.Median
		}
	}
	a, b := best[modes.ModSecurity], best[modes.Coraza]
	if a == "" || b == "" {
		return bestBuilds{}, false
	}
	bb := bestBuilds{w: w, a: a, b: b, cpuA: bestV[modes.ModSecurity], cpuB: bestV[modes.Coraza], pair: stats.Pair(recs, a, b, w, stats.MetricCPU)}
	if !prot {
		return bb, true
	}
	for _, d := range differ {
		g := s.Group(stats.Key{Mode: d, Workload: w.Workload, Conns: w.Conns})
		if v, ok := bestV[modes.Engine(d)]; ok && g.CPUUsPerReq.Median < v {
			// Its paired ratio too, so the price of the detections it
			// gives up can be read off the row.
			num, den := a, d // against the other engine's best
			if modes.Engine(d) == modes.ModSecurity {
				num, den = d, b
			}
			bb.cheaper = append(bb.cheaper, cheaperBuild{mode: d, cpu: g.CPUUsPerReq.Median, num: num, den: den,
				pair: stats.Pair(recs, num, den, w, stats.MetricCPU)})
		}
	}
	return bb, true
}
