package maxrate

import (
	"math"
)

// Estimate is the rate at which a window meets the objective with
// probability one half, from every window a method probed, with its 95%
// interval.
//
// Near the limit a window's percentile passes in some windows and fails in
// others: the limit is a point on a curve of pass probability against
// rate, not a step, and "the highest rate that passed" depends on how many
// chances to fail a method gave itself (a sweep that walks up twenty rates
// stops at the first unlucky one; a bisection stops near the middle). The
// estimate fits that curve, P(pass) = 1/(1+exp(Slope·(ln rate − ln Rate))),
// to the windows' pass/fail by logistic regression with Firth's penalty (a
// finite estimate when passes and failures do not overlap), and its
// interval is the profile penalized likelihood interval of ln Rate
// (Heinze and Schemper 2002), the LD50 of dose-response analysis. Windows
// are taken as independent given their rate.
//
// Written by hand: gonum's optimisers do not give a profile-likelihood
// interval for a ratio of coefficients, and the model has two parameters.
type Estimate struct {
	Rate   float64 `json:"rate_per_s"`     // where P(pass) = 1/2, req/s
	Low    float64 `json:"low_per_s"`      // 95% interval; 0: open below the rates probed
	High   float64 `json:"high_per_s"`     // 95% interval; 0: open above the rates probed
	Slope  float64 `json:"slope"`          // steepness per unit of ln rate
	Passed int     `json:"passed_windows"` // windows that passed
	Failed int     `json:"failed_windows"` // windows that failed
}

// Contains reports whether rate lies inside e's interval (an open end
// holds every rate on its side).
func (e Estimate) Contains(rate float64) bool {
	return rate >= e.Low && (e.High == 0 || rate <= e.High)
}

// chi2 is the 95% quantile of χ² with one degree of freedom.
const chi2 = 3.841458820694124

// Fit estimates the half-pass rate from steps. It reports false when the
// windows cannot give one: all passed, all failed, or they hold fewer than
// two distinct rates.
func Fit(steps []Step) (Estimate, bool) {
	var xs []float64
	var ys []bool
	e := Estimate{}
	rates := map[float64]bool{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range steps {
		if !(s.Rate > 0) || s.ClientBound && !s.Pass && s.Errors == 0 {
			continue // a client-bound window is no verdict on the proxy
		}
		x := math.Log(s.Rate)
		xs, ys = append(xs, x), append(ys, s.Pass)
		rates[s.Rate] = true
		lo, hi = math.Min(lo, x), math.Max(hi, x)
		if s.Pass {
			e.Passed++
		} else {
			e.Failed++
		}
	}
	if e.Passed == 0 || e.Failed == 0 || len(rates) < 2 {
		return e, false
	}
	// Centre x so that the slope's scan does not depend on the rates'
	// magnitude; θ is ln Rate less the centre.
	mid := (lo + hi) / 2
	for i := range xs {
		xs[i] -= mid
	}
	m := &fitModel{x: xs, y: ys}
	// The profile over a grid of θ, from a quarter of the lowest rate to
	// four times the highest: an interval that reaches an end is open.
	from, to := lo-mid-math.Log(4), hi-mid+math.Log(4)
	const n = 200
	best, bestP := 0.0, math.Inf(-1)
	prof := make([]float64, n+1)
	for i := 0; i <= n; i++ {
		th := from + (to-from)*float64(i)/n
		prof[i], _ = m.profile(th)
		if prof[i] > bestP {
			best, bestP = th, prof[i]
		}
	}
	// Refine the maximum between the grid's neighbours.
	step := (to - from) / n
	best = golden(func(th float64) float64 { p, _ := m.profile(th); return p }, math.Max(from, best-step), math.Min(to, best+step))
	bestP, slope := m.profile(best)
	cut := bestP - chi2/2
	inside := func(th float64) bool { p, _ := m.profile(th); return p >= cut }
	e.Rate, e.Slope = math.Exp(best+mid), slope
	// Each end: the last grid point inside, then bisection to the crossing.
	i0 := int(math.Round((best - from) / step))
	lowTh, highTh := math.NaN(), math.NaN()
	for i := i0; i >= 0; i-- {
		if prof[i] < cut {
			lowTh = bisectCross(inside, from+float64(i)*step, math.Min(best, from+float64(i+1)*step))
			break
		}
	}
	for i := i0; i <= n; i++ {
		if prof[i] < cut {
			highTh = bisectCross(inside, from+float64(i)*step, math.Max(best, from+float64(i-1)*step))
			break
		}
	}
	if !math.IsNaN(lowTh) {
		e.Low = math.Exp(lowTh + mid)
	}
	if !math.IsNaN(highTh) {
		e.High = math.Exp(highTh + mid)
	}
	return e, true
}

// fitModel holds the windows: centred ln rate and pass.
type fitModel struct {
	x []float64
	y []bool
}

// penalized is the log-likelihood plus Firth's ½ log det I at
// logit P(pass) = b·(θ − x), I the Fisher information of the linear
// parameters (intercept, slope on x).
func (m *fitModel) penalized(th, b float64) float64 {
	var ll, s0, s1, s2 float64
	for i, x := range m.x {
		eta := b * (th - x)
		// log P(y) without overflow: −log(1+e^(∓η)).
		if m.y[i] {
			ll -= softplus(-eta)
		} else {
			ll -= softplus(eta)
		}
		p := 1 / (1 + math.Exp(-eta))
		w := p * (1 - p)
		s0, s1, s2 = s0+w, s1+w*x, s2+w*x*x
	}
	det := s0*s2 - s1*s1
	if !(det > 0) {
		return math.Inf(-1)
	}
	return ll + 0.5*math.Log(det)
}

// profile maximises the penalized likelihood over the slope b > 0 at θ,
// returning the maximum and the slope that gives it.
func (m *fitModel) profile(th float64) (float64, float64) {
	f := func(lb float64) float64 { return m.penalized(th, math.Exp(lb)) }
	// A scan of ln b over slopes from 0.01 to 10⁵ per unit ln rate (a
	// 5% step in rate then moves the logit by 0.0005 to 5000), then a
	// golden refinement around the best point.
	const lo, hi, n = -4.6, 11.5, 24
	best, bestV := lo, math.Inf(-1)
	for i := 0; i <= n; i++ {
		lb := lo + (hi-lo)*float64(i)/n
		if v := f(lb); v > bestV {
			best, bestV = lb, v
		}
	}
	d := (hi - lo) / n
	lb := golden(f, math.Max(lo, best-d), math.Min(hi, best+d))
	if v := f(lb); v > bestV {
		best, bestV = lb, v
	}
	return bestV, math.Exp(best)
}

// softplus is log(1+e^v), without overflow.
func softplus(v float64) float64 {
	if v > 30 {
		return v
	}
	return math.Log1p(math.Exp(v))
}

// golden maximises a unimodal f on [a, b].
func golden(f func(float64) float64, a, b float64) float64 {
	const g = 0.6180339887498949
	c, d := b-g*(b-a), a+g*(b-a)
	fc, fd := f(c), f(d)
	for i := 0; i < 60 && b-a > 1e-7; i++ {
		if fc >= fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			fd = f(d)
		}
	}
	return (a + b) / 2
}

// bisectCross finds where inside changes between out (outside) and in
// (inside).
func bisectCross(inside func(float64) bool, out, in float64) float64 {
	for i := 0; i < 50 && math.Abs(in-out) > 1e-7; i++ {
		mid := (out + in) / 2
		if inside(mid) {
			in = mid
		} else {
			out = mid
		}
	}
	return (out + in) / 2
}
