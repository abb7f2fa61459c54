package stats

import (
	"math"
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
