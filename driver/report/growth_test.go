package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
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
				recs = append(recs, result.Record{
					Case: result.Case{
						Repeat: rep, Mode: mode, Load: "closed", Conns: 1,
						Workload: profile.PointName("json_real", profile.ParamSize, profile.SizeLabel(x)),
					},
					Window: result.Window{ReqPerS: 100}, CPU: result.CPU{UsPerRequest: cost[mode](float64(x)) * w},
				})
			}
			capacity := map[string]float64{"passthrough": 20000, "modsecurity": 1500, "coraza": 2000}[mode]
			for _, fr := range []float64{0.1, 0.5, 0.8, 1.0, 1.1} {
				p99 := 1000 * math.Pow(100, fr)
				recs = append(recs, result.Record{
					Case: result.Case{
						Repeat: rep, Mode: mode, Load: "open", Conns: 16,
						Workload: profile.PointName("headers_curve", profile.ParamLoad, fmt.Sprintf("%g%%", 100*fr)),
					},
					OpenLoop: result.OpenLoop{
						LoadFraction: fr, CapacityPerS: capacity, RateRequestedPerS: fr * capacity,
					},
					Window: result.Window{
						RateAchievedPerS: fr * capacity * 0.99, ReqPerS: fr * capacity * 0.99,
						Latency: result.Latency{P50Us: p99 / 4, P99Us: p99, P999Us: 2 * p99},
					},
				})
			}
		}
	}
	return recs
}

func TestGrowthSections(t *testing.T) {
	recs := growthRecords()
	meta := &result.Meta{Suite: "growth", Flags: map[string]string{"slo": "10ms"}}
	m := &md{}
	writeGrowth(m, analyse(meta, recs, 0))
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
	if err := writeGrowthCharts(dir, meta, analyseGrowth(meta, recs)); err != nil {
		t.Fatal(err)
	}
	m := &md{}
	writeGrowth(m, analyse(meta, recs, 0))
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

// argsSweep is a form_args sweep over len(a[0]) field counts (1, 10, 100,
// …): a[r][i] and b[r][i] are modsecurity's and coraza's Envoy CPU µs per
// request in repeat r at point i; passthrough costs 1 µs.
func argsSweep(a, b [][]float64) []result.Record {
	var recs []result.Record
	for r := range a {
		n := 1
		for i := range a[r] {
			w := profile.PointName("form_args", profile.ParamArgs, strconv.Itoa(n))
			for mode, v := range map[string]float64{"passthrough": 1, "modsecurity": a[r][i], "coraza": b[r][i]} {
				recs = append(recs, result.Record{
					Case:   result.Case{Repeat: r + 1, Mode: mode, Load: "closed", Conns: 1, Workload: w},
					Window: result.Window{ReqPerS: 100}, CPU: result.CPU{UsPerRequest: v},
				})
			}
			n *= 10
		}
	}
	return recs
}

// TestGrowthVerdictsFollowTheData: a crossover is stated only when the
// table's medians cross as well as the paired medians, with at least
// CrossShare of the resamples crossing; "cheaper throughout" only when
// every point's interval excludes 1 on one side; anything else is "not
// established" with the repeats it would take.
func TestGrowthVerdictsFollowTheData(t *testing.T) {
	tests := []struct {
		name      string
		a, b      [][]float64 // [repeat][point]
		want      []string
		forbidden []string
	}{
		{
			// The table's medians put modsecurity below coraza at every
			// point, but the median per-repeat ratio is above 1 at 10.
			name: "paired medians cross, the table's do not",
			a:    [][]float64{{10, 10, 10}, {10, 20, 10}, {30, 30, 10}},
			b:    [][]float64{{12, 9, 20}, {9, 25, 20}, {31, 28, 20}},
			want: []string{"**crossover not established** in 1–100", "the table's medians do not cross (modsecurity is cheaper at every point's median)",
				"the median paired log-ratio changes sign twice", "conditional on a crossing"},
			forbidden: []string{"**crossover at", "cheaper throughout**"},
		},
		{
			name: "cheaper at every median, intervals include 1",
			a:    [][]float64{{80, 80, 80}, {110, 110, 110}, {85, 85, 85}, {95, 95, 95}},
			b:    [][]float64{{100, 100, 100}, {100, 100, 100}, {100, 100, 100}, {100, 100, 100}},
			want: []string{"no crossover seen in 1–100", "**modsecurity cheaper throughout is not established**",
				"includes 1 at 3 of 3 points (1, 10, 100)", "would take about", "this run has 4"},
			forbidden: []string{"**crossover at", "**modsecurity is cheaper throughout**"},
		},
		{
			name:      "cheaper at every point, every interval below 1",
			a:         [][]float64{{50, 50, 50}, {52, 52, 52}, {49, 49, 49}, {51, 51, 51}},
			b:         [][]float64{{100, 100, 100}, {100, 100, 100}, {100, 100, 100}, {100, 100, 100}},
			want:      []string{"**no crossover** in 1–100: **modsecurity is cheaper throughout**", "| 10 | 4 | 0.505 |", "below 1 (modsecurity cheaper)"},
			forbidden: []string{"not established**"},
		},
		{
			// The medians cross between 1 and 10 in every repeat but one,
			// which keeps modsecurity dearer throughout: too few
			// resamples cross.
			name:      "a crossing too few resamples show",
			a:         [][]float64{{50, 150, 150}, {50, 150, 150}, {50, 90, 90}},
			b:         [][]float64{{100, 100, 100}, {100, 100, 100}, {100, 100, 100}},
			want:      []string{"**crossover not established**", "the table's medians cross between 1 and 10", "conditional on a crossing: over those"},
			forbidden: []string{"**crossover at"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &md{}
			writeGrowth(m, analyse(&result.Meta{Suite: "growth"}, argsSweep(tt.a, tt.b), 0))
			got := m.b.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("want %q in:\n%s", w, got)
				}
			}
			for _, w := range tt.forbidden {
				if strings.Contains(got, w) {
					t.Errorf("do not want %q in:\n%s", w, got)
				}
			}
		})
	}
}

