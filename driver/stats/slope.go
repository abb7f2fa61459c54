package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Slope is an ordinary least-squares line through equally spaced points.
type Slope struct {
	N      int     // points
	PerX   float64 // slope: change per unit of x
	Lo, Hi float64 // 95% interval of the slope, allowing for AR(1) residuals
	Rho    float64 // the residuals' lag-1 autocorrelation, bias-corrected, as used
	NEff   float64 // effective number of independent points, N(1-ρ)/(1+ρ)
}

// LinearSlope fits y[i] = a + b·i·step by least squares and returns b with
// its 95% interval. Successive samples of a process's memory are
// autocorrelated (its RSS wanders in allocator-sized steps that last
// minutes), and the residuals' plain standard error then excludes 0 in
// most trendless series. The interval treats the residuals as AR(1): ρ is
// their lag-1 autocorrelation plus the first-order bias of that estimate
// in a trend regression, (2+4ρ)/N; the standard error is inflated by
// √((1+ρ)/(1-ρ)), and the t quantile takes N(1-ρ)/(1+ρ) - 2 degrees of
// freedom (at least 1). In simulated 10-minute soaks (TestLinearSlope-
// Autocorrelated) this holds 0 in 93–95% of trendless series for ρ from
// 0.5 to 0.995, where the plain interval and Newey–West's with Andrews'
// bandwidth exclude it in 82% and 27% at ρ = 0.98. Written by hand: gonum's
// stat.LinearRegression returns the coefficients only. Fewer than 3 points
// give N and NaNs.
func LinearSlope(y []float64, step float64) Slope {
	n := len(y)
	s := Slope{N: n, PerX: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Rho: math.NaN(), NEff: math.NaN()}
	if n < 3 || step <= 0 {
		return s
	}
	var mx, my float64
	for i, v := range y {
		mx += float64(i) * step
		my += v
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy float64
	for i, v := range y {
		dx := float64(i)*step - mx
		sxx += dx * dx
		sxy += dx * (v - my)
	}
	b := sxy / sxx
	a := my - b*mx
	e := make([]float64, n)
	var sse float64
	for i, v := range y {
		e[i] = v - (a + b*float64(i)*step)
		sse += e[i] * e[i]
	}
	var num float64
	for i := 1; i < n; i++ {
		num += e[i] * e[i-1]
	}
	rho := 0.0
	if sse > 0 {
		rho = num / sse
		rho = min(max(rho+(2+4*rho)/float64(n), 0), 0.999)
	}
	neff := float64(n) * (1 - rho) / (1 + rho)
	se := math.Sqrt(sse/float64(n-2)/sxx) * math.Sqrt((1+rho)/(1-rho))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: max(neff-2, 1)}.Quantile(0.975)
	s.PerX, s.Lo, s.Hi, s.Rho, s.NEff = b, b-t*se, b+t*se, rho, neff
	return s
}
