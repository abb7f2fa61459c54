package stats

import (
	"math"
	"testing"
)

// TestWelchLogRatio: a ratio far outside the groups' spread has an
// interval that excludes 1, two draws of the same spread one that includes
// it; the interval matches Welch's t computed by hand for a 2 × 2 case; too
// few values give NaN bounds.
func TestWelchLogRatio(t *testing.T) {
	a := []float64{100, 110, 95, 105, 102, 98}
	b := []float64{200, 215, 190, 210, 205, 196}
	got := WelchLogRatio(a, b, 0.95)
	if got.Lo <= 1 || got.Geo < 1.9 || got.Geo > 2.1 {
		t.Errorf("doubled: got %+v, want ≈ 2 with Lo > 1", got)
	}
	same := WelchLogRatio(a, []float64{104, 97, 108, 99, 101, 96}, 0.95)
	if !(same.Lo < 1 && same.Hi > 1) {
		t.Errorf("same spread: got %+v, want an interval including 1", same)
	}
	// Logs {0, ln 2} and {ln 2, ln 4}: difference ln 2, each variance
	// (ln 2)²/2, se = ln 2 · √(1/2), df = 2, t(0.975, 2) = 4.302653.
	h := WelchLogRatio([]float64{1, 2}, []float64{2, 4}, 0.95)
	se := math.Ln2 * math.Sqrt(0.5)
	wantLo, wantHi := math.Exp(math.Ln2-4.302653*se), math.Exp(math.Ln2+4.302653*se)
	if math.Abs(h.Geo-2) > 1e-9 || math.Abs(h.Lo-wantLo) > 1e-4 || math.Abs(h.Hi-wantHi) > 1e-3 {
		t.Errorf("2 × 2: got %+v, want 2 [%.5f, %.4f]", h, wantLo, wantHi)
	}
	if one := WelchLogRatio([]float64{1}, b, 0.95); !math.IsNaN(one.Lo) || one.NA != 1 {
		t.Errorf("one value: got %+v, want NaN bounds", one)
	}
}
