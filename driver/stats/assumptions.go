package stats

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Assumption-check constants. The checks are diagnostics printed beside a
// verdict, not tests that change it: with ~100 comparisons in a report, a
// 5 % flag rate would mark about five of them by chance, so they flag at
// CheckLevel.
const (
	// CheckLevel is the two-sided level at which a drift or order
	// correlation is flagged.
	CheckLevel = 0.01
	// CheckMinN is the smallest number of paired repeats a check runs on.
	CheckMinN = 5
)

// assumptions are the checks of a paired comparison's per-repeat log-ratios
// against what the paired t interval assumes: independent, identically
// distributed, roughly normal values.
type assumptions struct {
	// Skew is the adjusted sample skewness G1 of the log-ratios and SkewSE
	// its standard error under normality; Skewed when |Skew| > 2·SkewSE.
	Skew, SkewSE float64
	Skewed       bool
	// DriftR is Pearson's r of the log-ratio against the repeat number and
	// DriftP its two-sided p; Drifting when DriftP < CheckLevel.
	DriftR, DriftP float64
	Drifting       bool
	// OrderR is Pearson's r of the log-ratio against the position
	// difference (numerator's position − denominator's in the repeat's mode
	// order) and OrderP its p; OrderEffect when OrderP < CheckLevel. The
	// rotation balances positions, so an order effect widens the interval
	// rather than biasing it.
	OrderR, OrderP float64
	OrderEffect    bool
	// RankDisagrees: the paired t establishes a direction, n allows the
	// signed-rank test to reach Alpha, but its (unadjusted) p is ≥ Alpha.
	RankDisagrees bool
	Checked       bool // n ≥ CheckMinN; otherwise nothing was checked
}

// flags lists the failed checks in words ("skewed", "drift", "order",
// "signed-rank disagrees"); empty when none failed or none ran.
func (a assumptions) flags() []string {
	var out []string
	if a.Skewed {
		out = append(out, "skewed")
	}
	if a.Drifting {
		out = append(out, "drift")
	}
	if a.OrderEffect {
		out = append(out, "order")
	}
	if a.RankDisagrees {
		out = append(out, "signed-rank disagrees")
	}
	return out
}

// String is the flags joined by ", ", or "" when none.
func (a assumptions) String() string { return strings.Join(a.flags(), ", ") }

// checkAssumptions fills the skewness, drift and order checks of c.
// RankDisagrees is set by the verdict (it needs the Holm-adjusted p).
func checkAssumptions(c *Comparison) assumptions {
	var a assumptions
	n := len(c.Ratios)
	if n < CheckMinN {
		return a
	}
	a.Checked = true
	logs := make([]float64, n)
	for i, r := range c.Ratios {
		logs[i] = math.Log(r)
	}
	if _, sd := stat.MeanStdDev(logs, nil); sd > 0 {
		fn := float64(n)
		a.Skew = stat.Skew(logs, nil)
		a.SkewSE = math.Sqrt(6 * fn * (fn - 1) / ((fn - 2) * (fn + 1) * (fn + 3)))
		a.Skewed = math.Abs(a.Skew) > 2*a.SkewSE
	}
	reps := make([]float64, n)
	for i, r := range c.Repeats {
		reps[i] = float64(r)
	}
	a.DriftR, a.DriftP = correlationP(reps, logs)
	a.Drifting = a.DriftP < CheckLevel
	if len(c.NumPositions) == n && len(c.DenPositions) == n {
		diff := make([]float64, n)
		for i := range diff {
			diff[i] = float64(c.NumPositions[i] - c.DenPositions[i])
		}
		a.OrderR, a.OrderP = correlationP(diff, logs)
		a.OrderEffect = a.OrderP < CheckLevel
	}
	return a
}

// correlationP is Pearson's r of x and y with the two-sided p-value of the
// t-test of r = 0 (n − 2 degrees of freedom). Either series constant: r = 0,
// p = 1.
func correlationP(x, y []float64) (r, p float64) {
	n := len(x)
	if n < 3 {
		return 0, 1
	}
	_, sx := stat.MeanStdDev(x, nil)
	_, sy := stat.MeanStdDev(y, nil)
	if sx == 0 || sy == 0 || math.IsNaN(sx) || math.IsNaN(sy) {
		return 0, 1
	}
	r = stat.Correlation(x, y, nil)
	if math.Abs(r) >= 1 {
		return r, 0
	}
	df := float64(n - 2)
	t := r * math.Sqrt(df/(1-r*r))
	return r, 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(-math.Abs(t))
}

// Describe is a one-line account of the checks' figures for a report.
func (a assumptions) Describe() string {
	if !a.Checked {
		return "not checked (n < " + fmt.Sprint(CheckMinN) + ")"
	}
	return fmt.Sprintf("skew %.2f (±%.2f), drift r=%.2f p=%.3g, order r=%.2f p=%.3g", a.Skew, 2*a.SkewSE, a.DriftR, a.DriftP, a.OrderR, a.OrderP)
}
