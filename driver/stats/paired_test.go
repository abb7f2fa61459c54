package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"wafbench/driver/result"
)

func TestSignedRankP(t *testing.T) {
	// Hollander & Wolfe's depression scores (R's wilcox.test example):
	// paired, V = 40, exact two-sided p = 0.03906.
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	tests := []struct {
		name string
		d    []float64
		want float64
	}{
		{"hollander-wolfe", d, 0.0390625},
		{"six positive", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, 2.0 / 64},
		{"six negative", []float64{-0.1, -0.2, -0.3, -0.4, -0.5, -0.6}, 2.0 / 64},
		{"five positive", []float64{1, 2, 3, 4, 5}, 2.0 / 32},
		// ranks 1,2,3 with signs +,−,+: W+ = 4 of 6; P(W+ ≥ 4) = 3/8.
		{"mixed", []float64{0.1, -0.2, 0.3}, 0.75},
		{"zeros dropped", []float64{0, 0, 1, 2, 3, 4, 5, 6}, 2.0 / 64},
		// all tied |d| = 1, 4 of 4 positive: P = 2·(1/16).
		{"ties", []float64{1, 1, 1, 1}, 0.125},
		{"empty", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := signedRankP(tt.d); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("SignedRankP(%v) = %v, want %v", tt.d, got, tt.want)
			}
		})
	}
	// The normal approximation above the exact limit agrees with the exact
	// distribution just below it.
	rng := rand.New(rand.NewPCG(3, 3))
	big := make([]float64, 120)
	for i := range big {
		big[i] = rng.NormFloat64() + 0.2
	}
	exact := signedRankP(big[:signedRankExactMax])
	approx := signedRankP(append(big[:signedRankExactMax:signedRankExactMax], 0)) // a zero is dropped: same data, exact
	if math.Abs(exact-approx) > 1e-12 {
		t.Errorf("zero changed the exact p: %v vs %v", exact, approx)
	}
	if p := signedRankP(big); !(p > 0 && p < 0.05) {
		t.Errorf("normal approximation p = %v for a 0.2 SD shift over 120 values, want < 0.05", p)
	}
}

// logNormalRatios draws n ratios exp(N(log(ratio), sd)).
func logNormalRatios(rng *rand.Rand, n int, ratio, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Exp(math.Log(ratio) + sd*rng.NormFloat64())
	}
	return out
}

// comparisonOf is a comparison filled from ratios alone, alone in its
// family (so PHolm = P). It skips the bootstrap and the order-statistic
// interval, which the verdict does not use, to keep simulations fast.
func comparisonOf(ratios []float64) *Comparison {
	c := &Comparison{Metric: MetricCPU, Family: FamilyEngines, Ratios: ratios}
	for i, r := range ratios {
		c.Repeats = append(c.Repeats, i+1)
		c.NumValues = append(c.NumValues, r)
		c.DenValues = append(c.DenValues, 1)
	}
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		logs[i] = math.Log(r)
	}
	c.GeoRatio, c.TLo, c.THi, c.P = PairedLogT(ratios, Confidence)
	c.PSignedRank = signedRankP(logs)
	c.Assumptions = checkAssumptions(c)
	c.PHolm, c.PSignedRankHolm = c.P, c.PSignedRank
	c.Verdict, c.Reason = verdict(c)
	return c
}

const sims = 2000

func TestPairedTCoverage(t *testing.T) {
	for _, tt := range []struct {
		name  string
		n     int
		ratio float64
		sd    float64
	}{
		{"n4 ratio1.5 sd5%", 4, 1.5, 0.05},
		{"n6 ratio0.2 sd15%", 6, 0.2, 0.15},
		{"n10 ratio1.03 sd3%", 10, 1.03, 0.03},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(tt.n)))
			covered := 0
			for range sims {
				_, lo, hi, _ := PairedLogT(logNormalRatios(rng, tt.n, tt.ratio, tt.sd), Confidence)
				if lo <= tt.ratio && tt.ratio <= hi {
					covered++
				}
			}
			if got := float64(covered) / sims; got < 0.93 || got > 0.97 {
				t.Errorf("95%% paired-t interval covered the true ratio %v in %.3f of %d simulations, want 0.93–0.97", tt.ratio, got, sims)
			}
		})
	}
}

