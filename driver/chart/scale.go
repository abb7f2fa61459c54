package chart

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Scale draws throughput against Envoy worker threads for each mode, with
// whiskers at the intervals and, dashed in the mode's colour, ideal linear
// scaling from the mode's point at the fewest workers. X is the worker
// count (GrowthPoint.X), Y req/s; both axes are log-scaled, so linear
// scaling is a line of slope one for every mode, however far apart their
// throughputs are.
func Scale(w io.Writer, title string, series []GrowthSeries) error {
	p := newPlot(title, "requests/s (log scale)")
	p.X.Label.Text = "Envoy worker threads (--concurrency, log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = decadeTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	ms := make([]string, len(series))
	for i, s := range series {
		ms[i] = s.Mode
	}
	colors := seriesColors(ms)
	workers := map[float64]bool{}
	xhi, ylo, yhi := 0.0, math.Inf(1), 0.0
	drawn := 0
	for _, s := range series {
		var xys plotter.XYs
		var pts []GrowthPoint
		for _, pt := range s.Points {
			if !(pt.X >= 1 && pt.Y > 0) || math.IsInf(pt.Y, 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			pts = append(pts, pt)
			workers[pt.X] = true
			xhi, yhi = math.Max(xhi, pt.X), math.Max(yhi, math.Max(pt.Y, pt.Hi))
			ylo = math.Min(ylo, pt.Y)
			if pt.Lo > 0 {
				ylo = math.Min(ylo, pt.Lo)
			}
		}
		if len(xys) == 0 {
			continue
		}
		c := colors[s.Mode]
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("scale chart %q, %s: %w", title, s.Mode, err)
		}
		l.Color, sc.Color = c, c
		sc.Shape = draw.CircleGlyph{}
		p.Add(l, sc, whiskers{pts: pts, color: c})
		label := s.Label
		if label == "" {
			label = s.Mode
		}
		p.Legend.Add(label, l, sc)
		if len(xys) > 1 {
			first := xys[0]
			last := xys[len(xys)-1]
			ideal, err := plotter.NewLine(plotter.XYs{first, {X: last.X, Y: first.Y * last.X / first.X}})
			if err != nil {
				return err
			}
			ideal.Color = c
			ideal.Width = vg.Points(0.7)
			ideal.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(ideal)
			yhi = math.Max(yhi, first.Y*last.X/first.X)
		}
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("scale chart %q: %w", title, ErrNothingToDraw)
	}
	var ticks []GrowthTick
	for x := 1.0; x <= xhi; x++ {
		if workers[x] {
			ticks = append(ticks, GrowthTick{X: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
		}
	}
	p.X.Tick.Marker = pointTicks(ticks)
	p.X.Min, p.X.Max = 0.8, xhi*1.25
	p.Y.Min, p.Y.Max = logRange(ylo, yhi)
	p.Legend.Add("dashed: linear scaling from the fewest workers")
	return render(w, p)
}
