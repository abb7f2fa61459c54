package stats

import (
	"math"
	"testing"
)

func TestWilson(t *testing.T) {
	// Reference values: Wilson (1927) score interval, z = 1.96, as
	// tabulated by Newcombe (1998), Statistics in Medicine 17:857, table I.
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0, 0.1611},
		{1, 29, 0.0061, 0.1718},
	} {
		got := Wilson(tc.k, tc.n)
		if math.Abs(got.Lo-tc.lo) > 5e-4 || math.Abs(got.Hi-tc.hi) > 5e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, got.Lo, got.Hi, tc.lo, tc.hi)
		}
	}
	if got := Wilson(0, 0); !math.IsNaN(got.Rate) || !math.IsNaN(got.Lo) {
		t.Errorf("Wilson(0, 0) = %+v, want NaN", got)
	}
}