func TestNotEstablishedAtRatioOne(t *testing.T) {
	// One comparison, true ratio 1: a verdict is a false positive, which
	// should happen at about Alpha.
	rng := rand.New(rand.NewPCG(5, 5))
	wrong := 0
	for range sims {
		c := comparisonOf(logNormalRatios(rng, 6, 1, 0.04))
		if c.Verdict != NotEstablished {
			wrong++
		}
	}
	if got := float64(wrong) / sims; got < 0.03 || got > 0.07 {
		t.Errorf("true ratio 1: established in %.3f of %d simulations, want about %g (0.03–0.07)", got, sims, Alpha)
	}
	// A family of 12 true nulls: Holm keeps the chance of any verdict at
	// or below Alpha.
	any := 0
	for range sims / 4 {
		cs := make([]Comparison, 12)
		for i := range cs {
			cs[i] = *comparisonOf(logNormalRatios(rng, 6, 1, 0.04))
		}
		holmByFamily(cs)
		for i := range cs {
			if v, _ := verdict(&cs[i]); v != NotEstablished {
				any++
				break
			}
		}
	}
	if got := float64(any) / (sims / 4); got > 0.08 {
		t.Errorf("12 true nulls in one family: some verdict in %.3f of %d simulations, want ≤ about %g", got, sims/4, Alpha)
	}
}

func TestLargeConsistentRatiosEstablish(t *testing.T) {
	// The seed suite's engine ratios (1.2–7×) at the between-process noise
	// of a noisy day (10 % per repeat) are established with 6 repeats.
	rng := rand.New(rand.NewPCG(9, 9))
	for _, ratio := range []float64{0.13, 0.3, 1.25, 1.5} {
		missed := 0
		for range 200 {
			c := comparisonOf(logNormalRatios(rng, 6, ratio, 0.10))
			want := Lower
			if ratio > 1 {
				want = Higher
			}
			if c.Verdict != want {
				missed++
			}
		}
		if missed > 20 {
			t.Errorf("ratio %v, sd 10%%, n=6: not established in %d of 200", ratio, missed)
		}
	}
}

func TestStoppingOnWidthCoverage(t *testing.T) {
	// run --precision: start with the planned repeats, add one block at a
	// time until the half-width is ≤ the target or the cap; the final
	// interval must still cover the true ratio about 95 % of the time.
	// Stopping when the sample SD happens to be low makes the interval a
	// little narrow: from 6 planned repeats coverage stays ≥ 93 % while the
	// target needs up to about twice the planned repeats (sd 4 % at ±3 %);
	// at three times (sd 6 %) it is ~92.5 % (METHODS.md), checked with a
	// wider band.
	for _, tt := range []struct {
		name      string
		planned   int
		sd, pct   float64
		maxBlocks int
		lowest    float64
	}{
		{"from 6, 3% at sd 3%", 6, 0.03, 3, 40, 0.93},
		{"from 6, 3% at sd 4%", 6, 0.04, 3, 40, 0.93},
		{"from 4, 5% at sd 3%", 4, 0.03, 5, 40, 0.93},
		{"from 6, 3% at sd 6%", 6, 0.06, 3, 60, 0.91},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(17, uint64(tt.planned)))
			const ratio = 1.4
			covered, stops := 0, 0
			for range sims {
				rs := logNormalRatios(rng, tt.planned, ratio, tt.sd)
				for {
					c := comparisonOf(rs)
					if c.HalfWidthPct() <= tt.pct || len(rs) >= tt.maxBlocks {
						if c.TLo <= ratio && ratio <= c.THi {
							covered++
						}
						stops += len(rs)
						break
					}
					rs = append(rs, logNormalRatios(rng, 1, ratio, tt.sd)...)
				}
			}
			if got := float64(covered) / sims; got < tt.lowest || got > 0.97 {
				t.Errorf("coverage after stopping on width %.3f (mean n %.1f), want %g–0.97", got, float64(stops)/sims, tt.lowest)
			}
		})
	}
}

