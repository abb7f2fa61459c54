package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FrontierPoint is one configuration of one engine: its CPU per request
// and its two protection rates (fractions, with Wilson intervals).
type FrontierPoint struct {
	Config             string
	CPUUs              float64
	Stopped, StoppedLo float64
	StoppedHi          float64
	Refused, RefusedLo float64
	RefusedHi          float64
}

// Frontier colours: attacks stopped and legitimate requests refused.
var (
	stoppedColor = color.RGBA{0x1b, 0x9e, 0x77, 0xff}
	refusedColor = color.RGBA{0xd9, 0x5f, 0x02, 0xff}
)

// Frontier draws one engine's cost–protection frontier: for each
// configuration, CPU µs per request (x) against the percentage of attacks
// stopped and of legitimate requests refused (y), each point with its
// Wilson 95% interval and labelled with its configuration; a dashed line
// joins each series' points in order of CPU.
func Frontier(w io.Writer, title string, pts []FrontierPoint) error {
	if len(pts) == 0 {
		return fmt.Errorf("frontier chart %q: %w", title, ErrNothingToDraw)
	}
	p := newPlot(title, "% of requests (Wilson 95% interval)")
	p.X.Label.Text = "Envoy CPU µs per request"
	p.Legend.Top, p.Legend.Left = true, true
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, s := range []struct {
		name      string
		c         color.Color
		v, lo, hi func(FrontierPoint) float64
	}{
		{"attacks stopped", stoppedColor, func(f FrontierPoint) float64 { return f.Stopped }, func(f FrontierPoint) float64 { return f.StoppedLo }, func(f FrontierPoint) float64 { return f.StoppedHi }},
		{"legitimate refused", refusedColor, func(f FrontierPoint) float64 { return f.Refused }, func(f FrontierPoint) float64 { return f.RefusedLo }, func(f FrontierPoint) float64 { return f.RefusedHi }},
	} {
		var xys plotter.XYs
		var wk []GrowthPoint
		var labels []string
		for _, pt := range pts {
			if !(pt.CPUUs > 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.CPUUs, Y: 100 * s.v(pt)})
			wk = append(wk, GrowthPoint{X: pt.CPUUs, Y: 100 * s.v(pt), Lo: 100*s.lo(pt) + 1e-9, Hi: 100 * s.hi(pt)})
			labels = append(labels, pt.Config)
			xlo, xhi = math.Min(xlo, pt.CPUUs), math.Max(xhi, pt.CPUUs)
		}
		if len(xys) == 0 {
			return fmt.Errorf("frontier chart %q: %w", title, ErrNothingToDraw)
		}
		line := append(plotter.XYs(nil), xys...)
		sort.Slice(line, func(i, j int) bool { return line[i].X < line[j].X })
		l, sc, err := plotter.NewLinePoints(line)
		if err != nil {
			return fmt.Errorf("frontier chart %q: %w", title, err)
		}
		l.Color, l.Dashes = s.c, []vg.Length{vg.Points(3), vg.Points(2)}
		sc.Color, sc.Shape, sc.Radius = s.c, draw.CircleGlyph{}, vg.Points(3)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return fmt.Errorf("frontier chart %q: %w", title, err)
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Color = s.c
			lb.TextStyle[i].Font.Size = vg.Points(8)
		}
		lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
		p.Add(l, sc, whiskers{pts: wk, color: s.c}, lb)
		p.Legend.Add(s.name, sc)
	}
	pad := math.Max((xhi-xlo)*0.15, xhi*0.05)
	p.X.Min, p.X.Max = math.Max(0, xlo-pad), xhi+pad
	p.Y.Min, p.Y.Max = 0, 100
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.DefaultTicks{}, plot.DefaultTicks{}
	return render(w, p)
}
