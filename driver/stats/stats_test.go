package stats

import (
	"math"
	"slices"
	"strings"
	"testing"

	"wafbench/driver/result"
)

func TestMedianKnownSample(t *testing.T) {
	// 10 values, shuffled. The 95 % order-statistic CI of the median for
	// n=10 is (x(2), x(9)) with coverage 1 − 2·(1+10)/2¹⁰.
	in := []float64{70, 20, 100, 40, 10, 90, 30, 60, 80, 50}
	orig := slices.Clone(in)
	got := Median(in)
	if got.N != 10 || got.Median != 55 || got.Lo != 20 || got.Hi != 90 {
		t.Fatalf("Median = n %d, %v [%v, %v]; want n 10, 55 [20, 90]", got.N, got.Median, got.Lo, got.Hi)
	}
	if want := 1 - 2*11.0/1024; math.Abs(got.Confidence-want) > 1e-12 {
		t.Errorf("Confidence = %v, want %v", got.Confidence, want)
	}
	if !slices.Equal(in, orig) {
		t.Errorf("Median modified its input: %v", in)
	}
	if got, want := got.HalfWidthPct(), 100*35/55.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("HalfWidthPct = %v, want %v", got, want)
	}
}

func TestMedianTooSmallForCI(t *testing.T) {
	got := Median([]float64{3, 1, 2, 5, 4})
	// benchmath needs n ≥ 6 at 95 %; for n=5 one bound is infinite.
	if got.Median != 3 || !(math.IsInf(got.Lo, -1) || math.IsInf(got.Hi, 1)) {
		t.Fatalf("Median(n=5) = %v [%v, %v]; want 3 with an infinite bound", got.Median, got.Lo, got.Hi)
	}
	if !math.IsInf(got.HalfWidthPct(), 1) || got.PrecisionMet() {
		t.Errorf("HalfWidthPct = %v, PrecisionMet = %v; want +Inf, false", got.HalfWidthPct(), got.PrecisionMet())
	}
}

func TestPrecisionMet(t *testing.T) {
	v := []float64{1000, 1001, 999, 1002, 998, 1000, 1001, 999, 1003, 997}
	if e := Median(v); !e.PrecisionMet() {
		t.Errorf("±%.2f%% should meet the ±%g%% target", e.HalfWidthPct(), PrecisionTargetPct)
	}
}

func TestHolm(t *testing.T) {
	tests := []struct {
		name string
		p    []float64
		want []float64
	}{
		{"four", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		{"capped", []float64{0.5, 0.6}, []float64{1, 1}},
		{"one", []float64{0.02}, []float64{0.02}},
		{"empty", nil, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Holm(tt.p)
			if len(got) != len(tt.want) {
				t.Fatalf("Holm(%v) = %v, want %v", tt.p, got, tt.want)
			}
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-12 {
					t.Fatalf("Holm(%v) = %v, want %v", tt.p, got, tt.want)
				}
			}
		})
	}
}

func TestMinPAndRepeatsNeeded(t *testing.T) {
	if got, want := minP(3, 3), 0.1; math.Abs(got-want) > 1e-12 {
		t.Errorf("MinP(3,3) = %v, want %v", got, want)
	}
	if got, want := minP(5, 5), 2/252.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("MinP(5,5) = %v, want %v", got, want)
	}
	// m=1: MinP(4,4)=0.0286 < 0.05. m=18: need MinP < 0.00278 → n=6 (0.00216).
	// m=100: MinP(7,7)·100 = 0.058 → n=8.
	for _, tt := range []struct{ m, want int }{{1, 4}, {18, 6}, {100, 8}} {
		if got := repeatsNeeded(tt.m); got != tt.want {
			t.Errorf("RepeatsNeeded(%d) = %d, want %d", tt.m, got, tt.want)
		}
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	v := []float64{0.91, 0.95, 0.88, 1.02, 0.97, 0.93, 0.90}
	lo1, hi1 := BootstrapMedianCI(v, BootstrapSeed, BootstrapResamples, Confidence)
	lo2, hi2 := BootstrapMedianCI(v, BootstrapSeed, BootstrapResamples, Confidence)
	if lo1 != lo2 || hi1 != hi2 {
		t.Fatalf("same seed gave [%v, %v] then [%v, %v]", lo1, hi1, lo2, hi2)
	}
	med := Median(v).Median
	if !(lo1 <= med && med <= hi1) || lo1 < 0.88 || hi1 > 1.02 {
		t.Errorf("bootstrap CI [%v, %v] should lie within the sample and hold the median %v", lo1, hi1, med)
	}
	if lo, hi := BootstrapMedianCI([]float64{4}, 1, 100, 0.95); lo != 4 || hi != 4 {
		t.Errorf("n=1: [%v, %v], want [4, 4]", lo, hi)
	}
}

