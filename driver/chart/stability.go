package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// Small-multiple panel size.
const (
	panelWidth  = 1.9 * vg.Inch
	panelHeight = 1.05 * vg.Inch
)

// driftColor marks the drift flag of a panel.
var driftColor = color.RGBA{0xb2, 0x18, 0x2b, 0xff}

// trialSeries is the per-second series of one valid record, relative to
// its group's median req/s, in percent.
type trialSeries struct {
	trial   int
	rel     []float64
	flagged bool
}

// seriesOf is the usable per-second buckets of r (the buckets the drift
// check uses: a trailing partial second dropped) relative to median, in
// percent.
func seriesOf(r *result.Record, median float64) trialSeries {
	d := stats.CheckDrift(r)
	ps := r.PerSecond[:d.Seconds]
	t := trialSeries{trial: r.Trial, flagged: d.Flagged}
	for _, v := range ps {
		t.rel = append(t.rel, 100*(float64(v)/median-1))
	}
	return t
}

// medianSeries is the per-second median over the trials that have that
// second.
func medianSeries(ts []trialSeries) plotter.XYs {
	var out plotter.XYs
	for i := 0; ; i++ {
		var col []float64
		for _, t := range ts {
			if i < len(t.rel) {
				col = append(col, t.rel[i])
			}
		}
		if len(col) == 0 {
			return out
		}
		out = append(out, plotter.XY{X: float64(i + 1), Y: stats.MedianOf(col)})
	}
}

func xysOf(rel []float64) plotter.XYs {
	out := make(plotter.XYs, len(rel))
	for i, v := range rel {
		out[i] = plotter.XY{X: float64(i + 1), Y: v}
	}
	return out
}

// pctTicks label a linear axis in percent ("-10%", "0%", "+10%"), without
// minor ticks; blank ones leave the labels out (inner panels).
type pctTicks struct{ blank bool }

func (t pctTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, tk := range (plot.DefaultTicks{}).Ticks(min, max) {
		if tk.IsMinor() {
			continue
		}
		v := tk.Value
		if math.Abs(v) < 1e-9 {
			v = 0
		}
		tk.Label = strconv.FormatFloat(v, 'f', -1, 64) + "%"
		if v > 0 {
			tk.Label = "+" + tk.Label
		}
		if t.blank {
			tk.Label = ""
		}
		ts = append(ts, tk)
	}
	return ts
}

// panelGrid draws grid lines at the labelled ticks of unlabelled markers
// (plotter.Grid skips ticks without a label).
type panelGrid struct{ x, y plot.Ticker }

func (g panelGrid) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := plotter.DefaultGridLineStyle
	for _, tk := range g.x.Ticks(p.X.Min, p.X.Max) {
		if x := trX(tk.Value); !tk.IsMinor() {
			c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		}
	}
	for _, tk := range g.y.Ticks(p.Y.Min, p.Y.Max) {
		if y := trY(tk.Value); !tk.IsMinor() {
			c.StrokeLine2(ls, c.Min.X, y, c.Max.X, y)
		}
	}
}

// secondTicks label whole seconds, at most about six of them.
type secondTicks struct{ blank bool }

