package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Slope is an ordinary least-squares line through equally spaced points.
type Slope struct {
	N      int     // points
	PerX   float64 // slope: change per unit of x
	Lo, Hi float64 // 95% t interval of the slope (N-2 degrees of freedom)
}

// LinearSlope fits y[i] = a + b·i·step by least squares and returns b with
// its 95% interval from the residuals' standard error. Written by hand for
// the interval: gonum's stat.LinearRegression returns the coefficients
// only. Successive samples of a process's memory are autocorrelated, so
// the interval is optimistic; a report saying "leak" on it says so. Fewer
// than 3 points give N and NaNs.
func LinearSlope(y []float64, step float64) Slope {
	n := len(y)
	s := Slope{N: n, PerX: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
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
	var sse float64
	for i, v := range y {
		r := v - (a + b*float64(i)*step)
		sse += r * r
	}
	se := math.Sqrt(sse / float64(n-2) / sxx)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(0.975)
	s.PerX, s.Lo, s.Hi = b, b-t*se, b+t*se
	return s
}
