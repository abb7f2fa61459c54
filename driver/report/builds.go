package report

import (
	"fmt"
	"strings"

	"wafbench/driver/modes"
	"wafbench/driver/stats"
)

// writeBuilds is the report's answer to "which engine, built how?": every
// build against its engine's default build (CPU µs/request and req/s, paired
// within repeats), then, per workload, each engine's cheapest build against
// the other engine's cheapest. It writes nothing when the run measured no
// build besides the default ones.
func writeBuilds(m *md, fig *figures) {
	meta, recs, s := fig.Meta, fig.Records, fig.Summary
	var rows []*stats.Comparison
	for i := range s.Comparisons {
		c := &s.Comparisons[i]
		if c.Family == stats.FamilyBuilds && (c.Metric == stats.MetricCPU || c.Metric == stats.MetricReqPerS) {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	m.p("## Builds")
	m.nl()
	m.p("Each engine build against its engine's default build (the engine as Debian or the Go module ships it), paired within repeats. Ratio = build / default: below 1 is cheaper for CPU, above 1 is faster for req/s; the geometric mean of the per-repeat paired ratios with its paired-t 95%% interval, as in every ratio column of this report. The verdict needs Holm-adjusted p < %g within the family of every build-vs-default comparison of the report.", stats.Alpha)
	m.nl()
	prot := meta.Protection != nil
	cols := []string{"build", "recipe", "workload", "metric", "n", "build/default, " + ratioHead, "Holm p", "verdict"}
	if prot { // protection beside cost (protection.json)
		cols = append(cols, "CRS pass rate")
	}
	m.head(cols...)
	for _, c := range rows {
		v := c.Verdict
		if c.Reason != "" {
			v += " (" + c.Reason + ")"
		}
		recipe := ""
		if mod, ok := meta.Modules[c.Num]; ok {
			recipe = mod.Build
		}
		cells := []string{"`" + c.Num + "`", recipe, c.WorkloadKey.String(), c.Metric.Label(), itoa(c.N()),
			ratioCell(c), p(c.PHolm), v}
		if prot {
			cells = append(cells, protectionCell(meta, c.Num))
		}
		m.row(cells...)
	}
	m.nl()

	// Best against best: per workload, the build of each engine with the
	// lowest median CPU per request, and their paired ratio.
	m.p("Best build against best build, per workload: for each engine the build with the lowest median Envoy CPU per request in this run, and their ratio paired within repeats (geometric mean of the per-repeat ratios, paired-t 95%% interval). The builds are chosen after measuring, so read this table as descriptive (no Holm family, no verdict); the tested comparisons are above.")
	if prot {
		m.p("Best means best among the builds that pass every CRS test their engine's default build passes (Protection beside cost; a build that passes more says so in its pass-rate cell); a cheaper build that fails a test its default passes is named on the row.")
	}
	m.nl()
	bestCols := []string{"workload", "best modsecurity build", "median CPU µs/req", "best coraza build", "median CPU µs/req", "modsecurity/coraza CPU, " + ratioHead}
	if prot {
		bestCols = append(bestCols, "CRS pass rate (modsecurity / coraza)", "cheaper, but fails tests its default passes")
	}
	m.head(bestCols...)
	for _, w := range s.Workloads {
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
			continue
		}
		cells := []string{w.String(), "`" + a + "`", f(bestV[modes.ModSecurity], 1), "`" + b + "`", f(bestV[modes.Coraza], 1), ratioCell(stats.Pair(recs, a, b, w, stats.MetricCPU))}
		if prot {
			var cheaper []string
			for _, d := range differ {
				g := s.Group(stats.Key{Mode: d, Workload: w.Workload, Conns: w.Conns})
				if v, ok := bestV[modes.Engine(d)]; ok && g.CPUUsPerReq.Median < v {
					// Its paired ratio too, so the price of the
					// detections it gives up can be read off the row.
					num, den := a, d // against the other engine's best
					if modes.Engine(d) == modes.ModSecurity {
						num, den = d, b
					}
					cheaper = append(cheaper, fmt.Sprintf("`%s` %s µs/req, %s; `%s`/`%s` %s", d, f(g.CPUUsPerReq.Median, 1),
						protectionCell(meta, d), num, den, ratioCell(stats.Pair(recs, num, den, w, stats.MetricCPU))))
				}
			}
			cells = append(cells, protectionCell(meta, a)+" / "+protectionCell(meta, b), strings.Join(cheaper, "; "))
		}
		m.row(cells...)
	}
	m.nl()
}
