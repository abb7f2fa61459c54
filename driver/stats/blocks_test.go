package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestRandomEffects(t *testing.T) {
	tests := []struct {
		name                    string
		groups                  [][]float64
		model                   string
		mu, se, df, tau2, sigma float64 // NaN = want NaN
		lo, hi                  float64
	}{
		// Balanced, machines differ: V = MSB/N, df = k−1 (classical).
		{"balanced", [][]float64{{0.1, 0.2, 0.3}, {0.5, 0.6, 0.7}}, "random effects",
			0.4, 0.2, 1, 0.23 / 3, 0.01, 0.4 - 12.706204736*0.2, 0.4 + 12.706204736*0.2},
		// Machine means equal: the pooled paired t of all four repeats.
		{"tau2 zero", [][]float64{{0.1, 0.3}, {0.2, 0.2}}, "pooled (τ² = 0)",
			0.2, math.Sqrt(0.02 / 3 / 4), 3, 0, 0.01, 0.2 - 3.182446305*math.Sqrt(0.02/3/4), 0.2 + 3.182446305*math.Sqrt(0.02/3/4)},
		{"one machine", [][]float64{{0.1, 0.2, 0.3}}, "one machine",
			0.2, 0.1 / math.Sqrt(3), 2, math.NaN(), 0.01, 0.2 - 4.30265273*0.1/math.Sqrt(3), 0.2 + 4.30265273*0.1/math.Sqrt(3)},
		{"one repeat per machine", [][]float64{{0.1}, {0.3}, {0.2}}, "machine means",
			0.2, 0.1 / math.Sqrt(3), 2, math.NaN(), math.NaN(), 0.2 - 4.30265273*0.1/math.Sqrt(3), 0.2 + 4.30265273*0.1/math.Sqrt(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := randomEffects(tt.groups, 0.95)
			check := func(what string, g, w float64) {
				if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && !near(g, w, 1e-6)) {
					t.Errorf("%s: got %v, want %v", what, g, w)
				}
			}
			if got.Model != tt.model {
				t.Errorf("model: got %q, want %q", got.Model, tt.model)
			}
			check("mu", got.Mu, tt.mu)
			check("se", got.SE, tt.se)
			check("df", got.DF, tt.df)
			check("tau2", got.Tau2, tt.tau2)
			check("sigma2", got.Sigma2, tt.sigma)
			check("lo", got.Lo, tt.lo)
			check("hi", got.Hi, tt.hi)
		})
	}
}

// TestRandomEffectsUnbalanced: with unequal repeats per machine the mean
// lies between the machine means, weighted toward the larger machine less
// than its share of repeats (τ² > 0 evens the weights out), and the
// Satterthwaite degrees of freedom lie between k−1 and N−1.
func TestRandomEffectsUnbalanced(t *testing.T) {
	g := [][]float64{{0.10, 0.12, 0.08, 0.11, 0.09, 0.10}, {0.30, 0.32}, {0.20, 0.18, 0.22}}
	got := randomEffects(g, 0.95)
	if got.Model != "random effects" || !(got.Tau2 > 0) {
		t.Fatalf("got model %q τ² %v, want random effects with τ² > 0", got.Model, got.Tau2)
	}
	unweighted := (0.10 + 0.31 + 0.20) / 3
	byRepeat := (0.6 + 0.62 + 0.6) / 11
	if !(got.Mu > byRepeat && got.Mu <= unweighted+1e-9) {
		t.Errorf("mu: got %v, want between the repeat-weighted %v and the machine-weighted %v", got.Mu, byRepeat, unweighted)
	}
	if got.DF < 2 || got.DF > 10 {
		t.Errorf("df: got %v, want within [k−1, N−1] = [2, 10]", got.DF)
	}
	if !(got.Lo < got.Mu && got.Mu < got.Hi) {
		t.Errorf("interval [%v, %v] does not hold mu %v", got.Lo, got.Hi, got.Mu)
	}
}

// TestAnalyseBlocks: per-machine ratios and the pooled ratio of a
// comparison whose ratio differs by machine.
func TestAnalyseBlocks(t *testing.T) {
	s := &Summary{Comparisons: []Comparison{{
		WorkloadKey: WorkloadKey{Workload: "headers", Conns: 16}, Num: "coraza", Den: "passthrough", Metric: MetricReqPerS,
		Repeats: []int{1, 2, 3, 4, 5, 6},
		Ratios:  []float64{0.10, 0.11, 0.09, 0.20, 0.21, 0.19},
	}}}
	got := AnalyseBlocks(s, [][]int{{1, 2, 3}, {4, 5, 6}})
	if len(got) != 1 {
		t.Fatalf("got %d comparisons, want 1", len(got))
	}
	c := got[0]
	if len(c.Blocks) != 2 || c.Blocks[0].N != 3 || c.Blocks[1].N != 3 || c.N != 6 {
		t.Fatalf("blocks: got %+v, want two machines of 3 repeats", c.Blocks)
	}
	if !near(c.Blocks[0].Geo, math.Cbrt(0.10*0.11*0.09), 1e-9) {
		t.Errorf("machine 0 ratio: got %v", c.Blocks[0].Geo)
	}
	if !near(c.Ratio, math.Sqrt(c.Blocks[0].Geo*c.Blocks[1].Geo), 1e-9) {
		t.Errorf("pooled ratio: got %v, want the geometric mean of the machines' %v and %v", c.Ratio, c.Blocks[0].Geo, c.Blocks[1].Geo)
	}
	if c.DF != 1 || c.Verdict != NotEstablished {
		t.Errorf("two machines: got df %v verdict %q, want df 1 and not established (t with 1 df)", c.DF, c.Verdict)
	}
	// The pooled-as-one-machine t interval is far narrower than the block
	// interval: it ignores that the machines differ.
	_, lo, hi, _ := PairedLogT(s.Comparisons[0].Ratios, Confidence)
	if !(hi-lo < c.Hi-c.Lo) {
		t.Errorf("block interval [%v, %v] not wider than the pooled one [%v, %v]", c.Lo, c.Hi, lo, hi)
	}
}
