package stats

import "math"

// Proportion is a binomial proportion k/n with its Wilson score interval.
type Proportion struct {
	K, N   int
	Rate   float64 // K/N; NaN when N is 0
	Lo, Hi float64 // Wilson score interval at Confidence; NaN when N is 0
}

// Wilson is k successes in n trials with the Wilson score interval at 95%
// confidence (z = 1.959964): unlike the normal approximation it stays in
// [0, 1] and keeps its coverage near 0 and 1, where block and false-positive
// rates live.
func Wilson(k, n int) Proportion {
	p := Proportion{K: k, N: n, Rate: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if n <= 0 || k < 0 || k > n {
		return p
	}
	const z = 1.959963984540054
	fn := float64(n)
	ph := float64(k) / fn
	den := 1 + z*z/fn
	centre := (ph + z*z/(2*fn)) / den
	half := z / den * math.Sqrt(ph*(1-ph)/fn+z*z/(4*fn*fn))
	p.Rate, p.Lo, p.Hi = ph, math.Max(0, centre-half), math.Min(1, centre+half)
	return p
}
