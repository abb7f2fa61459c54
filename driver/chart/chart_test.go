package chart

import (
	"bytes"
	"flag"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wafbench/driver/load"
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
					if mode == "modsecurity" && rep == 2 && wl.name == "headers" {
						per[s] = int64(rps * (0.93 + 0.02*float64(s))) // drifts: flagged
					}
				}
				out = append(out, result.Record{
					Case: result.Case{Trial: trial, Repeat: rep, Mode: mode, Workload: wl.name, Conns: wl.conns},
					Window: result.Window{
						ReqPerS: rps, DurationS: 8, PerSecond: per, HistBase64: histOf(lat, trial*10+wi),
						Latency: result.Latency{P50Us: lat, P95Us: 1.8 * lat, P99Us: 2.7 * lat, P999Us: 4.5 * lat},
					},
					CPU: result.CPU{UsPerRequest: 0.9e6 / rps},
				})
			}
		}
	}
	return out
}

// histOf is an encoded histogram of 5000 latencies around lat µs with a
// long right tail, the same for the same arguments.
func histOf(lat float64, seed int) string {
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	r := load.Result{Hist: load.NewHistogram()}
	for range 5000 {
		v := lat * math.Exp(0.3*rng.NormFloat64()) * (1 + 3*math.Pow(rng.Float64(), 40))
		r.Hist.RecordValue(int64(v))
	}
	s, err := r.EncodeHist()
	if err != nil {
		panic(err)
	}
	return s
}

func TestGolden(t *testing.T) {
	recs := records()
	s := stats.Summarize(recs)
	wl := stats.WorkloadKey{Workload: "headers", Conns: 16}
	noHists := slices.Clone(recs)
	for i := range noHists {
		if noHists[i].Mode == "coraza" {
			noHists[i].HistBase64 = "" // records written before histograms were kept
		}
	}
	tests := []struct {
		name string
		draw func(io.Writer) error
	}{
		{throughputFile, func(w io.Writer) error { return throughput(w, s) }},
		{cpuFile, func(w io.Writer) error { return cpu(w, s) }},
		{latencyFile(wl), func(w io.Writer) error { return latency(w, s, recs, wl) }},
		{"latency_no_histograms.svg", func(w io.Writer) error { return latency(w, s, noHists, wl) }},
		{seriesFile, func(w io.Writer) error { return stability(w, s, recs) }},
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
	want := []string{throughputFile, cpuFile, "latency_headers_c16.svg", "latency_json_4k_c1.svg", seriesFile}
	if !slices.Equal(files, want) {
		t.Errorf("WriteAll = %v, want %v", files, want)
	}
	for _, f := range want {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