func (t secondTicks) Ticks(min, max float64) []plot.Tick {
	step := math.Max(1, math.Ceil((max-min)/6))
	var ts []plot.Tick
	for v := math.Ceil(min); v <= max+1e-9; v += step {
		tk := plot.Tick{Value: v}
		if !t.blank {
			tk.Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ts = append(ts, tk)
	}
	return ts
}

// lighten mixes c with white: share 0 is c, 1 is white.
func lighten(c color.Color, share float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(float64(v>>8)*(1-share) + 255*share + 0.5) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}

// stability draws the per-second completions of every valid trial as small
// multiples: one row per workload, one column per mode. Each panel shows
// every trial thin and the per-second median over trials bold, relative to
// the group's median req/s over repeats (so a panel shows both the drift
// inside a window and the spread between repeats); trials the drift check
// flags (stats.CheckDrift) are dashed and the panel says how many.
// MaxStabilityPanels bounds the per-second chart: one panel per workload ×
// mode, so an adversarial sweep of 55 points over 11 modes would draw 605
// panels (1.3 MB of SVG) that no one can read. Past it the chart is left
// out; the steady-state table still reports every flagged window.
const MaxStabilityPanels = 200

func stability(w io.Writer, s *stats.Summary, recs []result.Record) error {
	cells, maxSec, maxAbs := stabilitySeries(s, recs)
	if len(cells) == 0 {
		return fmt.Errorf("stability chart: no per-second data: %w", ErrNothingToDraw)
	}
	if n := len(s.Workloads) * len(s.Modes); n > MaxStabilityPanels {
		return fmt.Errorf("stability chart: %d panels: %w", n, ErrNothingToDraw)
	}
	rng := niceCeil(math.Max(maxAbs*1.05, 200*stats.DriftLimit))
	rows, cols := len(s.Workloads), len(s.Modes)
	plots := make([][]*plot.Plot, rows)
	flagged, trials := 0, 0
	for i, wl := range s.Workloads {
		plots[i] = make([]*plot.Plot, cols)
		for j, m := range s.Modes {
			p := stabilityPanel(wl, maxSec, rng, i == rows-1, j == 0)
			series := cells[stats.Key{Mode: m, Workload: wl.Workload, Conns: wl.Conns}]
			nf, err := addTrials(p, series, modeColor(s, m))
			if err != nil {
				return fmt.Errorf("stability chart %s %s: %w", m, wl, err)
			}
			trials += len(series)
			flagged += nf
			plots[i][j] = p
		}
	}
	notes := wrapNotes([]string{
		fmt.Sprintf("Thin: one trial each (%d trials); bold: the median per second over a panel's trials. Dashed, and counted in red over the panel: "+
			"a trial whose second-half mean differs from its first-half mean by more than %g%% (steady-state check; %d flagged). "+
			"A trailing partial second is left out.", trials, 100*stats.DriftLimit, flagged),
	}, max(width, vg.Length(cols)*panelWidth+vg.Inch))
	return drawMultiples(w, s, plots, "Per-second completions relative to each group's median req/s over repeats", notes)
}

// stabilitySeries are the per-second series of recs' valid trials by
// group, relative to the group's median req/s, with the longest series'
// length and the largest relative deviation.
func stabilitySeries(s *stats.Summary, recs []result.Record) (cells map[stats.Key][]trialSeries, maxSec int, maxAbs float64) {
	cells = map[stats.Key][]trialSeries{}
	for i := range recs {
		r := &recs[i]
		if !stats.Valid(r) || len(r.PerSecond) == 0 {
			continue
		}
		k := stats.Key{Mode: r.Mode, Workload: r.Workload, Conns: r.Conns}
		g := s.Group(k)
		if g == nil || !(g.ReqPerS.Median > 0) {
			continue
		}
		t := seriesOf(r, g.ReqPerS.Median)
		if len(t.rel) == 0 {
			continue
		}
		cells[k] = append(cells[k], t)
		maxSec = max(maxSec, len(t.rel))
		for _, v := range t.rel {
			maxAbs = math.Max(maxAbs, math.Abs(v))
		}
	}
	return cells, maxSec, maxAbs
}

// stabilityPanel is an empty panel of the stability chart: axes over
// maxSec seconds and ±rng, tick labels only on the bottom row and the left
// column, the workload named on the left, and the zero line.
func stabilityPanel(wl stats.WorkloadKey, maxSec int, rng float64, bottom, left bool) *plot.Plot {
	p := plot.New()
	p.X.Min, p.X.Max = 1, math.Max(2, float64(maxSec))
	p.Y.Min, p.Y.Max = -rng, rng
	p.X.Tick.Marker = secondTicks{blank: !bottom}
	p.Y.Tick.Marker = pctTicks{blank: !left}
	p.X.Tick.Label.Font.Size = vg.Points(7)
	p.Y.Tick.Label.Font.Size = vg.Points(7)
	p.X.Padding, p.Y.Padding = vg.Points(2), vg.Points(2)
	p.Title.TextStyle.Font.Size = vg.Points(8)
	p.Title.Padding = vg.Points(2)
	if left {
		p.Y.Label.Text = wl.String()
		p.Y.Label.TextStyle.Font.Size = vg.Points(8)
	}
	if bottom {
		p.X.Label.Text = "second"
		p.X.Label.TextStyle.Font.Size = vg.Points(8)
	}
	p.Add(panelGrid{x: secondTicks{}, y: pctTicks{}})
	zero, _ := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 0}, {X: p.X.Max, Y: 0}})
	zero.Color, zero.Width = color.Gray{0x60}, vg.Points(0.5)
	p.Add(zero)
	return p
}

