package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CurvePoint is one offered rate of a latency–throughput curve: medians
// over repeats of the achieved rate (req/s) and the client latency
// percentiles (µs, coordinated-omission-corrected).
type CurvePoint struct {
	Offered, Achieved float64
	P50, P99, P999    float64
}

// CurveSeries is one mode's latency–throughput curve.
type CurveSeries struct {
	Mode   string
	Points []CurvePoint
}

// curveLines are the percentiles Curve draws, with their dash patterns.
var curveLines = []struct {
	name   string
	f      func(CurvePoint) float64
	dashes []vg.Length
}{
	{"p50", func(p CurvePoint) float64 { return p.P50 }, nil},
	{"p99", func(p CurvePoint) float64 { return p.P99 }, []vg.Length{vg.Points(5), vg.Points(3)}},
	{"p99.9", func(p CurvePoint) float64 { return p.P999 }, []vg.Length{vg.Points(1.5), vg.Points(2)}},
}

// Curve draws p50 (solid), p99 (dashed) and p99.9 (dotted) latency against
// the offered rate for each mode, both axes log-scaled, and the latency
// objective sloUs as a grey horizontal line.
func Curve(w io.Writer, title string, series []CurveSeries, sloUs float64) error {
	p := newPlot(title, "client latency µs (log scale)")
	p.X.Label.Text = "offered load, requests/s (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = decadeTicks{}, decadeTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	ms := make([]string, len(series))
	for i, s := range series {
		ms[i] = s.Mode
	}
	colors := seriesColors(ms)
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, cl := range curveLines {
			var xys plotter.XYs
			for _, pt := range s.Points {
				if v := cl.f(pt); pt.Offered > 0 && v > 0 && !math.IsInf(v, 0) {
					xys = append(xys, plotter.XY{X: pt.Offered, Y: v})
					xlo, xhi = math.Min(xlo, pt.Offered), math.Max(xhi, pt.Offered)
					ylo, yhi = math.Min(ylo, v), math.Max(yhi, v)
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(xys)
			if err != nil {
				return fmt.Errorf("curve chart %q, %s %s: %w", title, s.Mode, cl.name, err)
			}
			c := colors[s.Mode]
			l.Color, sc.Color = c, c
			l.Dashes = cl.dashes
			sc.Shape = draw.CircleGlyph{}
			sc.Radius = vg.Points(1.8)
			p.Add(l, sc)
			if cl.dashes == nil {
				p.Legend.Add(s.Mode, l)
			}
		}
	}
	for _, cl := range curveLines {
		key, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			return err
		}
		key.Color, key.Dashes = color.Black, cl.dashes
		p.Legend.Add(cl.name, key)
	}
	if math.IsInf(xlo, 0) {
		return fmt.Errorf("curve chart %q: %w", title, ErrNothingToDraw)
	}
	if sloUs > 0 {
		ylo, yhi = math.Min(ylo, sloUs), math.Max(yhi, sloUs)
		l, err := plotter.NewLine(plotter.XYs{{X: xlo / 1.5, Y: sloUs}, {X: xhi * 1.5, Y: sloUs}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 0x80}
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("p99 objective %g ms", sloUs/1000), l)
	}
	p.X.Min, p.X.Max = xlo/1.5, xhi*1.5
	p.Y.Min, p.Y.Max = logRange(ylo, yhi)
	return render(w, p)
}

// CurveAchieved draws the achieved rate against the offered rate for each
// mode on log–log axes, with the line achieved = offered: a mode that
// leaves it has saturated (or its client has).
func CurveAchieved(w io.Writer, title string, series []CurveSeries) error {
	p := newPlot(title, "achieved requests/s (log scale)")
	p.X.Label.Text = "offered load, requests/s (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = decadeTicks{}, decadeTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	ms := make([]string, len(series))
	for i, s := range series {
		ms[i] = s.Mode
	}
	colors := seriesColors(ms)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		var xys plotter.XYs
		for _, pt := range s.Points {
			if pt.Offered > 0 && pt.Achieved > 0 {
				xys = append(xys, plotter.XY{X: pt.Offered, Y: pt.Achieved})
				lo, hi = math.Min(lo, math.Min(pt.Offered, pt.Achieved)), math.Max(hi, math.Max(pt.Offered, pt.Achieved))
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("achieved chart %q, %s: %w", title, s.Mode, err)
		}
		c := colors[s.Mode]
		l.Color, sc.Color = c, c
		sc.Shape = draw.CircleGlyph{}
		p.Add(l, sc)
		p.Legend.Add(s.Mode, l, sc)
	}
	if math.IsInf(lo, 0) {
		return fmt.Errorf("achieved chart %q: %w", title, ErrNothingToDraw)
	}
	lo, hi = lo/1.5, hi*1.5
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return err
	}
	diag.Color = color.Gray{Y: 0x80}
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)
	p.Legend.Add("achieved = offered", diag)
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = lo, hi
	return render(w, p)
}
