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
	tm := buildTargets(fig.Meta, fig.Records, fig.Summary)
	if tm == nil {
		return
	}
	pr := tm.pr
	m.p("## Precision targets")
	m.nl()
	if pr.BudgetS > 0 {
		m.p("`run --precision %g%% --budget %s`: %d planned repeats, %d whole blocks added (%d repeats in all); adding stopped: **%s**. The rule stops on the width of the intervals, never on a p-value.",
			pr.TargetPct, time.Duration(pr.BudgetS*float64(time.Second)).String(), pr.PlannedRepeats, pr.AddedRepeats, pr.PlannedRepeats+pr.AddedRepeats, orNone(pr.Stop))
	} else {
		m.p("The suite's precision targets at ±%g%%, with its planned allocation (%d repeats); `run --precision %g%% --budget …` adds repeats until they are met.", pr.TargetPct, pr.PlannedRepeats, pr.TargetPct)
	}
	m.nl()
	m.p("**%d of %d targets met** (95%% paired-t CI half-width of the geometric-mean ratio, wider side, ≤ ±%g%%).", tm.met, len(tm.sts), pr.TargetPct)
	m.nl()
	m.head("target", "n", "ratio (geo-mean)", "paired-t 95% CI", "±", "met", "repeats needed (est.)")
	for _, st := range tm.sts {
		if st.Comparison == nil {
			m.row(st.Target.String(), "0", "–", "–", "–", "no data", "–")
			continue
		}
		c := st.Comparison
		ok, need := "no", repeatsCell(st.Needed, tm.block)
		if st.Met {
			ok, need = "**yes**", "–"
		}
		m.row(st.Target.String(), itoa(c.N()), f(c.GeoRatio, 3), ci(c.TLo, c.THi, 3), halfWidth(c.HalfWidthPct()), ok, need)
	}
	m.nl()
	if tm.met < len(tm.sts) && tm.needMax > 0 {
		if tm.needMax > stats.MaxRepeats {
			m.p("At the observed spread some target needs more than %d repeats at these windows: out of reach by repeats alone.", stats.MaxRepeats)
		} else {
			m.p("To meet every target at this run's windows: about **%d repeats**, ≈ %s of trials (%s per block); `run --precision %g%% --budget %s` would run them and stop earlier if the targets are met. The variance section gives the repeats × window of least wall time.",
				tm.needMax, minutes(float64(tm.needMax)*tm.block), minutes(tm.block), pr.TargetPct, budgetArg(float64(tm.needMax)*tm.block*1.1))
		}
		m.nl()
	}
}

// budgetArg rounds seconds up to whole minutes as a --budget value.
func budgetArg(sec float64) string {
	return fmt.Sprintf("%dm", int(math.Ceil(sec/60)))
}
