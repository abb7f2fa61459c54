// Package chart draws wafbench's SVG charts with gonum/plot: throughput and
// cpu per request as grouped bars with confidence-interval whiskers, the
// latency percentile distribution of each workload from the merged HDR
// histograms, and the per-second stability of every trial as small
// multiples.
//
// Every chart keeps its legend outside the data area and its notes under
// it, so no text covers data; a test records every text box drawn and fails
// on overlaps. A mode has the registry's colour (modes.Palette) in every
// chart of a report.
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
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
	width  = 8 * vg.Inch
	Height = 4.5 * vg.Inch
)

// File names WriteAll produces inside its directory.
const (
	throughputFile = "throughput.svg"
	cpuFile        = "cpu.svg"
	seriesFile     = "per_second.svg"
)

// CPUFile is the chart of proxy CPU per request that WriteAll draws; the
// report opens with it.
const CPUFile = cpuFile

// ErrNothingToDraw reports a chart without a single drawable value.
var ErrNothingToDraw = errors.New("nothing to draw")

// latencyFile is the file name of the latency chart of one workload.
func latencyFile(w stats.WorkloadKey) string {
	return "latency_" + w.Workload + "_c" + strconv.Itoa(w.Conns) + ".svg"
}

// modeColor is the registry's colour of mode among the modes of s: a mode
// keeps its colour in every chart of one report.
func modeColor(s *stats.Summary, mode string) color.Color {
	return modes.Palette(s.Modes)[mode]
}

// Text sizes shared by the charts.
const (
	noteSize   = vg.Length(8.5) // notes under a chart
	legendSize = vg.Length(10)
)

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

// logTicks label a log axis at 1, 2 and 5 × 10ᵏ when it spans at most
// three decades, at every decade up to five, and at every other decade
// beyond (an adversarial run's CPU axis spans six: "10000000" and
// "100000000" a decade apart overlap), so a narrow range still gets labels;
// the other integer multiples are unlabelled minor ticks.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return nil
	}
	span := math.Log10(max / min)
	dense := span <= 3
	stride := 1.0
	if span > 5 {
		stride = 2
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 && math.Mod(e, stride) == 0 || dense && (m == 2 || m == 5) {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// niceCeil is the smallest of 1, 1.5, 2, 3, 5, 7 × 10ᵏ at or above v (> 0).
func niceCeil(v float64) float64 {
	dec := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.5, 2, 3, 5, 7, 10} {
		if m*dec >= v*(1-1e-12) {
			return m * dec
		}
	}
	return 10 * dec
}

// niceFloor is the largest of 1, 1.5, 2, 3, 5, 7 × 10ᵏ at or below v (> 0).
func niceFloor(v float64) float64 {
	dec := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{7, 5, 3, 2, 1.5, 1} {
		if m*dec <= v*(1+1e-12) {
			return m * dec
		}
	}
	return dec
}

func newPlot(title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Tick.Marker = plainTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// newLegend is a legend drawn beside a plot rather than in it (frame.draw).
func newLegend() *plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font.Size = legendSize
	l.Left, l.Top = true, true
	l.ThumbnailWidth = vg.Points(16)
	l.Padding = vg.Points(4)
	return &l
}

// newCanvas makes the canvas render draws on; tests may swap it.
var newCanvas = func(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) }

// render draws p on a Width × Height canvas, its legend moved beside it.
func render(w io.Writer, p *plot.Plot) error { return renderSized(w, p, width, Height) }

// renderSized draws p on a width × height canvas. A legend p carries is
// drawn in a column to the right of the plot instead of inside it, so that
// it never covers data.
func renderSized(w io.Writer, p *plot.Plot, width, height vg.Length) error {
	var side *plot.Legend
	leg := p.Legend
	if leg.Rectangle(draw.Canvas{}).Size().Y > 0 {
		leg.Top, leg.Left = true, true
		leg.XOffs, leg.YOffs = 0, 0
		if leg.Padding < vg.Points(4) {
			leg.Padding = vg.Points(4)
		}
		side = &leg
		p.Legend = plot.NewLegend()
	}
	return newFrame(p, side, nil).render(w, width, height)
}

