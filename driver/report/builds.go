package report

import (
	"fmt"
	"strings"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// writeBuilds is the report's answer to "which engine, built how?": every
// build against its engine's default build (CPU µs/request and req/s, paired
// within repeats), then, per workload, each engine's cheapest build against
// the other engine's cheapest. It writes nothing when the run measured no
// build besides the default ones.
func writeBuilds(m *md, fig *figures) {
	meta := fig.Meta
	b := buildBuilds(meta, fig.Records, fig.Summary)
	if b == nil {
		return
	}
	m.p("## Builds")
	m.nl()
	m.p(buildsMethod, stats.Alpha)
	m.nl()
	cols := []string{"build", "recipe", "workload", "metric", "n", "build/default, " + ratioHead, "Holm p", "verdict"}
	if b.prot { // protection beside cost (protection.json)
		cols = append(cols, "CRS pass rate")
	}
	m.head(cols...)
	for _, c := range b.rows {
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
		if b.prot {
			cells = append(cells, protectionCell(meta, c.Num))
		}
		m.row(cells...)
	}
	m.nl()
	writeBestBuilds(m, meta, b)
}

// writeBestBuilds is the table of best build against best build.
func writeBestBuilds(m *md, meta *result.Meta, b *buildsModel) {
	m.p(bestBuildsMethod)
	if b.prot {
		m.p("Best means best among the builds that pass every CRS test their engine's default build passes (Protection beside cost; a build that passes more says so in its pass-rate cell); a cheaper build that fails a test its default passes is named on the row.")
	}
	m.nl()
	bestCols := []string{"workload", "best modsecurity build", "median CPU µs/req", "best coraza build", "median CPU µs/req", "modsecurity/coraza CPU, " + ratioHead}
	if b.prot {
		bestCols = append(bestCols, "CRS pass rate (modsecurity / coraza)", "cheaper, but fails tests its default passes")
	}
	m.head(bestCols...)
	for _, bb := range b.best {
		cells := []string{bb.w.String(), "`" + bb.a + "`", f(bb.cpuA, 1), "`" + bb.b + "`", f(bb.cpuB, 1), ratioCell(bb.pair)}
		if b.prot {
			var cheaper []string
			for _, d := range bb.cheaper {
				cheaper = append(cheaper, fmt.Sprintf("`%s` %s µs/req, %s; `%s`/`%s` %s", d.mode, f(d.cpu, 1),
					protectionCell(meta, d.mode), d.num, d.den, ratioCell(d.pair)))
			}
			cells = append(cells, protectionCell(meta, bb.a)+" / "+protectionCell(meta, bb.b), strings.Join(cheaper, "; "))
		}
		m.row(cells...)
	}
	m.nl()
}

// buildsMethod says how a build is compared with its default; its verb is
// the Holm alpha.
const buildsMethod = "Each engine build against its engine's default build (the engine as Debian or the Go module ships it), paired within repeats. Ratio = build / default: below 1 is cheaper for CPU, above 1 is faster for req/s; the geometric mean of the per-repeat paired ratios with its paired-t 95%% interval, as in every ratio column of this report. The verdict needs Holm-adjusted p < %g within the family of every build-vs-default comparison of the report."

// bestBuildsMethod says how the best builds are chosen and compared.
const bestBuildsMethod = "Best build against best build, per workload: for each engine the build with the lowest median Envoy CPU per request in this run, and their ratio paired within repeats (geometric mean of the per-repeat ratios, paired-t 95%% interval). The builds are chosen after measuring, so read this table as descriptive (no Holm family, no verdict); the tested comparisons are above."
