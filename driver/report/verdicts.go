package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"wafbench/driver/stats"
)

// nearLo and nearHi bound the ratios the verdict summary treats as small
// effects: a comparison not established with its ratio inside them is
// counted apart from the ones outside, which are listed.
const nearLo, nearHi = 0.9, 1.1

// minutes formats seconds as "8 min 20 s" (or "45 s").
func minutes(sec float64) string {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return noValue
	}
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Seconds()))
	}
	return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
}

// repeatsCell is an estimated repeat count with its wall time at block
// seconds per repeat: "9 (≈ 13 min 30 s)", "> 200" or "–".
func repeatsCell(n int, block float64) string {
	switch {
	case n == 0:
		return noValue
	case n > stats.MaxRepeats:
		return fmt.Sprintf("> %d", stats.MaxRepeats)
	case block <= 0:
		return itoa(n)
	}
	return fmt.Sprintf("%d (≈ %s)", n, minutes(float64(n)*block))
}

// verdictCell is the verdict in bold, or "not established (reason)", with
// the assumption flags after it.
func verdictCell(c *stats.Comparison) string {
	v := "**" + c.Verdict + "**"
	if c.Reason != "" {
		v = c.Verdict + " (" + c.Reason + ")"
	}
	if f := c.Assumptions.String(); f != "" {
		v += "; check: " + f
	}
	return v
}

// writeVerdicts states what the run established, question by question
// (Holm family; the CPU ratios one by one open the report, writeBrief):
// every comparison outside [0.9, 1.1] that is not established with the
// repeats it would need, and the assumption checks that failed.
func writeVerdicts(m *md, fig *figures) {
	meta, recs, s := fig.Meta, fig.Records, fig.Summary
	if len(s.Comparisons) == 0 {
		return
	}
	cost := stats.EstimateCost(meta, recs)
	v := buildVerdicts(s, cost.BlockS(cost.WindowS))
	m.p("## Verdicts")
	m.nl()
	if oneRepeat(s) {
		m.p("%s", oneRepeatNote)
		m.nl()
		return
	}
	var parts []string
	for _, fc := range v.families {
		parts = append(parts, fmt.Sprintf("%s: **%d of %d** established", fc.family, fc.est, fc.n))
	}
	m.p("Per question (one Holm family each, α = %g): %s. A verdict needs n ≥ %d paired repeats and a Holm-adjusted paired-t p < %g; the repeats estimates below assume the ratio and its spread stay as observed, at this run's block time (%s per repeat of every mode).",
		stats.Alpha, strings.Join(parts, "; "), stats.MinSamples, stats.Alpha, minutes(v.block))
	m.nl()
	if len(v.far) == 0 {
		m.p("Every comparison whose ratio lies outside [%g, %g] is established.", nearLo, nearHi)
	} else {
		m.p("Not established although the ratio lies outside [%g, %g] (%d):", nearLo, nearHi, len(v.far))
		m.nl()
		m.head("question", "ratio", "metric", "workload", "n", "ratio (geo-mean)", "paired-t 95% CI", "why", "repeats for a verdict")
		for _, c := range v.far {
			m.row(string(c.Family), c.Name(), c.Metric.Label(), c.WorkloadKey.String(), itoa(c.N()), f(c.GeoRatio, 3),
				ci(c.TLo, c.THi, 3), c.Reason, repeatsCell(c.RepeatsToEstablish(s.FamilySize(c.Family)), v.block))
		}
	}
	m.nl()
	if v.near > 0 {
		m.p("%d further comparisons are not established with a ratio inside [%g, %g]: differences under about 10%% that this run's spread cannot separate from none (see the paired ratios).", v.near, nearLo, nearHi)
		m.nl()
	}
	m.p(assumptionsMethod, stats.CheckMinN, v.checked, len(s.Comparisons), len(v.flagged), stats.CheckLevel, stats.CheckLevel, stats.Alpha)
	m.nl()
	if len(v.flagged) > 0 {
		m.head("ratio", "metric", "workload", "flags", "checks (per-repeat ratios: Paired ratios)")
		for _, c := range v.flagged {
			m.row(c.Name(), c.Metric.Label(), c.WorkloadKey.String(), c.Assumptions.String(), c.Assumptions.Describe())
		}
		m.nl()
	}
}

// assumptionsMethod says what the paired t's assumption checks are; its
// verbs: the least n checked, checked, comparisons, flagged, the drift and
// order levels, alpha.
const assumptionsMethod = "Assumption checks of the paired t (per-repeat log-ratios independent and roughly normal; run with n ≥ %d): %d of %d comparisons checked, %d flagged — skewed (|skewness| > 2 SE), drift (log-ratio correlated with the repeat number, p < %g), order (correlated with the modes' positions in the block, p < %g), or signed-rank disagrees (the paired t establishes a direction the exact Wilcoxon signed-rank test does not, p ≥ %g). Flags are diagnostics, not tests, and do not change a verdict: a few percent of sound comparisons flag by chance (the skewness check alone about 5%%)."