// frame lays out one plot with its legend in a column to the right of the
// plot and notes in lines under it: neither can cover data. It also draws
// the plot's axis labels itself, centred on the data area: gonum reserves
// room for a centred label at the arithmetic middle of the axis range,
// which on a log axis lies near its end, and so shrinks the data area for
// nothing (plot v0.17 verticalAxis/horizontalAxis GlyphBoxes).
type frame struct {
	plot           *plot.Plot
	legend         *plot.Legend // nil or empty: none
	notes          []string     // one line each, under the plot
	xLabel, yLabel axisLabel
}

// axisLabel is what a frame draws of an axis label.
type axisLabel struct {
	Text    string
	Padding vg.Length
	Style   text.Style
}

// newFrame makes the frame of p, taking its axis labels over.
func newFrame(p *plot.Plot, legend *plot.Legend, notes []string) frame {
	f := frame{plot: p, legend: legend, notes: notes,
		xLabel: axisLabel{p.X.Label.Text, p.X.Label.Padding, p.X.Label.TextStyle},
		yLabel: axisLabel{p.Y.Label.Text, p.Y.Label.Padding, p.Y.Label.TextStyle}}
	p.X.Label.Text, p.Y.Label.Text = "", ""
	return f
}

// noteStyle is the style of a frame's notes.
func noteStyle() text.Style {
	sty := plot.New().Title.TextStyle
	sty.Font.Size = noteSize
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	return sty
}

// legendWidth is the width the frame's legend column takes, 0 without one.
func (f frame) legendWidth(c draw.Canvas) vg.Length {
	if f.legend == nil {
		return 0
	}
	r := f.legend.Rectangle(c)
	if r.Size().Y == 0 {
		return 0
	}
	return r.Size().X + vg.Points(14)
}

// notesHeight is the height of the frame's notes.
func (f frame) notesHeight() vg.Length {
	if len(f.notes) == 0 {
		return 0
	}
	sty := noteStyle()
	return vg.Length(len(f.notes))*sty.Height("Xg") + vg.Points(6)
}

// labelSpace is the room an axis label takes across its axis.
func labelSpace(l axisLabel) vg.Length {
	if l.Text == "" {
		return 0
	}
	return l.Style.Height(l.Text) + l.Padding
}

// dataArea is where f's plot puts its data inside a canvas of the given
// size: Draw the plot into it with the same canvas to get the same layout.
func (f frame) dataArea(width, height vg.Length) draw.Canvas {
	return f.plot.DataCanvas(f.plotCanvas(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: width, Y: height}}}))
}

// framePad keeps the title's and the rotated axis label's font boxes
// inside the canvas.
const framePad = vg.Length(3)

func (f frame) plotCanvas(c draw.Canvas) draw.Canvas {
	return draw.Crop(c, framePad+labelSpace(f.yLabel), -f.legendWidth(c), f.notesHeight()+labelSpace(f.xLabel), -framePad)
}

// draw draws the frame onto c.
func (f frame) draw(c draw.Canvas) {
	pc := f.plotCanvas(c)
	f.plot.Draw(pc)
	da := f.plot.DataCanvas(pc)
	if l := f.yLabel; l.Text != "" {
		sty := l.Style
		sty.Rotation += math.Pi / 2
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		x := pc.Min.X - l.Padding - sty.FontExtents().Descent
		c.FillText(sty, vg.Point{X: x, Y: (da.Min.Y + da.Max.Y) / 2}, l.Text)
	}
	if l := f.xLabel; l.Text != "" {
		sty := l.Style
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		y := pc.Min.Y - labelSpace(l) + sty.FontExtents().Descent
		c.FillText(sty, vg.Point{X: (da.Min.X + da.Max.X) / 2, Y: y}, l.Text)
	}
	if lw := f.legendWidth(c); lw > 0 {
		lc := c
		lc.Min.X = c.Max.X - lw + vg.Points(8)
		lc.Max.Y = da.Max.Y
		f.legend.Draw(lc)
	}
	if len(f.notes) > 0 {
		sty := noteStyle()
		lh := sty.Height("Xg")
		y := c.Min.Y + vg.Points(3)
		for i := len(f.notes) - 1; i >= 0; i-- {
			c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(6), Y: y}, f.notes[i])
			y += lh
		}
	}
}

