package report

import (
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// crossVerdict is what a crossover paragraph states.
type crossVerdict int

const (
	crossEqual      crossVerdict = iota // no paired difference to compare
	crossAt                             // a crossover, stated
	crossThroughout                     // one mode cheaper at every point, every interval excluding 1
	crossUnsure                         // no crossing seen, cheaper throughout not established
	crossOpen                           // crossover not established
)

// crossoverModel is the comparison of two WAF modes along a sweep: the
// paired ratio at every point, the bootstrap crossing and the verdict.
type crossoverModel struct {
	a, b     string
	prs      []pointRatio
	at       stats.Interval // where the median paired log-ratio first changes sign
	cheaper  string         // the mode cheaper below at (or throughout)
	other    string         // the other mode
	crosses  int            // sign changes of the median paired log-ratio
	share    float64        // share of resamples with a crossing
	nMed     int            // crossings of the table's medians
	mLo, mHi int            // the points around the medians' first crossing
	verdict  crossVerdict
	open     []string // labels of the points whose interval includes 1, as the verdict needs them
	// needPair and needAll: repeats for the intervals to settle the verdict at
	// mLo and mHi, or at every point; unknown when a point cannot be estimated.
	needPair, needAll       int
	unknownPair, unknownAll bool
}

// buildCrossover compares a and b along s.
func buildCrossover(s *sweep, a, b string) (*crossoverModel, error) {
	cr, err := stats.Crossover(s.cost[a], s.cost[b])
	if err != nil {
		return nil, err
	}
	c := &crossoverModel{a: a, b: b, prs: s.pointRatios(a, b), at: cr.At, crosses: cr.Crossings}
	c.cheaper, c.other = map[string]string{"a": a, "b": b}[cr.CheaperBelow], map[string]string{"a": b, "b": a}[cr.CheaperBelow]
	c.share = float64(cr.At.Defined) / float64(max(cr.At.Resamples, 1))
	c.nMed, c.mLo, c.mHi = medianCrossings(c.prs)
	all := make([]int, len(c.prs))
	for i := range all {
		all[i] = i
	}
	c.needAll, c.unknownAll = mostNeeded(c.prs, all)
	if c.nMed > 0 {
		c.needPair, c.unknownPair = mostNeeded(c.prs, []int{c.mLo, c.mHi})
	}
	switch {
	case cr.CheaperBelow == "":
		c.verdict = crossEqual
	case c.nMed > 0 && cr.Crossings > 0 && c.share >= crossShare:
		c.verdict = crossAt
		for _, i := range []int{c.mLo, c.mHi} {
			if c.prs[i].side == 0 {
				c.open = append(c.open, c.prs[i].label)
			}
		}
	case c.nMed == 0 && cr.Crossings == 0 && allSide(c.prs) != 0:
		c.verdict = crossThroughout
		c.cheaper = map[bool]string{true: b, false: a}[allSide(c.prs) > 0]
	case c.nMed == 0 && cr.Crossings == 0:
		c.verdict = crossUnsure
		c.cheaper = map[bool]string{true: b, false: a}[firstSide(c.prs) > 0]
		for _, pr := range c.prs {
			if pr.side == 0 {
				c.open = append(c.open, pr.label)
			}
		}
	default:
		c.verdict = crossOpen
	}
	return c, nil
}

// medianCheaper is the mode cheaper at every point's median when the
// table's medians do not cross.
func (c *crossoverModel) medianCheaper() string {
	return map[int]string{1: c.b, -1: c.a}[firstSide(c.prs)]
}

// curveSLO is one mode's max rate at the SLO on a latency–throughput
// curve: the median capacity, and (ok false when no repeat gave one) the
// per-repeat rates, their median with its interval and the first bound
// any repeat had ("ge": every point held, "lt": even the lowest failed).
type curveSLO struct {
	mode     string
	capacity float64
	ok       bool
	rates    []stats.SLORate
	median   stats.Estimate
	bound    string
}

// slo computes mode's max rate at p99 ≤ sloUs.
func (c *curve) slo(mode string, sloUs float64) curveSLO {
	out := curveSLO{mode: mode, capacity: medianOf(c.points[mode], func(r *result.Record) float64 { return r.CapacityPerS })}
	rates, err := c.sloRates(mode, sloUs)
	if err != nil || len(rates) == 0 {
		return out
	}
	out.ok, out.rates = true, rates
	var v []float64
	for _, r := range rates {
		v = append(v, r.Rate)
		if r.Bound != "" && out.bound == "" {
			out.bound = r.Bound
		}
	}
	out.median = stats.Median(v)
	return out
}
