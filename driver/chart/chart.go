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
	"errors"
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
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
	"wafbench/internal/atomicfile"
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

// ErrNothingToDraw reports a chart without a single drawable value.
var ErrNothingToDraw = errors.New("nothing to draw")

// LatencyFile is the file name of the latency chart of one workload.
func LatencyFile(w stats.WorkloadKey) string {
	return "latency_" + w.Workload + "_c" + strconv.Itoa(w.Conns) + ".svg"
}

// modeColor is the registry's colour of mode among the modes of s: a mode
// keeps its colour in every chart of one report.
func modeColor(s *stats.Summary, mode string) color.Color {
	return modes.Palette(s.Modes)[mode]
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
var newCanvas = func(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) }

func render(w io.Writer, p *plot.Plot) error { return renderSized(w, p, Width, Height) }

func renderSized(w io.Writer, p *plot.Plot, width, height vg.Length) error {
	c := newCanvas(width, height)
	p.Draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

// Throughput draws median req/s per workload (rows) and mode (bars) on a log
// scale, with whiskers at the 95 % CI of the median where it is finite.
func Throughput(w io.Writer, s *stats.Summary) error {
	return groupedBars(w, s, "Throughput (median over repeats, 95% CI)", "requests/s",
		func(g *stats.Group) stats.Estimate { return g.ReqPerS })
}

// CPU draws median Envoy CPU µs per request per workload and mode on a log
// scale, with whiskers at the 95 % CI of the median where it is finite.
func CPU(w io.Writer, s *stats.Summary) error {
	return groupedBars(w, s, "Envoy CPU per request (median over repeats, 95% CI)", "CPU µs/request",
		func(g *stats.Group) stats.Estimate { return g.CPUUsPerReq })
}

// groupedBars draws horizontal bars, one row per workload and one bar per
// mode, on a log scale: the modes differ by up to four orders of magnitude,
// which a linear axis flattens to nothing. Each bar is labelled with its
// value. gonum's BarChart cannot sit on a log axis (it starts at 0), hence
// the small hand-written plotter below.
func groupedBars(w io.Writer, s *stats.Summary, title, unit string, f func(*stats.Group) stats.Estimate) error {
	if len(s.Workloads) == 0 {
		return fmt.Errorf("chart %q: %w", title, ErrNothingToDraw)
	}
	n, k := len(s.Workloads), len(s.Modes)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = unit + " (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	// Rows top-down in the summary's workload order.
	names := make([]string, n)
	for i, wl := range s.Workloads {
		names[n-1-i] = wl.String()
	}
	p.NominalY(names...)
	// Viewers without Liberation Serif substitute a wider font and gonum
	// positions text by its own metrics, so labels can run long: keep a gap.
	p.Y.Padding = vg.Points(28)
	bars := &hbars{height: 0.8 / float64(k), label: p.X.Tick.Label}
	bars.label.Font.Size = vg.Points(7)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, m := range s.Modes {
		c := modeColor(s, m)
		for j, wl := range s.Workloads {
			g := s.Group(stats.Key{Mode: m, Workload: wl.Workload, Conns: wl.Conns})
			if g == nil {
				continue
			}
			e := f(g)
			if !(e.Median > 0) || math.IsInf(e.Median, 0) {
				continue
			}
			b := hbar{y: float64(n-1-j) + bars.height*(float64(k-1)/2-float64(i)), v: e.Median, color: c}
			if e.Lo > 0 && !math.IsInf(e.Lo, 0) && !math.IsInf(e.Hi, 0) {
				b.lo, b.hi = e.Lo, e.Hi
				lo, hi = math.Min(lo, e.Lo), math.Max(hi, e.Hi)
			}
			lo, hi = math.Min(lo, e.Median), math.Max(hi, e.Median)
			bars.bars = append(bars.bars, b)
		}
		p.Legend.Add(m, swatch{c})
	}
	if math.IsInf(lo, 0) {
		return fmt.Errorf("chart %q: no positive values: %w", title, ErrNothingToDraw)
	}
	p.Add(bars)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	// Whole decades, with room on the right for the value labels and legend.
	p.X.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.X.Max = math.Pow(10, math.Ceil(math.Log10(hi))+1)
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(12), -vg.Points(6)
	height := vg.Inch + vg.Length(n*k)*0.14*vg.Inch
	if height < Height {
		height = Height
	}
	return renderSized(w, p, Width, height)
}

// hbar is one horizontal bar: a value at a row position, with an optional
// 95 % interval (lo = hi = 0 when there is none).
type hbar struct {
	y, v, lo, hi float64
	color        color.Color
}

// hbars draws bars from the left edge of a log-scaled X axis to their value,
// whiskers for their intervals and the value as text beside each bar.
type hbars struct {
	bars   []hbar
	height float64 // in Y data units
	label  text.Style
}

func (hb *hbars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)}
	for _, b := range hb.bars {
		y0, y1 := trY(b.y-hb.height*0.45), trY(b.y+hb.height*0.45)
		x0, x1 := trX(p.X.Min), trX(b.v)
		c.FillPolygon(b.color, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		end := x1
		if b.hi > 0 {
			ym, cap := trY(b.y), (y1-y0)/3
			xl, xh := trX(b.lo), trX(b.hi)
			c.StrokeLine2(ls, xl, ym, xh, ym)
			c.StrokeLine2(ls, xl, ym-cap, xl, ym+cap)
			c.StrokeLine2(ls, xh, ym-cap, xh, ym+cap)
			end = max(end, xh)
		}
		sty := hb.label
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
		c.FillText(sty, vg.Point{X: end + vg.Points(3), Y: trY(b.y)}, formatValue(b.v))
	}
}