func (f frame) render(w io.Writer, width, height vg.Length) error {
	c := newCanvas(width, height)
	f.draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

// hasCI reports whether e carries a finite confidence interval.
func hasCI(e stats.Estimate) bool {
	return e.Lo > 0 && !math.IsInf(e.Lo, 0) && !math.IsInf(e.Hi, 0) && !math.IsNaN(e.Lo) && !math.IsNaN(e.Hi)
}

// throughput draws median req/s per workload (rows) and mode (bars) on a log
// scale, with whiskers at the 95 % CI of the median where it is finite.
func throughput(w io.Writer, s *stats.Summary) error {
	return groupedBars(w, s, "Throughput (median over repeats)", "requests/s",
		func(g *stats.Group) stats.Estimate { return g.ReqPerS })
}

// cpu draws median Envoy CPU µs per request per workload and mode on a log
// scale, with whiskers at the 95 % CI of the median where it is finite.
func cpu(w io.Writer, s *stats.Summary) error {
	return groupedBars(w, s, "Envoy CPU per request (median over repeats)", "CPU µs/request",
		func(g *stats.Group) stats.Estimate { return g.CPUUsPerReq })
}

// noCIMark follows the value of a bar that has no confidence interval.
const noCIMark = "*"

// ciNote says which bars carry whiskers and why the others do not.
func ciNote(withCI, without int, ns map[int]bool) string {
	var nl []string
	for _, n := range slices.Sorted(maps.Keys(ns)) {
		nl = append(nl, strconv.Itoa(n))
	}
	why := fmt.Sprintf("n = %s repeats; a %g%% CI of the median needs n ≥ 6", strings.Join(nl, ", "), 100*stats.Confidence)
	switch {
	case without == 0:
		return fmt.Sprintf("Whiskers: %g%% confidence interval of the median (order statistics).", 100*stats.Confidence)
	case withCI == 0:
		return "No whiskers: no group has a confidence interval (" + why + "). Bars are medians."
	}
	return fmt.Sprintf("Whiskers: %g%% CI of the median. %s marks %d bars without one (%s).", 100*stats.Confidence, noCIMark, without, why)
}

// groupedBars draws horizontal bars, one row per workload and one bar per
// mode, on a log scale: the modes differ by up to four orders of magnitude,
// which a linear axis flattens to nothing. Each bar is labelled with its
// value. gonum's BarChart cannot sit on a log axis (it starts at 0), hence
// the small hand-written plotter below. The axis ends just past the longest
// bar's label; the legend sits beside the plot.
func groupedBars(w io.Writer, s *stats.Summary, title, unit string, f func(*stats.Group) stats.Estimate) error {
	if len(s.Workloads) == 0 {
		return fmt.Errorf("chart %q: %w", title, ErrNothingToDraw)
	}
	n, k := len(s.Workloads), len(s.Modes)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = unit + " (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	// Rows top-down in the summary's workload order.
	names := make([]string, n)
	for i, wl := range s.Workloads {
		names[n-1-i] = wl.String()
	}
	p.NominalY(names...)
	p.Y.Padding = vg.Points(6)
	bars := &hbars{height: 0.8 / float64(k), label: p.X.Tick.Label}
	bars.label.Font.Size = vg.Points(7)
	leg := newLegend()
	lo, hi := math.Inf(1), math.Inf(-1)
	withCI, without := 0, 0
	ns := map[int]bool{}
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
			b := hbar{y: float64(n-1-j) + bars.height*(float64(k-1)/2-float64(i)), v: e.Median, color: c, label: formatValue(e.Median)}
			if hasCI(e) {
				b.lo, b.hi = e.Lo, e.Hi
				lo, hi = math.Min(lo, e.Lo), math.Max(hi, e.Hi)
				withCI++
			} else {
				b.label += noCIMark
				without++
				ns[e.N] = true
			}
			lo, hi = math.Min(lo, e.Median), math.Max(hi, e.Median)
			bars.bars = append(bars.bars, b)
		}
		leg.Add(m, swatch{c})
	}
	if math.IsInf(lo, 0) {
		return fmt.Errorf("chart %q: no positive values: %w", title, ErrNothingToDraw)
	}
	p.Add(bars)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.X.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.X.Max = niceCeil(hi * 1.05)
	height := vg.Inch + vg.Length(n*k)*0.14*vg.Inch
	if height < Height {
		height = Height
	}
	fr := newFrame(p, leg, []string{ciNote(withCI, without, ns)})
	// Widen the axis until every value label fits inside the data area.
	p.X.Max = bars.fitMax(fr.dataArea(width, height), p.X.Min, p.X.Max)
	return fr.render(w, width, height)
}

