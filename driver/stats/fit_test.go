package stats

import (
	"math"
	"testing"
)

// synthetic is y = a·x^k with a deterministic multiplicative wobble per
// repeat (±spread), so fits and intervals are exact to compute and never
// depend on timing.
func synthetic(xs []float64, a, k, spread float64, repeats int) Curve {
	c := Curve{X: xs}
	for r := 0; r < repeats; r++ {
		row := make([]float64, len(xs))
		for i, x := range xs {
			w := 1 + spread*float64((r*5+i*3)%7-3)/3
			row[i] = a * math.Pow(x, k) * w
		}
		c.Y = append(c.Y, row)
	}
	return c
}

var sizes = []float64{256, 1024, 4096, 16384, 65536, 262144}

func TestFitPowerLaw(t *testing.T) {
	tests := []struct {
		name string
		k, a float64
	}{
		{"linear", 1, 0.05},
		{"sublinear", 0.5, 3},
		{"superlinear", 1.7, 1e-4},
		{"flat", 0, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ys := make([]float64, len(sizes))
			for i, x := range sizes {
				ys[i] = tt.a * math.Pow(x, tt.k)
			}
			got, err := FitPowerLaw(sizes, ys)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Slope-tt.k) > 1e-9 || math.Abs(got.at(4096)-ys[2]) > 1e-6*ys[2] {
				t.Errorf("got slope %v, at(4096) %v; want %v, %v", got.Slope, got.at(4096), tt.k, ys[2])
			}
		})
	}
	if _, err := FitPowerLaw([]float64{0, 1}, []float64{1, 1}); err != errTooFewPoints {
		t.Errorf("one usable point: got %v, want ErrTooFewPoints", err)
	}
}

func TestExponentInterval(t *testing.T) {
	for _, k := range []float64{0.8, 1.0, 1.3} {
		c := synthetic(sizes, 0.02, k, 0.05, 6)
		fit, iv, err := Exponent(c)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(fit.Slope-k) > 0.02 {
			t.Errorf("k=%v: got slope %v", k, fit.Slope)
		}
		if !(iv.Lo <= k && k <= iv.Hi) || iv.Hi-iv.Lo > 0.1 || iv.Defined != FitResamples {
			t.Errorf("k=%v: got interval [%v, %v] (%d of %d defined), want a narrow one around k", k, iv.Lo, iv.Hi, iv.Defined, iv.Resamples)
		}
		again, iv2, _ := Exponent(c)
		if again != fit || !(iv2.Lo == iv.Lo && iv2.Hi == iv.Hi) {
			t.Errorf("k=%v: two runs differ", k)
		}
	}
}

func TestCrossover(t *testing.T) {
	// a = 600 + 0.02·x (fixed cost dominates), b = 300 + 0.2·x: b is
	// cheaper below x = 300/0.18 ≈ 1667 bytes, a above.
	xs := sizes
	mk := func(fixed, perByte float64) Curve {
		c := Curve{X: xs}
		for r := 0; r < 5; r++ {
			row := make([]float64, len(xs))
			for i, x := range xs {
				row[i] = (fixed + perByte*x) * (1 + 0.01*float64((r+i)%3-1))
			}
			c.Y = append(c.Y, row)
		}
		return c
	}
	a, b := mk(600, 0.02), mk(300, 0.2)
	got, err := Crossover(a, b)
	if err != nil {
		t.Fatal(err)
	}
	// The interpolation is in ln x between 1k and 4k: within that bracket.
	if got.CheaperBelow != "b" || got.Crossings != 1 || !(got.At.Value > 1024 && got.At.Value < 4096) {
		t.Errorf("got %+v, want b cheaper below one crossing between 1k and 4k", got)
	}
	if !(got.At.Lo <= got.At.Value && got.At.Value <= got.At.Hi) || got.At.Defined != FitResamples {
		t.Errorf("interval [%v, %v] (%d defined) should hold %v", got.At.Lo, got.At.Hi, got.At.Defined, got.At.Value)
	}
	none, _ := Crossover(mk(100, 0.01), b)
	if none.Crossings != 0 || !math.IsNaN(none.At.Value) || none.CheaperBelow != "a" {
		t.Errorf("a cheaper everywhere: got %+v", none)
	}
	// From an empty body (x = 0) the crossing is interpolated linearly:
	// ln(a/b) = +ln 2 at 0 and −ln 2 at 256 crosses at 128.
	zero := Curve{X: []float64{0, 256, 1024}, Y: [][]float64{{200, 100, 100}}}
	other := Curve{X: zero.X, Y: [][]float64{{100, 200, 300}}}
	if z, _ := Crossover(zero, other); math.Abs(z.At.Value-128) > 1e-9 || z.CheaperBelow != "b" {
		t.Errorf("crossing after x = 0: got %+v, want 128 with b cheaper below", z)
	}
	if _, err := Crossover(a, Curve{X: xs[:2], Y: b.Y}); err == nil {
		t.Error("curves of different shape: want an error")
	}
}

func TestMaxRateAtSLO(t *testing.T) {
	const slo = 10000 // µs
	pt := func(off, ach, p99 float64) LoadPoint { return LoadPoint{Offered: off, Achieved: ach, P99Us: p99} }
	tests := []struct {
		name  string
		pts   []LoadPoint
		want  float64
		bound string
	}{
		// p99 from 1000 µs to 100000 µs between 800 and 900 req/s: the
		// SLO (10000) sits halfway in ln p99.
		{"interpolated", []LoadPoint{pt(900, 880, 100000), pt(100, 100, 800), pt(800, 800, 1000)}, 850, ""},
		{"all hold", []LoadPoint{pt(100, 100, 900), pt(200, 199, 950)}, 200, "ge"},
		{"none hold", []LoadPoint{pt(100, 100, 20000), pt(200, 200, 30000)}, 100, "lt"},
		// 300 req/s kept p99 low but achieved only 200: the curve ends at 200.
		{"behind rate", []LoadPoint{pt(100, 100, 900), pt(200, 200, 1000), pt(300, 200, 1200)}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MaxRateAtSLO(tt.pts, slo)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Rate-tt.want) > 1e-9 || got.Bound != tt.bound {
				t.Errorf("got %+v, want rate %v bound %q", got, tt.want, tt.bound)
			}
		})
	}
	if _, err := MaxRateAtSLO([]LoadPoint{pt(1, 1, 1)}, 0); err == nil {
		t.Error("SLO 0: want an error")
	}
}
