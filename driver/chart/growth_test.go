package chart

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// growthData is a fixed size sweep: passthrough flat-ish, two engines with
// different fixed and per-byte costs (they cross near 2 KiB).
func growthData() ([]GrowthTick, []GrowthSeries) {
	sizes := []float64{256, 1024, 4096, 16384, 65536, 262144}
	labels := []string{"256", "1k", "4k", "16k", "64k", "256k"}
	var ticks []GrowthTick
	for i, x := range sizes {
		ticks = append(ticks, GrowthTick{X: x, Label: labels[i]})
	}
	mk := func(mode, label string, fixed, perByte, k float64) GrowthSeries {
		s := GrowthSeries{Mode: mode, Label: label}
		for _, x := range sizes {
			y := fixed + perByte*math.Pow(x, k)
			s.Points = append(s.Points, GrowthPoint{X: x, Y: y, Lo: y * 0.95, Hi: y * 1.06})
		}
		return s
	}
	return ticks, []GrowthSeries{
		mk("passthrough", "", 70, 0.0003, 1),
		mk("modsecurity", "modsecurity  k = 1.02 [0.99, 1.05]", 650, 0.11, 1),
		mk("coraza", "coraza  k = 0.98 [0.95, 1.01]", 500, 1.0, 0.98),
	}
}

func curveData() []CurveSeries {
	mk := func(mode string, capacity, base float64) CurveSeries {
		s := CurveSeries{Mode: mode}
		for _, f := range []float64{0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1} {
			off := f * capacity
			ach := math.Min(off, capacity*0.98)
			q := base / (1.02 - math.Min(f, 1.0))
			s.Points = append(s.Points, CurvePoint{Offered: off, Achieved: ach, P50: q, P99: 4 * q, P999: 9 * q})
		}
		return s
	}
	return []CurveSeries{mk("passthrough", 30000, 90), mk("modsecurity", 1800, 700), mk("coraza", 2700, 500)}
}

func scaleData() []GrowthSeries {
	mk := func(mode string, one, eff float64) GrowthSeries {
		s := GrowthSeries{Mode: mode}
		for _, n := range []float64{1, 2, 4, 8} {
			y := one * n * math.Pow(eff, math.Log2(n))
			s.Points = append(s.Points, GrowthPoint{X: n, Y: y, Lo: 0.97 * y, Hi: 1.03 * y})
		}
		return s
	}
	return []GrowthSeries{mk("passthrough", 30000, 0.9), mk("modsecurity", 1800, 0.97), mk("coraza", 2700, 0.95)}
}

func TestGrowthGolden(t *testing.T) {
	ticks, growth := growthData()
	tests := []struct {
		name string
		draw func(io.Writer) error
	}{
		{"growth.svg", func(w io.Writer) error {
			return Growth(w, "CPU per request vs body size, json_real/c1", "body size, bytes", "Envoy CPU µs/request", ticks, growth)
		}},
		{"curve.svg", func(w io.Writer) error { return Curve(w, "Latency vs offered load, headers/c16", curveData(), 10000) }},
		{"curve_achieved.svg", func(w io.Writer) error { return CurveAchieved(w, "Achieved vs offered load, headers/c16", curveData()) }},
		{"scale.svg", func(w io.Writer) error { return Scale(w, "Throughput vs Envoy workers, headers/c64", scaleData()) }},
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
				t.Fatalf("%v (run go test ./driver/chart -update to create it)", err)
			}
			if !bytes.Equal(a.Bytes(), want) {
				t.Errorf("%s differs from the golden file (inspect, then go test ./driver/chart -run TestGrowthGolden -update)", tt.name)
			}
		})
	}
}

func TestGrowthNothingToDraw(t *testing.T) {
	empty := []GrowthSeries{{Mode: "coraza", Points: []GrowthPoint{{X: 0, Y: 5}}}}
	for name, err := range map[string]error{
		"growth":   Growth(io.Discard, "t", "x", "y", nil, empty),
		"curve":    Curve(io.Discard, "t", []CurveSeries{{Mode: "coraza"}}, 10000),
		"achieved": CurveAchieved(io.Discard, "t", nil),
		"scale":    Scale(io.Discard, "t", empty),
	} {
		if !errors.Is(err, ErrNothingToDraw) {
			t.Errorf("%s: got %v, want ErrNothingToDraw", name, err)
		}
	}
}
