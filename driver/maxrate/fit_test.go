package maxrate

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// curve draws a window at rate from a logistic pass curve with half-pass
// rate r50 and slope b per unit ln rate.
func curve(rng *rand.Rand, r50, b, rate float64) Step {
	p := 1 / (1 + math.Exp(b*(math.Log(rate)-math.Log(r50))))
	return Step{Window: Window{Rate: rate}, Pass: rng.Float64() < p}
}

// TestFitCoverage draws 300 data sets of 35 windows (seven rates around
// the half-pass rate, five windows each) from a known pass curve: the 95%
// interval holds the true rate in 92–99% of them (the penalized profile
// interval is conservative with few windows: 0.97–1.0 at three windows a
// rate, near 0.95 at eight), and the median estimate is within 1% of it.
// A wrong likelihood, penalty or cut fails one or the other.
func TestFitCoverage(t *testing.T) {
	const r50, b, sets = 1000.0, 40.0, 300
	rng := rand.New(rand.NewPCG(1, 2))
	var covered, fitted int
	var ests []float64
	for range sets {
		var steps []Step
		for r := 850.0; r <= 1150; r += 50 {
			for range 5 {
				steps = append(steps, curve(rng, r50, b, r))
			}
		}
		e, ok := Fit(steps)
		if !ok {
			continue
		}
		fitted++
		ests = append(ests, e.Rate)
		if e.Contains(r50) {
			covered++
		}
		if !(e.Low <= e.Rate && (e.High == 0 || e.Rate <= e.High)) {
			t.Fatalf("estimate %v outside its interval [%v, %v]", e.Rate, e.Low, e.High)
		}
	}
	if fitted < sets*99/100 {
		t.Fatalf("fitted %d of %d data sets", fitted, sets)
	}
	cov := float64(covered) / float64(fitted)
	t.Logf("coverage %.3f", cov)
	if cov < 0.92 || cov > 0.99 {
		t.Errorf("coverage %.3f of %d, want 0.92–0.99 for a 95%% interval", cov, fitted)
	}
	sort.Float64s(ests)
	if med := ests[len(ests)/2]; math.Abs(med/r50-1) > 0.01 {
		t.Errorf("median estimate %v, want within 1%% of %v", med, r50)
	}
}

// TestFitSeparated: every window below 1000 req/s passes and every one at
// or above fails (no overlap, where the plain maximum-likelihood slope is
// infinite): the penalized estimate lies between the last pass and the
// first failure, and its interval holds both.
func TestFitSeparated(t *testing.T) {
	var steps []Step
	for _, r := range []float64{100, 200, 400, 800, 900, 950} {
		steps = append(steps, Step{Window: Window{Rate: r}, Pass: true}, Step{Window: Window{Rate: r}, Pass: true})
	}
	for _, r := range []float64{1000, 1600} {
		steps = append(steps, Step{Window: Window{Rate: r}}, Step{Window: Window{Rate: r}})
	}
	e, ok := Fit(steps)
	if !ok || !(950 < e.Rate && e.Rate < 1000) || !(e.Low < 950 && e.High > 1000) || e.Passed != 12 || e.Failed != 4 {
		t.Errorf("got %+v %v, want a rate in (950, 1000) with both inside its interval, 12 passed, 4 failed", e, ok)
	}
}

// TestFitUndefined: no half-pass rate from windows that all passed, all
// failed, or sit at one rate.
func TestFitUndefined(t *testing.T) {
	pass := Step{Window: Window{Rate: 100}, Pass: true}
	fail := Step{Window: Window{Rate: 100}}
	for name, steps := range map[string][]Step{
		"all pass":   {pass, {Window: Window{Rate: 200}, Pass: true}},
		"all fail":   {fail, {Window: Window{Rate: 200}}},
		"one rate":   {pass, fail, pass},
		"no windows": nil,
	} {
		if e, ok := Fit(steps); ok {
			t.Errorf("%s: got %+v, want no estimate", name, e)
		}
	}
}
