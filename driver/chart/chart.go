// Package chart draws wafbench's SVG charts with gonum/plot: throughput and
// CPU per request as grouped bars with confidence-interval whiskers, latency
// percentiles on a log scale, and the per-second series of one trial.
//
// Output is byte-for-byte reproducible from the same data: gonum's SVG
// canvas writes no timestamp or random id, fonts are not embedded and are
// always plot's built-in default (Liberation Serif), colours are fixed per
// mode, and every series is drawn in a fixed order.
package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// Chart size.
const (
	Width  = 8 * vg.Inch
	Height = 4.5 * vg.Inch
)

// File names WriteAll produces inside its directory.
const (
	ThroughputFile = "throughput.svg"
	CPUFile        = "cpu.svg"
	SeriesFile     = "per_second.svg"
)

// LatencyFile is the file name of the latency chart of one workload.
func LatencyFile(w stats.WorkloadKey) string {
	return "latency_" + w.Workload + "_c" + strconv.Itoa(w.Conns) + ".svg"
}

var modeColors = map[string]color.Color{
	"passthrough": color.RGBA{R: 0x88, G: 0x88, B: 0x88, A: 0xff},
	"modsecurity": color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	"coraza":      color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
}

// modeColor is fixed for the three main modes; others take plotutil's
// palette by their index in the summary's mode list.
func modeColor(mode string, i int) color.Color {
	if c, ok := modeColors[mode]; ok {
		return c
	}
	return plotutil.Color(i + 3)
}

// plainTicks are plot.DefaultTicks labelled without trailing zeros
// ("25000", not "25000.00").
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

func newPlot(title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Tick.Marker = plainTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// newCanvas makes the canvas render draws on; tests may swap it.
var newCanvas = func() vg.CanvasWriterTo { return vgsvg.New(Width, Height) }

func render(w io.Writer, p *plot.Plot) error {
	c := newCanvas()
	p.Draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

// Throughput draws median req/s per workload (groups) and mode (bars), with
// whiskers at the 95 % CI of the median where it is finite.
func Throughput(w io.Writer, s *stats.Summary) error {
	return groupedBars(w, s, "Throughput (median, 95% CI)", "requests/s",
		func(g *stats.Group) stats.Estimate { return g.ReqPerS })
}

// CPU draws median Envoy CPU µs per request per workload and mode, with
// whiskers at the 95 % CI of the median where it is finite.
func CPU(w io.Writer, s *stats.Summary) error {
	return groupedBars(w, s, "Envoy CPU per request (median, 95% CI)", "CPU µs/request",
		func(g *stats.Group) stats.Estimate { return g.CPUUsPerReq })
}

func groupedBars(w io.Writer, s *stats.Summary, title, ylabel string, f func(*stats.Group) stats.Estimate) error {
	if len(s.Workloads) == 0 {
		return fmt.Errorf("chart %q: no valid records", title)
	}
	p := newPlot(title, ylabel)
	names := make([]string, len(s.Workloads))
	for i, wl := range s.Workloads {
		names[i] = wl.String()
	}
	p.NominalX(names...)
	k := len(s.Modes)
	barW := vg.Length(float64(Width) * 0.7 / float64(len(s.Workloads)*k+1))
	ymax := 0.0
	for i, m := range s.Modes {
		vals := make(plotter.Values, len(s.Workloads))
		var wk whiskers
		for j, wl := range s.Workloads {
			g := s.Group(stats.Key{Mode: m, Workload: wl.Workload, Conns: wl.Conns})
			if g == nil {
				continue
			}
			e := f(g)
			vals[j] = e.Median
			ymax = math.Max(ymax, e.Median)
			if !math.IsInf(e.Lo, 0) && !math.IsInf(e.Hi, 0) {
				wk.x = append(wk.x, float64(j))
				wk.lo = append(wk.lo, e.Lo)
				wk.hi = append(wk.hi, e.Hi)
				ymax = math.Max(ymax, e.Hi)
			}
		}
		b, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return fmt.Errorf("chart %q mode %s: %w", title, m, err)
		}
		off := barW * vg.Length(float64(i)-float64(k-1)/2)
		b.Offset = off
		b.Color = modeColor(m, i)
		b.LineStyle.Width = 0
		wk.offset = off
		wk.capWidth = barW / 2
		p.Add(b, &wk)
		p.Legend.Add(m, b)
	}
	p.Y.Min = 0
	p.Y.Max = ymax * 1.3 // room for the legend above the bars
	return render(w, p)
}

// whiskers draws vertical CI bars at data x plus a fixed canvas offset, so
// they sit on the bars of a grouped bar chart (plotter.YErrorBars has no
// offset). Hand-written for that reason.
type whiskers struct {
	x, lo, hi []float64
	offset    vg.Length
	capWidth  vg.Length
}

func (wk *whiskers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
	for i := range wk.x {
		x := trX(wk.x[i]) + wk.offset
		ylo, yhi := trY(wk.lo[i]), trY(wk.hi[i])
		c.StrokeLine2(ls, x, ylo, x, yhi)
		c.StrokeLine2(ls, x-wk.capWidth/2, ylo, x+wk.capWidth/2, ylo)
		c.StrokeLine2(ls, x-wk.capWidth/2, yhi, x+wk.capWidth/2, yhi)
	}
}

// percentiles drawn by Latency, in order.
var percentiles = []struct {
	name string
	f    func(*stats.Group) stats.Estimate
}{
	{"p50", func(g *stats.Group) stats.Estimate { return g.P50Us }},
	{"p95", func(g *stats.Group) stats.Estimate { return g.P95Us }},
	{"p99", func(g *stats.Group) stats.Estimate { return g.P99Us }},
	{"p99.9", func(g *stats.Group) stats.Estimate { return g.P999Us }},
}

// Latency draws the median p50/p95/p99/p99.9 client latency of each mode on
// one workload, log-scaled. Non-positive values are left out.
func Latency(w io.Writer, s *stats.Summary, wl stats.WorkloadKey) error {
	p := newPlot("Latency percentiles, "+wl.String()+" (median over repeats)", "latency µs (log)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	names := make([]string, len(percentiles))
	for i, pc := range percentiles {
		names[i] = pc.name
	}
	p.NominalX(names...)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, m := range s.Modes {
		g := s.Group(stats.Key{Mode: m, Workload: wl.Workload, Conns: wl.Conns})
		if g == nil {
			continue
		}
		var xys plotter.XYs
		for j, pc := range percentiles {
			if v := pc.f(g).Median; v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				xys = append(xys, plotter.XY{X: float64(j), Y: v})
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("latency chart %s mode %s: %w", wl, m, err)
		}
		c := modeColor(m, i)
		l.Color, pts.Color = c, c
		pts.Shape = draw.CircleGlyph{}
		p.Add(l, pts)
		p.Legend.Add(m, l, pts)
	}
	if math.IsInf(lo, 0) {
		return fmt.Errorf("latency chart %s: no positive latency values", wl)
	}
	// Pad to whole decades so log ticks are labelled and the legend fits.
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi*3)))
	return render(w, p)
}

