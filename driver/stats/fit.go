package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Growth analysis: how a cost grows with a swept parameter (body size,
// argument count, connections) and where two engines' costs cross, with
// percentile-bootstrap intervals over repeats; and the highest offered rate
// that holds a latency objective.

// FitResamples is the number of bootstrap resamples of Exponent and
// Crossover.
const FitResamples = 2000

// PowerFit is the least-squares line through (ln x, ln y): y ≈ e^Intercept ·
// x^Slope. Slope is the cost exponent: 1 is linear growth, above 1 faster
// than linear.
type PowerFit struct {
	Slope, Intercept float64
	N                int     // points fitted
	R2               float64 // coefficient of determination on the log scale
}

// at is the fitted value at x.
func (f PowerFit) at(x float64) float64 { return math.Exp(f.Intercept + f.Slope*math.Log(x)) }

// errTooFewPoints reports a fit with fewer than two usable points.
var errTooFewPoints = errors.New("fewer than two points with x > 0 and y > 0")

// FitPowerLaw fits y ≈ a·x^k by least squares on the log–log scale. Points
// with x ≤ 0, y ≤ 0 or NaN are left out.
func FitPowerLaw(x, y []float64) (PowerFit, error) {
	var lx, ly []float64
	for i := range x {
		if x[i] > 0 && y[i] > 0 && !math.IsInf(y[i], 0) {
			lx, ly = append(lx, math.Log(x[i])), append(ly, math.Log(y[i]))
		}
	}
	n := float64(len(lx))
	if len(lx) < 2 {
		return PowerFit{N: len(lx)}, errTooFewPoints
	}
	mx, my := mean(lx), mean(ly)
	var sxx, sxy, syy float64
	for i := range lx {
		dx, dy := lx[i]-mx, ly[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return PowerFit{N: len(lx)}, fmt.Errorf("all %d points at one x", len(lx))
	}
	f := PowerFit{Slope: sxy / sxx, N: int(n)}
	f.Intercept = my - f.Slope*mx
	f.R2 = 1
	if syy > 0 {
		f.R2 = sxy * sxy / (sxx * syy)
	}
	return f, nil
}

// Curve is one quantity measured at the points X of a sweep in each
// repeat: Y[r][i] is its value at X[i] in repeat r; NaN where that repeat
// has none (a failed trial, or a marginal cost that came out ≤ 0).
type Curve struct {
	X []float64
	Y [][]float64
}

// Medians is the median over repeats at each X, ignoring NaN (NaN where no
// repeat has a value).
func (c Curve) Medians() []float64 { return c.mediansOf(identity(len(c.Y))) }

func identity(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func (c Curve) mediansOf(repeats []int) []float64 {
	out := make([]float64, len(c.X))
	for i := range c.X {
		var v []float64
		for _, r := range repeats {
			if y := c.Y[r][i]; !math.IsNaN(y) {
				v = append(v, y)
			}
		}
		out[i] = math.NaN()
		if len(v) > 0 {
			sort.Float64s(v)
			out[i] = medianSorted(v)
		}
	}
	return out
}

// Interval is a point estimate with a percentile-bootstrap interval at
// Confidence over repeats. Defined counts the resamples in which the
// quantity existed (a crossover may not); Lo and Hi are NaN when fewer
// than half did.
type Interval struct {
	Value, Lo, Hi float64
	Repeats       int // repeats resampled
	Resamples     int
	Defined       int
}

// resample calls f on FitResamples bootstrap resamples of the repeats of
// n, with a fixed seed, and collects the values where f reports one.
func resample(n int, f func(repeats []int) (float64, bool)) (vals []float64) {
	rng := rand.New(rand.NewPCG(BootstrapSeed, 0x9e3779b97f4a7c15))
	idx := make([]int, n)
	for b := 0; b < FitResamples; b++ {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		if v, ok := f(idx); ok {
			vals = append(vals, v)
		}
	}
	return vals
}

func interval(value float64, repeats int, vals []float64) Interval {
	iv := Interval{Value: value, Lo: math.NaN(), Hi: math.NaN(), Repeats: repeats, Resamples: FitResamples, Defined: len(vals)}
	if len(vals) >= FitResamples/2 {
		sort.Float64s(vals)
		iv.Lo = quantileSorted(vals, Alpha/2)
		iv.Hi = quantileSorted(vals, 1-Alpha/2)
	}
	return iv
}

// quantileSorted is the q-quantile of ascending v by linear interpolation.
func quantileSorted(v []float64, q float64) float64 {
	if len(v) == 1 {
		return v[0]
	}
	h := q * float64(len(v)-1)
	i := int(math.Floor(h))
	if i >= len(v)-1 {
		return v[len(v)-1]
	}
	return v[i] + (h-float64(i))*(v[i+1]-v[i])
}

// Exponent fits the power law through the medians over repeats of c and
// bootstraps its slope by resampling whole repeats (each repeat's curve
// stays together). The fit is on the log–log scale; points whose median
// is NaN or ≤ 0 are left out.
func Exponent(c Curve) (PowerFit, Interval, error) {
	fit, err := FitPowerLaw(c.X, c.Medians())
	if err != nil {
		return fit, Interval{}, err
	}
	vals := resample(len(c.Y), func(rs []int) (float64, bool) {
		f, err := FitPowerLaw(c.X, c.mediansOf(rs))
		return f.Slope, err == nil
	})
	return fit, interval(fit.Slope, len(c.Y), vals), nil
}

// crossing is where the costs of two modes cross along a sweep.
type crossing struct {
	// At is the x where the median log ratio a/b changes sign first,
	// interpolated linearly in ln x between the two points around it
	// (linearly in x when the lower one is x = 0), with
	// its bootstrap interval; NaN Value when it never changes sign.
	At Interval
	// CheaperBelow is "a" or "b": the mode that is cheaper below At (or
	// everywhere when there is no crossing); "" when they are equal.
	CheaperBelow string
	// Crossings counts sign changes of the median log ratio (more than one
	// means the curves cross back).
	Crossings int
}

// Crossover finds where a becomes cheaper than b or the reverse. a and b
// are paired by repeat (same X, same repeat blocks); the bootstrap
// resamples repeats, keeping pairs together.
func Crossover(a, b Curve) (crossing, error) {
	if len(a.X) != len(b.X) || len(a.Y) != len(b.Y) {
		return crossing{}, fmt.Errorf("crossover: curves differ in shape (%d×%d and %d×%d)", len(a.Y), len(a.X), len(b.Y), len(b.X))
	}
	ratio := Curve{X: a.X, Y: make([][]float64, len(a.Y))}
	for r := range a.Y {
		ratio.Y[r] = make([]float64, len(a.X))
		for i := range a.X {
			ratio.Y[r][i] = math.NaN()
			if a.Y[r][i] > 0 && b.Y[r][i] > 0 {
				ratio.Y[r][i] = math.Log(a.Y[r][i] / b.Y[r][i])
			}
		}
	}
	x0, n, first := firstCrossing(a.X, ratio.Medians())
	out := crossing{Crossings: n}
	// The log ratio a/b starts positive when a costs more at small x.
	switch {
	case first > 0:
		out.CheaperBelow = "b"
	case first < 0:
		out.CheaperBelow = "a"
	}
	vals := resample(len(a.Y), func(rs []int) (float64, bool) {
		x, k, _ := firstCrossing(a.X, ratio.mediansOf(rs))
		return x, k > 0
	})
	out.At = interval(x0, len(a.Y), vals)
	return out, nil
}

// firstCrossing returns the first x where d (ln a/b at each x) changes
// sign, the number of sign changes, and the sign of d at the first point
// that has one. Between x = 0 (an empty body) and the next point, which
// ln x cannot span, the interpolation is linear in x.
func firstCrossing(x, d []float64) (at float64, changes int, first float64) {
	at = math.NaN()
	prev := -1
	for i := range d {
		if math.IsNaN(d[i]) || x[i] < 0 || d[i] == 0 {
			continue
		}
		if prev < 0 {
			first = math.Copysign(1, d[i])
			prev = i
			continue
		}
		if (d[prev] > 0) != (d[i] > 0) {
			if changes == 0 {
				t := d[prev] / (d[prev] - d[i])
				if x[prev] <= 0 {
					at = x[prev] + t*(x[i]-x[prev])
				} else {
					l0, l1 := math.Log(x[prev]), math.Log(x[i])
					at = math.Exp(l0 + t*(l1-l0))
				}
			}
			changes++
		}
		prev = i
	}
	return at, changes, first
}

// LoadPoint is one offered rate of a latency–throughput curve in one
// repeat.
type LoadPoint struct {
	Offered  float64 // req/s asked for
	Achieved float64 // req/s completed
	P99Us    float64
}

// HeldFraction is the share of the offered rate a point must achieve to
// count as holding it.
const HeldFraction = 0.95

// holds reports whether p met the objective: p99 ≤ sloUs and at least
// HeldFraction of the offered rate achieved.
func (p LoadPoint) holds(sloUs float64) bool {
	return p.P99Us > 0 && p.P99Us <= sloUs && p.Achieved >= HeldFraction*p.Offered
}

// SLORate is the highest offered rate of one repeat's curve that holds a
// p99 objective.
type SLORate struct {
	Rate float64
	// Bound is "" when Rate is interpolated between the last point that
	// held and the first that did not; "ge" when every point held (the
	// true maximum is at least Rate), "lt" when none did (Rate is the
	// lowest offered rate, which already failed).
	Bound string
}

// MaxRateAtSLO walks the points of one repeat in increasing offered rate
// and returns the rate at which p99 reaches sloUs: interpolated in ln p99
// between the last point of the prefix that holds the objective and the
// next point. A point that does not achieve HeldFraction of its offered
// rate fails regardless of its p99.
func MaxRateAtSLO(points []LoadPoint, sloUs float64) (SLORate, error) {
	if sloUs <= 0 {
		return SLORate{}, fmt.Errorf("slo: want > 0 µs, got %g", sloUs)
	}
	ps := append([]LoadPoint(nil), points...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Offered < ps[j].Offered })
	if len(ps) == 0 {
		return SLORate{}, errors.New("no load points")
	}
	if !ps[0].holds(sloUs) {
		return SLORate{Rate: ps[0].Offered, Bound: "lt"}, nil
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].holds(sloUs) {
			continue
		}
		lo, hi := ps[i-1], ps[i]
		// Interpolate in ln p99 where the latency rises through the SLO;
		// a point that failed on throughput alone ends the curve at lo.
		if hi.P99Us <= sloUs || lo.P99Us <= 0 {
			return SLORate{Rate: lo.Offered}, nil
		}
		t := (math.Log(sloUs) - math.Log(lo.P99Us)) / (math.Log(hi.P99Us) - math.Log(lo.P99Us))
		return SLORate{Rate: lo.Offered + t*(hi.Offered-lo.Offered)}, nil
	}
	return SLORate{Rate: ps[len(ps)-1].Offered, Bound: "ge"}, nil
}
