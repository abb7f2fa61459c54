package chart

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files in testdata")

// records is a small fixed data set: 3 modes × 2 workloads × 6 repeats, so
// 95 % intervals are finite and whiskers are drawn.
func records() []result.Record {
	base := map[string]float64{"passthrough": 20000, "modsecurity": 1200, "coraza": 1900}
	var out []result.Record
	trial := 0
	for rep := 1; rep <= 6; rep++ {
		for mi, mode := range []string{"passthrough", "modsecurity", "coraza"} {
			trial++
			for wi, wl := range []struct {
				name  string
				conns int
				scale float64
			}{{"headers", 16, 1}, {"json_4k", 1, 0.45}} {
				j := 1 + 0.01*float64((rep*7+mi*3+wi*5)%5-2)
				rps := base[mode] * wl.scale * j
				lat := float64(wl.conns) / rps * 1e6
				per := make([]int64, 8)
				for s := range per {
					per[s] = int64(rps * (1 + 0.003*float64((s+rep)%3-1)))
				}
				out = append(out, result.Record{
					Trial: trial, Repeat: rep, Mode: mode, Workload: wl.name, Conns: wl.conns,
					ReqPerS: rps, DurationS: 8, PerSecond: per,
					CPU:     result.CPU{UsPerRequest: 0.9e6 / rps},
					Latency: result.Latency{P50Us: lat, P95Us: 1.8 * lat, P99Us: 2.7 * lat, P999Us: 4.5 * lat},
				})
			}
		}
	}
	return out
}

func TestGolden(t *testing.T) {
	recs := records()
	s := stats.Summarize(recs)
	wl := stats.WorkloadKey{Workload: "headers", Conns: 16}
	tests := []struct {
		name string
		draw func(io.Writer) error
	}{
		{ThroughputFile, func(w io.Writer) error { return Throughput(w, s) }},
		{CPUFile, func(w io.Writer) error { return CPU(w, s) }},
		{LatencyFile(wl), func(w io.Writer) error { return Latency(w, s, wl) }},
		{SeriesFile, func(w io.Writer) error { return Series(w, "Per-second completions, trial 1", SeriesTrial(recs)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a, b bytes.Buffer
			if err := tt.draw(&a); err != nil {
				t.Fatal(err)
			}
			if err := tt.draw(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatal("two renderings of the same data differ")
			}
			golden := filepath.Join("testdata", tt.name)
			if *update {
				if err := os.WriteFile(golden, a.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./driver/chart -update)", err)
			}
			if !bytes.Equal(a.Bytes(), want) {
				t.Errorf("%s differs from golden; inspect and run go test ./driver/chart -update", tt.name)
			}
			if svg := a.String(); !strings.HasPrefix(svg, "<?xml") || strings.Contains(svg, "@font-face") {
				t.Errorf("%s: want a plain SVG without embedded fonts", tt.name)
			}
		})
	}
}

func TestWriteAll(t *testing.T) {
	recs := records()
	dir := t.TempDir()
	files, err := WriteAll(dir, stats.Summarize(recs), recs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ThroughputFile, CPUFile, "latency_headers_c16.svg", "latency_json_4k_c1.svg", SeriesFile}
	if !slices.Equal(files, want) {
		t.Errorf("WriteAll = %v, want %v", files, want)
	}
	for _, f := range want {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestSeriesTrialSkipsInvalid(t *testing.T) {
	recs := records()
	recs[0].Interrupted = true // trial 1, headers
	got := SeriesTrial(recs)
	if len(got) != 1 || got[0].Trial != 1 || got[0].Workload != "json_4k" {
		t.Errorf("SeriesTrial = %d records (first %+v), want trial 1 json_4k only", len(got), got)
	}
}