// recs builds valid records of one workload: vals[mode][i] is the req/s of
// repeat i+1; CPU µs/req and p99 are derived so that a faster mode is also
// cheaper and quicker.
func recs(vals map[string][]float64) []result.Record {
	var out []result.Record
	trial := 0
	for _, m := range []string{"passthrough", "modsecurity", "coraza"} {
		for i, v := range vals[m] {
			trial++
			out = append(out, result.Record{
				Case: result.Case{Trial: trial, Repeat: i + 1, Mode: m, Workload: "headers", Conns: 16},
				Window: result.Window{
					ReqPerS: v, Requests: int64(v * 10), DurationS: 10,
					Latency: result.Latency{P99Us: 16e6 / v},
				},
				CPU: result.CPU{UsPerRequest: 1e6 / v},
			})
		}
	}
	return out
}

func jitter(base float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = base * (1 + 0.002*float64(i%5-2))
	}
	return out
}

func findCmp(t *testing.T, s *Summary, num, den string, m metric) Comparison {
	t.Helper()
	for _, c := range s.Comparisons {
		if c.Num == num && c.Den == den && c.Metric == m {
			return c
		}
	}
	t.Fatalf("no comparison %s/%s %s in %d", num, den, m, len(s.Comparisons))
	return Comparison{}
}

func TestVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		vals   map[string][]float64
		num    string
		metric metric
		want   string
		reason string
	}{
		{"clear faster", map[string][]float64{"passthrough": jitter(1000, 10), "coraza": jitter(2000, 10)}, "coraza", MetricReqPerS, Faster, ""},
		{"clear slower", map[string][]float64{"passthrough": jitter(1000, 10), "modsecurity": jitter(500, 10)}, "modsecurity", MetricReqPerS, Slower, ""},
		{"cpu higher", map[string][]float64{"passthrough": jitter(1000, 10), "modsecurity": jitter(500, 10)}, "modsecurity", MetricCPU, Higher, ""},
		{"p99 lower", map[string][]float64{"passthrough": jitter(1000, 10), "coraza": jitter(2000, 10)}, "coraza", metricP99, Lower, ""},
		{"n=3", map[string][]float64{"passthrough": jitter(1000, 3), "modsecurity": jitter(500, 3)}, "modsecurity", MetricReqPerS, NotEstablished, "n=3 < 4 paired repeats"},
		{"CI crosses 1", map[string][]float64{
			"passthrough": {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000},
			"coraza":      {980, 1030, 970, 1020, 990, 1010, 975, 1025, 1005, 995},
		}, "coraza", MetricReqPerS, NotEstablished, "Holm p=1 ≥ 0.05"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(recs(tt.vals))
			c := findCmp(t, s, tt.num, Baseline, tt.metric)
			if c.Verdict != tt.want || c.Reason != tt.reason {
				t.Errorf("verdict = %q (%q), want %q (%q); ratio %v boot [%v,%v] p %v holm %v",
					c.Verdict, c.Reason, tt.want, tt.reason, c.MedianRatio, c.BootLo, c.BootHi, c.P, c.PHolm)
			}
		})
	}
}

func TestHolmMakesVerdictNotEstablished(t *testing.T) {
	// modsecurity's req/s ratios vary (paired-t p ≈ 0.005 alone), but two
	// WAF modes against passthrough (3 metrics each) plus
	// modsecurity/coraza (4 metrics) make m=10 comparisons, and Holm
	// multiplies the smallest p by 10.
	s := Summarize(recs(map[string][]float64{
		"passthrough": {1000, 1000, 1000, 1000, 1000},
		"modsecurity": {800, 950, 700, 900, 850},
		"coraza":      jitter(700, 5),
	}))
	if len(s.Comparisons) != 10 {
		t.Fatalf("%d comparisons, want 10", len(s.Comparisons))
	}
	c := findCmp(t, s, "modsecurity", Baseline, MetricReqPerS)
	if c.P >= Alpha || c.PHolm < Alpha || c.Verdict != NotEstablished || !strings.HasPrefix(c.Reason, "Holm p=") {
		t.Errorf("verdict %q (%q), want not established by Holm; p %v holm %v", c.Verdict, c.Reason, c.P, c.PHolm)
	}
}

func TestPairedLogT(t *testing.T) {
	// log-ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, t = 3.464 with 2 df.
	geo, lo, hi, p := PairedLogT([]float64{math.Exp(0.1), math.Exp(0.2), math.Exp(0.3)}, 0.95)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-3 }
	if !near(geo, math.Exp(0.2)) || !near(p, 0.0742) || !near(lo, math.Exp(0.2-4.3027*0.1/math.Sqrt(3))) || !near(hi, math.Exp(0.2+4.3027*0.1/math.Sqrt(3))) {
		t.Errorf("PairedLogT = %v [%v, %v] p=%v", geo, lo, hi, p)
	}
	if _, lo, _, p := PairedLogT([]float64{2}, 0.95); !math.IsNaN(lo) || p != 1 {
		t.Errorf("one ratio: lo %v p %v, want NaN and 1", lo, p)
	}
	if geo, _, _, p := PairedLogT([]float64{0.5, 0.5, 0.5}, 0.95); geo != 0.5 || p != 0 {
		t.Errorf("constant ratios: geo %v p %v, want 0.5 and 0", geo, p)
	}
}