// TestGrowthVerdictsOfCommittedRun renders the committed growth run
// (results/20261201T011819Z-growth) from a copy of its raw files and
// checks each crossover verdict against what its data support: form_args'
// medians never cross, json_real's and multipart's crossings appear in
// about 74% of resamples, every connections point's interval includes 1;
// json_value crosses in every resample.
func TestGrowthVerdictsOfCommittedRun(t *testing.T) {
	src := filepath.Join("..", "..", "results", "20261201T011819Z-growth")
	dir := t.TempDir()
	for _, name := range []string{result.MetaFile, result.RawGzFile} { // the kept form
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, part := range strings.Split(string(b), "\n### ")[1:] {
		title, body, _ := strings.Cut(part, "\n")
		sections[title] = body
	}
	for _, tt := range []struct {
		section         string
		want, forbidden []string
	}{
		{"json_real, body size, 1 conn", []string{"**crossover not established**", "a crossing in 1481 of 2000 resamples (74%)", "conditional on a crossing"}, []string{"**crossover at"}},
		{"json_value, body size, 1 conn", []string{"**crossover at 135 B**", "2000 of 2000 resamples (100%)", "conditional on a crossing", "still includes 1 at 0"}, nil},
		{"multipart, body size, 1 conn", []string{"**crossover not established**", "1481 of 2000 resamples (74%)"}, []string{"**crossover at"}},
		{"form_args, argument count, 1 conn", []string{"**crossover not established**", "the table's medians do not cross"}, []string{"**crossover at", "coraza above"}},
		{"headers_conns, connections", []string{"**coraza cheaper throughout is not established**", "includes 1 at 5 of 5 points"}, []string{"**coraza is cheaper throughout**"}},
	} {
		body, ok := sections[tt.section]
		if !ok {
			t.Errorf("no section %q", tt.section)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: want %q in:\n%s", tt.section, w, body)
			}
		}
		for _, w := range tt.forbidden {
			if strings.Contains(body, w) {
				t.Errorf("%s: do not want %q in:\n%s", tt.section, w, body)
			}
		}
	}
}
