package report

import (
	"fmt"
	"math"
	"wafbench/driver/modes"

	"wafbench/driver/stats"
)

// briefHeading is the first section of report.md: the verdicts in words.
const briefHeading = "## In brief"

// brief is the report's first screen: for every ratio of proxy CPU per
// request the run tests (each WAF mode over passthrough, modsecurity over
// coraza, each build over its engine's default build, each other host over
// its engine's module), its figure on every workload with a verdict.
// analyseBrief computes it from the summary; writeBrief only formats it.
type brief struct {
	OneRepeat bool         // no interval and no verdict anywhere
	Pairs     []briefRatio // in the order of the run's comparisons
}

// externalNote says, where a ratio involves an external mode, that its CPU
// is Envoy's and its server's together ("" otherwise).
func (b *brief) externalNote() string {
	for _, p := range b.Pairs {
		if modes.IsExternal(p.Num) || modes.IsExternal(p.Den) {
			return "; an ext_proc or ext_authz mode's is Envoy's plus its wafbench-extproc server's"
		}
	}
	return ""
}

// briefRatio is one ratio Num ÷ Den of CPU per request on every workload.
type briefRatio struct {
	Num, Den    string
	Rows        []*stats.Comparison // one per workload, in the summary's workload order
	Established int                 // rows with a verdict
	// Least and Most are the established rows with the smallest and the
	// largest ratio; nil when none is established.
	Least, Most *stats.Comparison
	Repeats     map[*stats.Comparison]int // paired repeats a verdict would need, per row not established
}

// analyseBrief groups the run's CPU comparisons by ratio.
func analyseBrief(s *stats.Summary) *brief {
	b := &brief{OneRepeat: oneRepeat(s)}
	index := map[[2]string]int{}
	for _, w := range s.Workloads {
		for i := range s.Comparisons {
			c := &s.Comparisons[i]
			if c.WorkloadKey != w || c.Metric != stats.MetricCPU || c.N() == 0 || math.IsNaN(c.GeoRatio) {
				continue
			}
			k := [2]string{c.Num, c.Den}
			if _, ok := index[k]; !ok {
				index[k] = len(b.Pairs)
				b.Pairs = append(b.Pairs, briefRatio{Num: c.Num, Den: c.Den, Repeats: map[*stats.Comparison]int{}})
			}
			r := &b.Pairs[index[k]]
			r.Rows = append(r.Rows, c)
			if c.Verdict == stats.NotEstablished {
				r.Repeats[c] = c.RepeatsToEstablish(s.FamilySize(c.Family))
				continue
			}
			r.Established++
			if r.Least == nil || c.GeoRatio < r.Least.GeoRatio {
				r.Least = c
			}
			if r.Most == nil || c.GeoRatio > r.Most.GeoRatio {
				r.Most = c
			}
		}
	}
	return b
}

// sentence states r in words: how many times Den's CPU per request Num
// uses, where the verdicts hold, and on how many workloads.
func (r *briefRatio) sentence(oneRepeat bool) string {
	tail := fmt.Sprintf(" times the CPU per request of `%s`", r.Den)
	switch {
	case oneRepeat:
		return "`" + r.Num + "` uses " + rangeOf(r.Rows) + tail + "; one repeat: no interval, no verdict."
	case r.Established == 0:
		return "`" + r.Num + "` uses " + rangeOf(r.Rows) + tail + fmt.Sprintf(" — not established on any of %d %s.", len(r.Rows), workloads(len(r.Rows)))
	case r.Least == r.Most:
		s := "`" + r.Num + "` uses " + ratioCell(r.Most) + tail + " on " + r.Most.WorkloadKey.String() + " — established"
		if len(r.Rows) == 1 {
			return s + "."
		}
		return s + fmt.Sprintf(" there, on 1 of %d workloads.", len(r.Rows))
	}
	return "`" + r.Num + "` uses from " + ratioCell(r.Least) + " (" + r.Least.WorkloadKey.String() + ") to " + ratioCell(r.Most) + " (" +
		r.Most.WorkloadKey.String() + ")" + tail + fmt.Sprintf(" — established on %d of %d workloads.", r.Established, len(r.Rows))
}

// rangeOf is the smallest and the largest ratio of rows, without
// intervals: "from 0.961 (headers/c1) to 1.404 (phase1_block/c16)".
func rangeOf(rows []*stats.Comparison) string {
	lo, hi := rows[0], rows[0]
	for _, c := range rows {
		if c.GeoRatio < lo.GeoRatio {
			lo = c
		}
		if c.GeoRatio > hi.GeoRatio {
			hi = c
		}
	}
	if lo == hi {
		return f(lo.GeoRatio, ratioDigits) + " (" + lo.WorkloadKey.String() + ")"
	}
	return "from " + f(lo.GeoRatio, ratioDigits) + " (" + lo.WorkloadKey.String() + ") to " + f(hi.GeoRatio, ratioDigits) + " (" + hi.WorkloadKey.String() + ")"
}

func workloads(n int) string {
	if n == 1 {
		return "workload"
	}
	return "workloads"
}

// verdict is a row's verdict cell: the verdict in bold with any failed
// assumption check, or "not established (≈ n repeats)".
func (r *briefRatio) verdict(c *stats.Comparison) string {
	switch n := r.Repeats[c]; {
	case c.Verdict != stats.NotEstablished:
		return verdictCell(c)
	case n > stats.MaxRepeats:
		return fmt.Sprintf("%s (> %d repeats)", c.Verdict, stats.MaxRepeats)
	case n > 0:
		return fmt.Sprintf("%s (≈ %d repeats)", c.Verdict, n)
	}
	return c.Verdict
}

// writeBrief opens report.md: one sentence per ratio, then per ratio a
// narrow table (none in a run of one repeat: no interval, no verdict; the
// page shows them side by side), then the CPU chart.
func writeBrief(m *md, fig *figures) {
	b := fig.Brief
	if b == nil || len(b.Pairs) == 0 {
		writeCPUChart(m, fig)
		return
	}
	m.p("%s", briefHeading)
	m.nl()
	m.p("Proxy CPU per request (all threads, schedstat%s); ratios: %s. A verdict needs %d paired repeats and a Holm-adjusted p < %g; \"≈ n repeats\": what one would need if the spread held.",
		b.externalNote(), ratioHead, stats.MinSamples, stats.Alpha)
	m.nl()
	for i := range b.Pairs {
		m.p("- %s", b.Pairs[i].sentence(b.OneRepeat))
	}
	m.nl()
	for i := range b.Pairs {
		if r := &b.Pairs[i]; !b.OneRepeat {
			m.head("workload", r.Num+" ÷ "+r.Den, "verdict")
			for _, c := range r.Rows {
				m.row(c.WorkloadKey.String(), ratioCell(c), r.verdict(c))
			}
			m.nl()
		}
	}
	writeCPUChart(m, fig)
}