// Series draws the completions in each second of the measured window for
// each record, one line per record, labelled mode workload/cN.
func Series(w io.Writer, title string, recs []result.Record) error {
	p := newPlot(title, "completed requests per second")
	p.X.Label.Text = "second of measured window"
	p.Legend.Left = false
	ymax := 0.0
	drawn := 0
	for i, r := range recs {
		if len(r.PerSecond) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(r.PerSecond))
		for j, v := range r.PerSecond {
			xys[j] = plotter.XY{X: float64(j + 1), Y: float64(v)}
			ymax = math.Max(ymax, float64(v))
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("series chart: record %d: %w", i, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(r.Mode+" "+stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}.String(), l)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("series chart %q: no per-second data", title)
	}
	p.Y.Min = 0
	p.Y.Max = ymax * 1.3
	return render(w, p)
}

// SeriesTrial picks the trial whose series WriteAll draws: the lowest
// trial number among valid records with per-second data. It returns that
// trial's valid records in workload order, or nil.
func SeriesTrial(recs []result.Record) []result.Record {
	best := 0
	for i := range recs {
		r := &recs[i]
		if stats.Valid(r) && len(r.PerSecond) > 0 && (best == 0 || r.Trial < best) {
			best = r.Trial
		}
	}
	if best == 0 {
		return nil
	}
	var out []result.Record
	for i := range recs {
		if r := &recs[i]; r.Trial == best && stats.Valid(r) && len(r.PerSecond) > 0 {
			out = append(out, *r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Workload != out[j].Workload {
			return out[i].Workload < out[j].Workload
		}
		return out[i].Conns < out[j].Conns
	})
	return out
}

// WriteAll renders every chart of a run into dir (created if needed) and
// returns the file names written, in a fixed order: throughput, CPU, one
// latency chart per workload, the per-second series of SeriesTrial.
func WriteAll(dir string, s *stats.Summary, recs []result.Record) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	write := func(name string, f func(io.Writer) error) error {
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			return err
		}
		files = append(files, name)
		return os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644)
	}
	if len(s.Workloads) == 0 {
		return nil, nil
	}
	if err := write(ThroughputFile, func(w io.Writer) error { return Throughput(w, s) }); err != nil {
		return files, err
	}
	if err := write(CPUFile, func(w io.Writer) error { return CPU(w, s) }); err != nil {
		return files, err
	}
	for _, wl := range s.Workloads {
		if err := write(LatencyFile(wl), func(w io.Writer) error { return Latency(w, s, wl) }); err != nil {
			return files, err
		}
	}
	if tr := SeriesTrial(recs); tr != nil {
		title := fmt.Sprintf("Per-second completions, trial %d (%s, repeat %d)", tr[0].Trial, tr[0].Mode, tr[0].Repeat)
		if err := write(SeriesFile, func(w io.Writer) error { return Series(w, title, tr) }); err != nil {
			return files, err
		}
	}
	return files, nil
}