// formatValue prints a bar's value with three significant figures at most.
func formatValue(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// swatch is a legend thumbnail filled with a mode's colour.
type swatch struct{ color color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.color, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
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
	p.X.Min, p.X.Max = -0.3, float64(len(names))-0.7 // keep the end labels inside the canvas
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range s.Modes {
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
		c := modeColor(s, m)
		l.Color, pts.Color = c, c
		pts.Shape = draw.CircleGlyph{}
		p.Add(l, pts)
		p.Legend.Add(m, l, pts)
	}
	if math.IsInf(lo, 0) {
		return fmt.Errorf("latency chart %s: no positive latency values: %w", wl, ErrNothingToDraw)
	}
	// Pad to whole decades so log ticks are labelled and the legend fits.
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi*3)))
	return render(w, p)
}

// Series draws the completions in each second of the measured window for
// each record, one line per record, labelled mode workload/cN.
func Series(w io.Writer, title string, recs []result.Record) error {
	p := newPlot(title, "completed requests per second (log scale)")
	p.X.Label.Text = "second of measured window"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Left = false
	lo, hi := math.Inf(1), math.Inf(-1)
	drawn := 0
	for i, r := range recs {
		var xys plotter.XYs
		for j, v := range r.PerSecond {
			if v > 0 { // a log axis has no zero; an empty second is left out
				xys = append(xys, plotter.XY{X: float64(j + 1), Y: float64(v)})
				lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("series chart: record %d: %w", i, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		// The title names the trial's mode; one trial has one mode.
		p.Legend.Add(stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}.String(), l)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("series chart %q: no per-second data: %w", title, ErrNothingToDraw)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), -vg.Points(4)
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi*1.5)))
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
//
// A chart with nothing to draw (ErrNothingToDraw: e.g. CPU when only
// ref-direct, which has no proxy process, was measured) is left out, and a
// stale file of that name removed. Each file is written to a temporary name
// and renamed, so a failed write (a full disk) leaves no empty SVG.
func WriteAll(dir string, s *stats.Summary, recs []result.Record) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	write := func(name string, f func(io.Writer) error) error {
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			if errors.Is(err, ErrNothingToDraw) {
				os.Remove(filepath.Join(dir, name))
				return nil
			}
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, name), buf.Bytes()); err != nil {
			return err
		}
		files = append(files, name)
		return nil
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
