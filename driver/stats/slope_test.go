package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLinearSlope(t *testing.T) {
	// A steady 2 per step with alternating noise: the interval holds 2 and
	// excludes 0.
	y := make([]float64, 60)
	for i := range y {
		y[i] = 100 + 2*float64(i) + float64(i%2*2-1)
	}
	s := LinearSlope(y, 1)
	if math.Abs(s.PerX-2) > 0.01 || s.Lo > 2 || s.Hi < 2 || s.Lo <= 0 {
		t.Errorf("rising series: %+v, want slope 2 with an interval around it above 0", s)
	}
	// Flat with noise: the interval includes 0.
	for i := range y {
		y[i] = 100 + float64(i%2*2-1)
	}
	if s := LinearSlope(y, 1); !(s.Lo < 0 && s.Hi > 0) {
		t.Errorf("flat series: %+v, want an interval that includes 0", s)
	}
	// Per minute from per-second samples: 1 KiB/s is 60 KiB/min.
	for i := range y {
		y[i] = float64(i)
	}
	if s := LinearSlope(y, 1.0/60); math.Abs(s.PerX-60) > 1e-9 {
		t.Errorf("step 1/60: slope %v, want 60", s.PerX)
	}
	if s := LinearSlope([]float64{1, 2}, 1); s.N != 2 || !math.IsNaN(s.PerX) {
		t.Errorf("two points: %+v, want NaN", s)
	}
}

// TestLinearSlopeAutocorrelated: memory that wanders (AR(1) noise, ρ =
// 0.98, no trend) over a 10-minute soak sampled each second. The plain
// residual error excludes 0 in most series; LinearSlope's interval must
// hold 0 in at least 90% of them, and still find a leak of 2 MiB/min.
func TestLinearSlopeAutocorrelated(t *testing.T) {
	const series, n = 200, 600
	r := rand.New(rand.NewPCG(1, 2))
	ar := func(trend float64) []float64 {
		y := make([]float64, n)
		e := 0.0
		for i := range y {
			e = 0.98*e + r.NormFloat64()*0.2
			y[i] = 100 + trend*float64(i)/60 + e
		}
		return y
	}
	naive, ours := 0, 0
	for range series {
		y := ar(0)
		s := LinearSlope(y, 1.0/60)
		if s.Lo > 0 || s.Hi < 0 {
			ours++
		}
		if plainExcludesZero(y, 1.0/60) {
			naive++
		}
	}
	if ours > series/10 {
		t.Errorf("the interval excludes 0 in %d of %d trendless series (plain error: %d)", ours, series, naive)
	}
	if naive < series/2 {
		t.Errorf("the plain error excludes 0 in only %d of %d series: the series are not autocorrelated enough to test anything", naive, series)
	}
	found := 0
	for range 20 {
		if s := LinearSlope(ar(2), 1.0/60); s.Lo > 0 {
			found++
		}
	}
	if found < 18 {
		t.Errorf("a 2 MiB/min leak found in %d of 20 series, want ≥ 18", found)
	}
}

// plainExcludesZero is the textbook OLS interval (independent residuals).
func plainExcludesZero(y []float64, step float64) bool {
	n := float64(len(y))
	var mx, my, sxx, sxy, sse float64
	for i, v := range y {
		mx += float64(i) * step / n
		my += v / n
	}
	for i, v := range y {
		dx := float64(i)*step - mx
		sxx += dx * dx
		sxy += dx * (v - my)
	}
	b := sxy / sxx
	for i, v := range y {
		e := v - (my + b*(float64(i)*step-mx))
		sse += e * e
	}
	se := math.Sqrt(sse / (n - 2) / sxx)
	return math.Abs(b) > 1.96*se
}