// addTrials draws a panel's trials thin (flagged ones dashed) and their
// per-second median bold in col, and titles the panel with the drift
// count; it returns how many trials are flagged.
func addTrials(p *plot.Plot, series []trialSeries, col color.Color) (int, error) {
	if len(series) == 0 {
		p.Title.Text = "no per-second data"
		p.Title.TextStyle.Color = color.Gray{0x70}
		return 0, nil
	}
	nf := 0
	for _, t := range series {
		l, err := plotter.NewLine(xysOf(t.rel))
		if err != nil {
			return 0, fmt.Errorf("trial %d: %w", t.trial, err)
		}
		l.Color, l.Width = lighten(col, 0.45), vg.Points(0.6)
		if t.flagged {
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			l.Color = lighten(col, 0.2)
			nf++
		}
		p.Add(l)
	}
	med, err := plotter.NewLine(medianSeries(series))
	if err != nil {
		return 0, fmt.Errorf("median: %w", err)
	}
	med.Color, med.Width = col, vg.Points(2)
	p.Add(med)
	if nf > 0 {
		p.Title.Text = fmt.Sprintf("drift: %d of %d trials", nf, len(series))
		p.Title.TextStyle.Color = driftColor
	}
	return nf, nil
}

// drawMultiples lays out plots (rows of workloads, columns of s's modes)
// under title, with each mode named above its column in its colour and
// notes below, and writes the SVG.
func drawMultiples(w io.Writer, s *stats.Summary, plots [][]*plot.Plot, title string, notes []string) error {
	rows, cols := len(plots), len(s.Modes)
	head := plot.New().Title.TextStyle
	head.Font.Size = vg.Points(12)
	head.XAlign, head.YAlign = draw.XCenter, draw.YTop
	colHead := head
	colHead.Font.Size = vg.Points(9)
	colHead.YAlign = draw.YBottom
	// A column is at least as wide as its head, the mode's name, so long
	// build names (modsecurity@3.0.14-pgo-mimalloc-ctype) neither leave the
	// canvas nor run into the next column's.
	colWidth := panelWidth
	for _, m := range s.Modes {
		colWidth = max(colWidth, colHead.Width(m)+vg.Points(12))
	}
	width := max(width, vg.Length(cols)*colWidth+vg.Inch)
	// A row is at least as tall as its rotated workload label, so long
	// names (swept points such as headers_curve@load=100%/c16) never run
	// into the next row's.
	rowHeight := panelHeight
	for i := range plots {
		l := plots[i][0].Y.Label
		rowHeight = max(rowHeight, l.TextStyle.Width(l.Text)+vg.Points(24))
	}
	height := vg.Length(rows)*rowHeight + 0.9*vg.Inch
	c := newCanvas(width, height)
	dc := draw.New(c)
	dc.FillText(head, vg.Point{X: width / 2, Y: height - vg.Points(4)}, title)
	nsty := noteStyle()
	lh := nsty.Height("Xg")
	for i, n := range notes {
		dc.FillText(nsty, vg.Point{X: vg.Points(6), Y: vg.Points(3) + lh*vg.Length(len(notes)-1-i)}, n)
	}
	grid := draw.Crop(dc, framePad, -vg.Points(6), lh*vg.Length(len(notes))+vg.Points(8), -(head.Height(title) + colHead.Height("M") + vg.Points(14)))
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(4), PadY: vg.Points(6), PadLeft: vg.Points(4)}
	canvases := plot.Align(plots, tiles, grid)
	// Column heads: each mode in its colour, above its column.
	for j, m := range s.Modes {
		colHead.Color = modeColor(s, m)
		da := plots[0][j].DataCanvas(canvases[0][j])
		x := (da.Min.X + da.Max.X) / 2
		dc.FillText(colHead, vg.Point{X: x, Y: grid.Max.Y + vg.Points(4)}, m)
	}
	for i := range plots {
		for j, p := range plots[i] {
			p.Draw(canvases[i][j])
		}
	}
	_, err := c.WriteTo(w)
	return err
}
