package report

import (
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// precisionModel is the Precision achieved section's content: how many
// groups met the target for each metric, and per paired ratio of req/s or
// CPU its half-widths and verdict.
type precisionModel struct {
	nReq, nCPU int
	ratios     []precisionRatio
}

// precisionRatio is one comparison's half-widths in percent (bootstrap
// and order-statistic intervals of the median) and its verdict: "met",
// "not met", or noValue below two repeats.
type precisionRatio struct {
	c           *stats.Comparison
	boot, order float64
	verdict     string
}

func buildPrecision(s *stats.Summary) *precisionModel {
	pm := &precisionModel{}
	for _, g := range s.Groups {
		if g.ReqPerS.PrecisionMet() {
			pm.nReq++
		}
		if g.CPUUsPerReq.PrecisionMet() {
			pm.nCPU++
		}
	}
	for i := range s.Comparisons {
		c := &s.Comparisons[i]
		if c.Metric != stats.MetricReqPerS && c.Metric != stats.MetricCPU {
			continue
		}
		r := precisionRatio{c: c, boot: ratioHalfWidth(c.MedianRatio, c.BootLo, c.BootHi),
			order: ratioHalfWidth(c.MedianRatio, c.OrderLo, c.OrderHi), verdict: "not met"}
		if c.N() < 2 {
			r.verdict = noValue
		} else if c.HalfWidthPct() <= stats.PrecisionTargetPct {
			r.verdict = "met"
		}
		pm.ratios = append(pm.ratios, r)
	}
	return pm
}

// targetsModel is the Precision targets section's content: each target's
// status, how many are met, the most repeats an unmet one needs, and the
// seconds one block of repeats takes.
type targetsModel struct {
	pr      *result.Precision
	sts     []stats.TargetStatus
	met     int
	needMax int
	block   float64
}

// buildTargets checks the run's precision targets; nil when it has none.
func buildTargets(meta *result.Meta, recs []result.Record, s *stats.Summary) *targetsModel {
	pr := meta.Precision
	if pr == nil || len(pr.Targets) == 0 {
		return nil
	}
	var targets []stats.Target
	for _, t := range pr.Targets {
		if tg, err := stats.ParseTarget(t); err == nil {
			targets = append(targets, tg)
		}
	}
	tm := &targetsModel{pr: pr, sts: stats.CheckTargets(s, targets, pr.TargetPct)}
	cost := stats.EstimateCost(meta, recs)
	tm.block = cost.BlockS(cost.WindowS)
	for _, st := range tm.sts {
		if st.Met {
			tm.met++
		} else {
			tm.needMax = max(tm.needMax, st.Needed)
		}
	}
	return tm
}
