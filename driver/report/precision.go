package report

import (
	"fmt"
	"math"
	"time"

	"wafbench/driver/stats"
)

// writePrecisionTargets reports the run's precision targets (the suite's
// precision_targets or run --precision's): each target's paired-t
// half-width, whether it met the target, and for the unmet ones the repeats
// and wall time the observed spread implies; for run --precision, the
// budget, the blocks added and why adding stopped.
func writePrecisionTargets(m *md, fig *figures) {
	meta, recs, s := fig.Meta, fig.Records, fig.Summary
	pr := meta.Precision
	if pr == nil || len(pr.Targets) == 0 {
		return
	}
	var targets []stats.Target
	for _, t := range pr.Targets {
		if tg, err := stats.ParseTarget(t); err == nil {
			targets = append(targets, tg)
		}
	}
	sts := stats.CheckTargets(s, targets, pr.TargetPct)
	cost := stats.EstimateCost(meta, recs)
	block := cost.BlockS(cost.WindowS)
	met, needMax := 0, 0
	for _, st := range sts {
		if st.Met {
			met++
		} else {
			needMax = max(needMax, st.Needed)
		}
	}
	m.p("## Precision targets")
	m.nl()
	if pr.BudgetS > 0 {
		m.p("`run --precision %g%% --budget %s`: %d planned repeats, %d whole blocks added (%d repeats in all); adding stopped: **%s**. The rule stops on the width of the intervals, never on a p-value.",
			pr.TargetPct, time.Duration(pr.BudgetS*float64(time.Second)).String(), pr.PlannedRepeats, pr.AddedRepeats, pr.PlannedRepeats+pr.AddedRepeats, orNone(pr.Stop))
	} else {
		m.p("The suite's precision targets at ±%g%%, with its planned allocation (%d repeats); `run --precision %g%% --budget …` adds repeats until they are met.", pr.TargetPct, pr.PlannedRepeats, pr.TargetPct)
	}
	m.nl()
	m.p("**%d of %d targets met** (95%% paired-t CI half-width of the geometric-mean ratio, wider side, ≤ ±%g%%).", met, len(sts), pr.TargetPct)
	m.nl()
	m.head("target", "n", "ratio (geo-mean)", "paired-t 95% CI", "±", "met", "repeats needed (est.)")
	for _, st := range sts {
		if st.Comparison == nil {
			m.row(st.Target.String(), "0", "–", "–", "–", "no data", "–")
			continue
		}
		c := st.Comparison
		ok := "no"
		need := repeatsCell(st.Needed, block)
		if st.Met {
			ok, need = "**yes**", "–"
		}
		m.row(st.Target.String(), itoa(c.N()), f(c.GeoRatio, 3), ci(c.TLo, c.THi, 3), halfWidth(c.HalfWidthPct()), ok, need)
	}
	m.nl()
	if met < len(sts) && needMax > 0 {
		if needMax > stats.MaxRepeats {
			m.p("At the observed spread some target needs more than %d repeats at these windows: out of reach by repeats alone.", stats.MaxRepeats)
		} else {
			m.p("To meet every target at this run's windows: about **%d repeats**, ≈ %s of trials (%s per block); `run --precision %g%% --budget %s` would run them and stop earlier if the targets are met. The variance section gives the repeats × window of least wall time.",
				needMax, minutes(float64(needMax)*block), minutes(block), pr.TargetPct, budgetArg(float64(needMax)*block*1.1))
		}
		m.nl()
	}
}

// budgetArg rounds seconds up to whole minutes as a --budget value.
func budgetArg(sec float64) string {
	return fmt.Sprintf("%dm", int(math.Ceil(sec/60)))
}