// hbar is one horizontal bar: a value at a row position, with an optional
// 95 % interval (lo = hi = 0 when there is none) and the label printed
// beside it.
type hbar struct {
	y, v, lo, hi float64
	color        color.Color
	label        string
}

// end is where the bar and its whisker end on the value axis.
func (b hbar) end() float64 { return math.Max(b.v, b.hi) }

// hbars draws bars from the left edge of a log-scaled X axis to their value,
// whiskers for their intervals and the value as text beside each bar.
type hbars struct {
	bars   []hbar
	height float64 // in Y data units
	label  text.Style
}

// labelGap is the space between a bar's end and its label.
const labelGap = vg.Length(3)

// fitMax returns the smallest nice axis maximum ≥ max at which every bar's
// label, drawn after the bar's end, stays inside the data area dc of a log
// axis starting at min.
func (hb *hbars) fitMax(dc draw.Canvas, min, max float64) float64 {
	width := float64(dc.Size().X)
	if width <= 0 {
		return max
	}
	a := math.Log10(min)
	need := math.Log10(max)
	for _, b := range hb.bars {
		// The label takes a share fr of the axis width:
		// log(max) − log(end) ≥ fr·(log(max) − a).
		fr := float64(hb.label.Width(b.label)+labelGap+vg.Points(2)) / width
		if fr >= 0.9 {
			continue
		}
		if l := (math.Log10(b.end()) - fr*a) / (1 - fr); l > need {
			need = l
		}
	}
	return niceCeil(math.Pow(10, need))
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
		c.FillText(sty, vg.Point{X: end + labelGap, Y: trY(b.y)}, b.label)
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
	// Inset from the entry's box, so that swatches of adjacent entries
	// never touch and none reaches into its label.
	r := c.Rectangle
	in := vg.Points(1.5)
	c.FillPolygon(s.color, []vg.Point{{X: r.Min.X, Y: r.Min.Y + in}, {X: r.Max.X, Y: r.Min.Y + in}, {X: r.Max.X, Y: r.Max.Y - in}, {X: r.Min.X, Y: r.Max.Y - in}})
}

// WriteAll renders every chart of a run into dir (created if needed) and
// returns the file names written, in a fixed order: throughput, CPU, one
// latency percentile-distribution chart per workload, the per-second
// stability small multiples.
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
	if err := write(throughputFile, func(w io.Writer) error { return throughput(w, s) }); err != nil {
		return files, err
	}
	if err := write(cpuFile, func(w io.Writer) error { return cpu(w, s) }); err != nil {
		return files, err
	}
	for _, wl := range s.Workloads {
		if err := write(latencyFile(wl), func(w io.Writer) error { return latency(w, s, recs, wl) }); err != nil {
			return files, err
		}
	}
	if err := write(seriesFile, func(w io.Writer) error { return stability(w, s, recs) }); err != nil {
		return files, err
	}
	return files, nil
}
