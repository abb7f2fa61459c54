package report

import (
	"math"

	"wafbench/driver/stats"
)

// Every table column that states one paired ratio states it in one form:
// the geometric mean of the per-repeat paired ratios with its paired-t 95%
// interval — the statistic the verdicts test — to ratioDigits decimals,
// under a header that says so. (Paired ratios and Precision show the median
// ratio beside it, labelled as such.)
const (
	ratioDigits = 3
	// ratioHead labels a column of ratioCell values.
	ratioHead = "geo-mean of paired ratios (95% CI, paired t)"
)

// ratioCell is a comparison's ratio in the one form: "1.234 [1.100, 1.380]"
// ("1.234 [–]" below 2 pairs, withCI); "" for no comparison.
func ratioCell(c *stats.Comparison) string {
	if c == nil || c.N() == 0 || math.IsNaN(c.GeoRatio) {
		return ""
	}
	return withCI(c.GeoRatio, c.TLo, c.THi, ratioDigits)
}

// geoCell is ratioCell for per-repeat ratios that are not one of the run's
// comparisons (memory, start-up).
func geoCell(ratios []float64) string {
	geo, lo, hi, _ := stats.PairedLogT(ratios, stats.Confidence)
	return withCI(geo, lo, hi, ratioDigits)
}
