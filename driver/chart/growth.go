package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"wafbench/driver/modes"
)

// GrowthPoint is one value of a swept curve: the median over repeats at X
// with its interval (Lo = Hi = 0: none drawn).
type GrowthPoint struct {
	X, Y, Lo, Hi float64
}

// GrowthSeries is one mode's curve; Label is its legend text (the mode,
// and its fitted exponent where there is one).
type GrowthSeries struct {
	Mode   string
	Label  string
	Points []GrowthPoint
}

// GrowthTick labels the X axis at a swept value ("4k" at 4096).
type GrowthTick struct {
	X     float64
	Label string
}

// FileSafe turns a workload or sweep name (json_real@size=4k) into a
// file-name part: every character but letters, digits, '-', '_' and '.'
// becomes '_'.
func FileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// seriesColors is the registry's colour of every mode of series, so a
// mode keeps its colour in every chart of a report.
func seriesColors(ms []string) map[string]color.RGBA { return modes.Palette(ms) }

// pointTicks puts labelled ticks at given values (the swept ones) and
// unlabelled ticks at each decade in between.
type pointTicks []GrowthTick

func (t pointTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, g := range t {
		if g.X >= min*(1-1e-9) && g.X <= max*(1+1e-9) {
			ts = append(ts, plot.Tick{Value: g.X, Label: g.Label})
		}
	}
	return ts
}

// decadeTicks labels a log axis at 1, 2 and 5 × 10ᵏ, or only at the
// decades (2 and 5 unlabelled) when it spans more than three.
type decadeTicks struct{}

func (decadeTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return nil
	}
	sparse := math.Log10(max/min) > 3.01
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		dec := math.Pow(10, e)
		for _, m := range []float64{1, 2, 5} {
			if v := m * dec; v >= min*(1-1e-9) && v <= max*(1+1e-9) {
				t := plot.Tick{Value: v}
				if m == 1 || !sparse {
					t.Label = strconv.FormatFloat(v, 'f', -1, 64)
				}
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// whiskers draws vertical interval bars.
type whiskers struct {
	pts   []GrowthPoint
	color color.Color
}

func (wk whiskers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := draw.LineStyle{Color: wk.color, Width: vg.Points(0.8)}
	cap := vg.Points(3)
	for _, pt := range wk.pts {
		if !(pt.Lo > 0 && pt.Hi > pt.Lo) {
			continue
		}
		x, lo, hi := trX(pt.X), trY(pt.Lo), trY(pt.Hi)
		c.StrokeLine2(ls, x, lo, x, hi)
		c.StrokeLine2(ls, x-cap, lo, x+cap, lo)
		c.StrokeLine2(ls, x-cap, hi, x+cap, hi)
	}
}

// logRange is the decade-padded range of positive values.
func logRange(lo, hi float64) (float64, float64) {
	return math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
}

// Growth draws each series as points joined by lines on log–log axes, with
// whiskers at the intervals; ticks label the swept values. Points with a
// non-positive X or Y (a log axis has no zero) are left out.
func Growth(w io.Writer, title, xlabel, ylabel string, ticks []GrowthTick, series []GrowthSeries) error {
	p := newPlot(title, ylabel+" (log scale)")
	p.X.Label.Text = xlabel + " (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = pointTicks(ticks)
	p.Y.Tick.Marker = decadeTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	ms := make([]string, len(series))
	for i, s := range series {
		ms[i] = s.Mode
	}
	colors := seriesColors(ms)
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	drawn := 0
	for _, s := range series {
		var xys plotter.XYs
		var pts []GrowthPoint
		for _, pt := range s.Points {
			if !(pt.X > 0 && pt.Y > 0) || math.IsInf(pt.Y, 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			pts = append(pts, pt)
			xlo, xhi = math.Min(xlo, pt.X), math.Max(xhi, pt.X)
			ylo, yhi = math.Min(ylo, pt.Y), math.Max(yhi, pt.Y)
			if pt.Lo > 0 && pt.Hi > pt.Lo {
				ylo, yhi = math.Min(ylo, pt.Lo), math.Max(yhi, pt.Hi)
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("growth chart %q, %s: %w", title, s.Mode, err)
		}
		c := colors[s.Mode]
		l.Color, sc.Color = c, c
		sc.Shape = draw.CircleGlyph{}
		p.Add(l, sc, whiskers{pts: pts, color: c})
		label := s.Label
		if label == "" {
			label = s.Mode
		}
		p.Legend.Add(label, l, sc)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("growth chart %q: %w", title, ErrNothingToDraw)
	}
	p.X.Min, p.X.Max = xlo/1.5, xhi*1.5
	p.Y.Min, p.Y.Max = logRange(ylo, yhi)
	return render(w, p)
}