func TestRepeatsForHalfWidth(t *testing.T) {
	// sd 3.4 %, ±3 %: t(n−1)·0.034/√n ≤ log(1.03) = 0.02956 first at n=8
	// (2.365·0.034/2.828 = 0.0284; n=7: 2.447·0.034/2.646 = 0.0314).
	if got := repeatsForHalfWidth(0.034, 3); got != 8 {
		t.Errorf("RepeatsForHalfWidth(3.4%%, 3%%) = %d, want 8", got)
	}
	if got := repeatsForHalfWidth(0, 3); got != MinSamples {
		t.Errorf("RepeatsForHalfWidth(0, 3) = %d, want %d", got, MinSamples)
	}
	if got := repeatsForHalfWidth(1, 1); got != MaxRepeats+1 {
		t.Errorf("RepeatsForHalfWidth(100%%, 1%%) = %d, want %d", got, MaxRepeats+1)
	}
}

func TestAllocate(t *testing.T) {
	cost := cost{Modes: 3, Workloads: 12, TrialS: 1.5, WarmupS: 0.4}
	tests := []struct {
		name     string
		noise    RatioNoise
		min, max float64 // window, s
	}{
		// Between-process noise dominates: the shortest window, more repeats.
		{"between dominates", RatioNoise{SDLog: 0.035, WithinVar: 2 * 0.02 * 0.02, WindowS: 4}, 2, 2},
		// All within-window noise (σw = 20 %/s): longer windows pay.
		{"within dominates", RatioNoise{SDLog: 0.1, WithinVar: 0.04, WindowS: 4}, 5, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Allocate([]RatioNoise{tt.noise}, cost, 3, Windows)
			if a.WindowS < tt.min || a.WindowS > tt.max || !a.Feasible {
				t.Errorf("Allocate = %+v, want a window of %v–%v s", a, tt.min, tt.max)
			}
			// The choice meets the target and no grid point is cheaper.
			if got := 100 * (math.Exp(tQuantile(1-Confidence, a.Repeats-1)*tt.noise.SDAt(a.WindowS)/math.Sqrt(float64(a.Repeats))) - 1); got > 3 {
				t.Errorf("predicted half-width %.2f%% > 3%%", got)
			}
			for _, w := range Windows {
				n := repeatsForHalfWidth(tt.noise.SDAt(w), 3)
				if c := float64(n) * cost.BlockS(w); c < a.WallS-1e-9 {
					t.Errorf("window %v s × %d repeats costs %.0f s < chosen %.0f s", w, n, c, a.WallS)
				}
			}
		})
	}
}