func TestPairingAndBaseline(t *testing.T) {
	rs := recs(map[string][]float64{
		"passthrough": {1000, 1000, 1000, 1000},
		"coraza":      {500, 400, 250, 200},
	})
	// Drop coraza repeat 2 and interrupt passthrough repeat 3: only repeats
	// 1 and 4 pair.
	rs = slices.DeleteFunc(rs, func(r result.Record) bool { return r.Mode == "coraza" && r.Repeat == 2 })
	for i := range rs {
		if rs[i].Mode == "passthrough" && rs[i].Repeat == 3 {
			rs[i].Interrupted = true
		}
	}
	s := Summarize(rs)
	c := findCmp(t, s, "coraza", Baseline, MetricReqPerS)
	if !slices.Equal(c.Repeats, []int{1, 4}) || !slices.Equal(c.Ratios, []float64{0.5, 0.2}) {
		t.Errorf("pairs %v ratios %v, want [1 4] [0.5 0.2]", c.Repeats, c.Ratios)
	}
	if len(s.Excluded) != 1 || s.Excluded[0].Reason != "interrupted" || s.Excluded[0].Repeat != 3 {
		t.Errorf("Excluded = %+v", s.Excluded)
	}
	if g := s.Group(Key{"passthrough", "headers", 16}); g == nil || g.N != 3 {
		t.Errorf("passthrough group = %+v, want n=3", g)
	}
	if len(s.Baseline) != 1 || !slices.Equal(s.Baseline[0].Values, []float64{1000, 4000}) {
		t.Errorf("Baseline = %+v, want values [1000 4000] µs/req", s.Baseline)
	}
}

func TestCheckDrift(t *testing.T) {
	flat := []int64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	tests := []struct {
		name     string
		ps       []int64
		dur      float64
		flagged  bool
		short    bool
		seconds  int
		changePc float64
	}{
		{"flat", flat, 10, false, false, 10, 0},
		{"rising 10%", []int64{100, 100, 100, 100, 100, 110, 110, 110, 110, 110}, 10, true, false, 10, 10},
		{"falling 4%", []int64{100, 100, 100, 96, 96, 96}, 6, false, false, 6, -4},
		{"partial last second dropped", append(slices.Clone(flat), 7), 10.4, false, false, 10, 0},
		{"odd count skips middle", []int64{100, 100, 1, 94, 94}, 5, true, false, 5, -6},
		{"too short", []int64{100, 100, 100}, 3, false, true, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := CheckDrift(&result.Record{Window: result.Window{PerSecond: tt.ps, DurationS: tt.dur}})
			if d.Flagged != tt.flagged || d.TooShort != tt.short || d.Seconds != tt.seconds || math.Abs(100*d.Change-tt.changePc) > 1e-9 {
				t.Errorf("got flagged %v short %v seconds %d change %.3f%%; want %v %v %d %.3f%%",
					d.Flagged, d.TooShort, d.Seconds, 100*d.Change, tt.flagged, tt.short, tt.seconds, tt.changePc)
			}
		})
	}
}

func TestCheckGrowth(t *testing.T) {
	rec := func(before, after, requests int64) *result.Record {
		return &result.Record{
			Case:   result.Case{Mode: "modsecurity", Workload: "phase1_block", Conns: 1},
			Window: result.Window{Requests: requests},
			Memory: result.Memory{RSSAfterWarmupKiB: before, RSSEndKiB: after},
		}
	}
	tests := []struct {
		name    string
		r       *result.Record
		flagged bool
		perReq  float64
	}{
		{"leak seen in the seed run", rec(121856, 139162, 27296), true, 649.2},
		{"flat", rec(115800, 115900, 100000), false, 1.0},
		{"big step, many requests", rec(100000, 103000, 1000000), false, 3.1},
		{"per-request but small total", rec(100000, 101000, 1000), false, 1024},
		{"shrank", rec(130000, 128000, 5000), false, -409.6},
		{"no memory sample", rec(0, 0, 5000), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := checkGrowth(tt.r)
			if g.Flagged != tt.flagged {
				t.Errorf("flagged: got %v, want %v (%+v)", g.Flagged, tt.flagged, g)
			}
			if math.Abs(g.BytesPerRequest-tt.perReq) > 0.1 {
				t.Errorf("bytes/request: got %.1f, want %.1f", g.BytesPerRequest, tt.perReq)
			}
		})
	}
}
