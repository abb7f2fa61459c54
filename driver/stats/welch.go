package stats

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Ratio is a ratio of two geometric means with its interval.
type Ratio struct {
	NA, NB int     // values in each group
	Geo    float64 // geometric mean of b over geometric mean of a
	Lo, Hi float64 // its interval; NaN when it cannot be formed
}

// WelchLogRatio compares two independent groups of positive values (e.g.
// the latency percentiles of the first and of the last minute's 10-s slots
// of a soak): the ratio of b's geometric mean to a's, with Welch's t
// interval on the logs at level conf (unequal variances, Welch–Satterthwaite
// degrees of freedom). The groups are not paired: slot k of the first
// minute shares nothing with slot k of the last. Either group with fewer
// than 2 values gives NaN bounds; two groups without spread give the
// ratio as both bounds.
func WelchLogRatio(a, b []float64, conf float64) Ratio {
	r := Ratio{NA: len(a), NB: len(b), Geo: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if len(a) == 0 || len(b) == 0 {
		return r
	}
	la, lb := logsOf(a), logsOf(b)
	ma, va := stat.MeanVariance(la, nil)
	mb, vb := stat.MeanVariance(lb, nil)
	d := mb - ma
	r.Geo = math.Exp(d)
	if len(a) < 2 || len(b) < 2 {
		return r
	}
	sa, sb := va/float64(len(a)), vb/float64(len(b))
	se := math.Sqrt(sa + sb)
	if se == 0 {
		r.Lo, r.Hi = r.Geo, r.Geo
		return r
	}
	df := (sa + sb) * (sa + sb) / (sa*sa/float64(len(a)-1) + sb*sb/float64(len(b)-1))
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-conf)/2)
	r.Lo, r.Hi = math.Exp(d-q*se), math.Exp(d+q*se)
	return r
}

func logsOf(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Log(x)
	}
	return out
}