func TestComponents(t *testing.T) {
	// Two modes, 6 repeats, 4 s windows: per-second counts alternate ±2 %
	// around each window's level, and the levels differ by process.
	levels := []float64{1000, 1040, 980, 1020, 960, 1000}
	var rs []result.Record
	for i, l := range levels {
		for _, m := range []string{"passthrough", "coraza"} {
			lv := l
			if m == "coraza" {
				lv = l / 2
			}
			ps := []int64{int64(lv * 1.02), int64(lv * 0.98), int64(lv * 1.02), int64(lv * 0.98)}
			rs = append(rs, result.Record{
				Case:   result.Case{Trial: len(rs) + 1, Repeat: i + 1, Mode: m, Workload: "headers", Conns: 16},
				Window: result.Window{ReqPerS: lv, Requests: int64(lv * 4), DurationS: 4, PerSecond: ps},
				CPU:    result.CPU{UsPerRequest: 1e6 / lv},
			})
		}
	}
	s := Summarize(rs)
	c := s.component(Key{"passthrough", "headers", 16})
	if c == nil {
		t.Fatal("no component for passthrough")
	}
	wantWithin := 0.02 * math.Sqrt(4.0/3) // sample SD of ±2 % over 4 values
	if math.Abs(c.WithinCV-wantWithin) > 1e-3 || c.WindowS != 4 || c.N != 6 {
		t.Errorf("within CV %.4f over %v s (n %d), want %.4f over 4 s (n 6)", c.WithinCV, c.WindowS, c.N, wantWithin)
	}
	wantBetween := cv(levels)
	if math.Abs(c.BetweenCV-wantBetween) > 1e-9 {
		t.Errorf("between CV %v, want %v", c.BetweenCV, wantBetween)
	}
	if want := math.Sqrt(wantBetween*wantBetween - wantWithin*wantWithin/4); math.Abs(c.ProcessCV-want) > 1e-3 {
		t.Errorf("process CV %v, want %v", c.ProcessCV, want)
	}
	// The coraza/passthrough ratio is exactly 0.5 in every repeat: pairing
	// cancels the shared process level, so no between-process noise is left.
	cmp := s.Comparison("coraza", "passthrough", MetricReqPerS, WorkloadKey{"headers", 16})
	if n := s.Noise(cmp); n.SDLog > 1e-9 || n.BetweenVar() != 0 {
		t.Errorf("noise of an exact ratio: sd %v between %v, want 0", n.SDLog, n.BetweenVar())
	}
}

func TestAssumptionChecks(t *testing.T) {
	drift := []float64{1.40, 1.45, 1.50, 1.55, 1.60, 1.65, 1.70, 1.75}
	if a := comparisonOf(drift).Assumptions; !a.Drifting || a.Skewed {
		t.Errorf("steadily rising ratios: %+v, want drift and no skew", a)
	}
	outlier := []float64{1.50, 1.51, 1.49, 1.50, 1.52, 1.48, 1.50, 2.40}
	if a := comparisonOf(outlier).Assumptions; !a.Skewed {
		t.Errorf("one outlier among 8: %+v, want skewed", a)
	}
	if a := comparisonOf([]float64{1.5, 1.6, 1.4}).Assumptions; a.Checked || a.String() != "" {
		t.Errorf("n=3: %+v, want unchecked", a)
	}
	rng := rand.New(rand.NewPCG(21, 21))
	flagged := 0
	for range 500 {
		if a := comparisonOf(logNormalRatios(rng, 8, 1.5, 0.05)).Assumptions; a.Drifting {
			flagged++
		}
	}
	if flagged > 15 {
		t.Errorf("drift flagged on %d of 500 independent samples, want about %g", flagged, 500*CheckLevel)
	}
}

func TestExpandTargets(t *testing.T) {
	runModes := []string{"passthrough", "modsecurity", "coraza"}
	runWls := []string{"headers@1", "headers@16"}
	got, err := ExpandTargets("modsecurity/coraza", nil, []string{"headers@16", "json_4k@1"}, runModes, runWls)
	if err != nil || len(got) != 2 || got[0] != (result.PrecisionTarget{Ratio: "modsecurity/coraza", Metric: "req_per_s", Workload: "headers@16"}) ||
		got[1].Metric != "cpu_us_per_req" {
		t.Errorf("ExpandTargets = %v, %v", got, err)
	}
	if got, err := ExpandTargets("modsecurity/coraza", nil, nil, []string{"passthrough", "coraza"}, runWls); err != nil || len(got) != 0 {
		t.Errorf("mode not in the run: %v, %v; want none", got, err)
	}
	for _, bad := range []struct{ ratio, metric string }{{"modsecurity", ""}, {"nosuch/coraza", ""}, {"modsecurity/coraza", "rss"}} {
		var ms []string
		if bad.metric != "" {
			ms = []string{bad.metric}
		}
		if _, err := ExpandTargets(bad.ratio, ms, nil, runModes, runWls); err == nil {
			t.Errorf("ExpandTargets(%q, %v): no error", bad.ratio, ms)
		}
	}
}
