package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// growthRecords is a synthetic growth run: 6 repeats of a size sweep where
// passthrough costs 80 µs, modsecurity 80 + 0.5·x and coraza
// 80 + 0.002·x^1.5 µs (marginal exponents exactly 1 and 1.5; they cross at
// x = 62500), and a rate sweep whose p99 = 1000·100^f µs reaches 10 ms at
// half of capacity.
func growthRecords() []result.Record {
	var recs []result.Record
	sizes := []int{0, 256, 1024, 4096, 16384, 65536}
	cost := map[string]func(x float64) float64{
		"passthrough": func(x float64) float64 { return 80 },
		"modsecurity": func(x float64) float64 { return 80 + 0.5*x },
		"coraza":      func(x float64) float64 { return 80 + 0.002*math.Pow(x, 1.5) },
	}
	for rep := 1; rep <= 6; rep++ {
		for _, mode := range []string{"passthrough", "modsecurity", "coraza"} {
			w := 1 + 0.01*float64(rep%3-1)
			for _, x := range sizes {
				recs = append(recs, result.Record{Repeat: rep, Mode: mode, Load: "closed", Conns: 1, ReqPerS: 100,
					Workload: profile.PointName("json_real", profile.ParamSize, profile.SizeLabel(x)),
					CPU:      result.CPU{UsPerRequest: cost[mode](float64(x)) * w}})
			}
			capacity := map[string]float64{"passthrough": 20000, "modsecurity": 1500, "coraza": 2000}[mode]
			for _, fr := range []float64{0.1, 0.5, 0.8, 1.0, 1.1} {
				p99 := 1000 * math.Pow(100, fr)
				recs = append(recs, result.Record{Repeat: rep, Mode: mode, Load: "open", Conns: 16,
					Workload:     profile.PointName("headers_curve", profile.ParamLoad, fmt.Sprintf("%g%%", 100*fr)),
					LoadFraction: fr, CapacityPerS: capacity,
					RateRequestedPerS: fr * capacity, RateAchievedPerS: fr * capacity * 0.99, ReqPerS: fr * capacity * 0.99,
					Latency: result.Latency{P50Us: p99 / 4, P99Us: p99, P999Us: 2 * p99}})
			}
		}
	}
	return recs
}

func TestGrowthSections(t *testing.T) {
	recs := growthRecords()
	meta := &result.Meta{Suite: "growth", Flags: map[string]string{"slo": "10ms"}}
	m := &md{}
	writeGrowth(m, meta, recs)
	out := m.b.String()
	sweeps := collectSweeps(recs)
	if len(sweeps) != 1 {
		t.Fatalf("got %d sweeps, want 1 (json_real)", len(sweeps))
	}
	exps := map[string]float64{}
	for _, e := range sweeps[0].exponents() {
		if e.err != nil {
			t.Fatalf("%s: %v", e.mode, e.err)
		}
		exps[e.mode] = e.fit.Slope
		if !(e.ci.Lo <= e.fit.Slope && e.fit.Slope <= e.ci.Hi) {
			t.Errorf("%s: interval [%v, %v] does not hold %v", e.mode, e.ci.Lo, e.ci.Hi, e.fit.Slope)
		}
	}
	for mode, want := range map[string]float64{"modsecurity": 1, "coraza": 1.5} {
		if k := exps[mode]; math.Abs(k-want) > 1e-6 {
			t.Errorf("%s exponent: got %v, want %v", mode, k, want)
		}
	}
	// Interpolated in ln x between 16k and 64k: 61.1 KiB (62500 B exactly).
	for _, want := range []string{
		"## How cost grows", "### json_real, body size, 1 conn", "| 16k | 80.0 |", "| modsecurity | 1.00 | [1.00, 1.00] |",
		"modsecurity vs coraza: **crossover at 61.", "coraza is cheaper below, modsecurity above",
		"## Latency–throughput", "### headers_curve, 16 connections",
		"max rate at p99 ≤ 10ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("growth sections lack %q:\n%s", want, out)
		}
	}
	// p99 = 1000·100^f µs reaches 10 ms at f = 0.5: half of capacity.
	curves := collectCurves(recs)
	for mode, capacity := range map[string]float64{"modsecurity": 1500, "coraza": 2000} {
		rates, err := curves[0].sloRates(mode, 10000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rates {
			if math.Abs(r.Rate-capacity/2) > 0.02*capacity || r.Bound != "" {
				t.Errorf("%s: max rate at SLO got %+v, want about %v", mode, r, capacity/2)
			}
		}
	}
	if strings.Contains(out, "Throughput vs Envoy workers") {
		t.Error("a one-worker growth run should have no workers section")
	}
}

// TestScaleFromMergedRun: the workers section and chart render from a
// recorded merged run (testdata/scale-merged: the scale suite run here
// with --concurrency 1 and 2, one repeat each, on a shared 2-CPU machine,
// pooled with wafbench merge; hist_b64 stripped to keep it small).
func TestScaleFromMergedRun(t *testing.T) {
	src := filepath.Join("testdata", "scale-merged")
	meta, err := result.ReadMeta(src)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := result.ReadRecords(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeGrowthCharts(dir, meta, recs); err != nil {
		t.Fatal(err)
	}
	m := &md{}
	writeGrowth(m, meta, recs)
	out := m.b.String()
	for _, want := range []string{
		"## Throughput vs Envoy workers", "### headers_conns/c64", "### json_real@size=1k/c16",
		"| coraza | 2 | 1 (0) ⚠ fewer than workers |", "| passthrough | 1 | 1 (0) | ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("workers section lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "## How cost grows") {
		t.Error("one size per workload is no sweep: no growth section wanted")
	}
	name := "scale_headers_conns_c64.svg"
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(src, name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./driver/report -run TestScaleFromMergedRun -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (inspect, then -update)", name, golden)
	}
}
