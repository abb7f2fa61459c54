package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"wafbench/driver/load"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// nines is the position of quantile q (0 ≤ q < 1) on a percentile axis:
// −log₁₀(1−q), so 90 % is 1, 99 % is 2, 99.9 % is 3, as HdrHistogram's
// percentile plots space them.
func nines(q float64) float64 { return -math.Log10(1 - q) }

// ninesStep is the spacing of the points of a percentile curve, in nines.
const ninesStep = 0.025

// maxGap is how far right of the last percentile the "max" column sits, in
// nines.
const maxGap = 0.7

// ninesTicks label a nines axis at 50 %, 90 %, 99 %, … up to top and the
// max column at maxAt.
type ninesTicks struct{ top, maxAt float64 }

func (t ninesTicks) Ticks(min, max float64) []plot.Tick {
	ts := []plot.Tick{{Value: nines(0.5), Label: "50%"}}
	for k := 1; float64(k) <= t.top+1e-9; k++ {
		l := "90%"
		if k > 1 {
			l = "99." + strings.Repeat("9", k-2) + "%"
			l = strings.Replace(l, ".%", "%", 1)
		}
		ts = append(ts, plot.Tick{Value: float64(k), Label: l})
	}
	return append(ts, plot.Tick{Value: t.maxAt, Label: "max"})
}

// mergedHists pools the decoded histograms of the valid records of wl by
// mode; repeats counts the records pooled per mode. A record without a
// histogram adds nothing; a histogram that does not decode is an error.
func mergedHists(recs []result.Record, wl stats.WorkloadKey) (hists map[string]*hdrhistogram.Histogram, repeats map[string]int, err error) {
	hists, repeats = map[string]*hdrhistogram.Histogram{}, map[string]int{}
	for i := range recs {
		r := &recs[i]
		if !stats.Valid(r) || r.Workload != wl.Workload || r.Conns != wl.Conns || r.HistBase64 == "" {
			continue
		}
		h, err := load.DecodeHist(r.HistBase64)
		if err != nil {
			return nil, nil, fmt.Errorf("trial %d %s %s: %w", r.Trial, r.Mode, wl, err)
		}
		if hists[r.Mode] == nil {
			hists[r.Mode] = load.Merge()
		}
		hists[r.Mode].Merge(h)
		repeats[r.Mode]++
	}
	return hists, repeats, nil
}

// loadModel states how the records of wl were driven, in one sentence.
func loadModel(recs []result.Record, wl stats.WorkloadKey) string {
	var open []string
	closed := false
	for i := range recs {
		r := &recs[i]
		if r.Workload != wl.Workload || r.Conns != wl.Conns || !stats.Valid(r) {
			continue
		}
		if r.Load == "open" && r.RateRequestedPerS > 0 {
			if s := strconv.FormatFloat(r.RateRequestedPerS, 'f', -1, 64); !slices.Contains(open, s) {
				open = append(open, s)
			}
		} else {
			closed = true
		}
	}
	conns := fmt.Sprintf("%d connection", wl.Conns)
	if wl.Conns != 1 {
		conns += "s"
	}
	var parts []string
	if closed {
		parts = append(parts, "closed loop, "+conns+" (a connection sends its next request when the answer arrives, so "+
			"queueing a fixed-rate client would see is not in these latencies: coordinated omission)")
	}
	if len(open) > 0 {
		slices.Sort(open)
		parts = append(parts, "open loop at "+strings.Join(open, ", ")+" req/s requested, "+conns+
			" (latency measured from each request's intended send time)")
	}
	return "Load model: " + strings.Join(parts, "; ") + "."
}

// latency draws the latency percentile distribution of one workload, as
// HdrHistogram users read it: x is the percentile on a "nines" scale (50 %,
// 90 %, 99 %, 99.9 %, … spaced by −log₁₀(1−p)), y the latency on a log
// scale, one curve per mode from the histograms of all its repeats merged,
// and each mode's maximum in a column of its own. A curve ends where its
// samples end (the 1/N quantile). A mode whose records carry no histogram
// is drawn as points at the medians of its recorded p50, p90, p99 and
// p99.9. The load model is stated under the plot.
func latency(w io.Writer, s *stats.Summary, recs []result.Record, wl stats.WorkloadKey) error {
	hists, repeats, err := mergedHists(recs, wl)
	if err != nil {
		return fmt.Errorf("latency chart %s: %w", wl, err)
	}
	var curves []latencyCurve
	var pooled, fallback []string
	for _, m := range s.Modes {
		g := s.Group(stats.Key{Mode: m, Workload: wl.Workload, Conns: wl.Conns})
		if g == nil {
			continue
		}
		c := latencyCurve{mode: m}
		if h := hists[m]; h != nil && h.TotalCount() > 0 {
			c.fromHistogram(h)
			pooled = append(pooled, fmt.Sprintf("%s %d", m, repeats[m]))
		} else {
			c.fromPercentiles(g)
			fallback = append(fallback, m)
		}
		if len(c.xys) > 0 || c.max > 0 {
			curves = append(curves, c)
		}
	}
	top, lo, hi := latencyRange(curves)
	if len(curves) == 0 || math.IsInf(lo, 0) {
		return fmt.Errorf("latency chart %s: no positive latency values: %w", wl, ErrNothingToDraw)
	}
	maxAt := math.Floor(top+1e-9) + maxGap
	if top > math.Floor(top+1e-9) {
		maxAt = top + maxGap
	}
	p := newPlot("Latency percentile distribution, "+wl.String(), "latency µs (log scale)")
	p.X.Label.Text = "percentile (log scale of 1/(1−p))"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	leg := newLegend()
	for _, c := range curves {
		if err := c.add(p, leg, modeColor(s, c.mode), maxAt); err != nil {
			return fmt.Errorf("latency chart %s mode %s: %w", wl, c.mode, err)
		}
	}
	p.X.Min, p.X.Max = nines(0.5)-0.1, maxAt+0.3
	p.X.Tick.Marker = ninesTicks{top: top, maxAt: maxAt}
	p.Y.Min, p.Y.Max = niceFloor(lo/1.05), niceCeil(hi*1.05)
	notes := []string{loadModel(recs, wl)}
	if len(pooled) > 0 {
		notes = append(notes, "Curves: every request of a mode's repeats pooled in one HDR histogram (repeats: "+strings.Join(pooled, ", ")+
			"); a curve ends at its 1/N quantile; dots: maximum.")
	}
	if len(fallback) > 0 {
		notes = append(notes, "No histograms recorded for "+strings.Join(fallback, ", ")+": triangles are medians over repeats of the recorded p50, p99, p99.9.")
	}
	return newFrame(p, leg, wrapNotes(notes, width)).render(w, width, Height)
}

// latencyCurve is one mode's curve of the latency chart.
type latencyCurve struct {
	mode   string
	xys    plotter.XYs // x on the nines scale, y in µs
	top    float64     // the highest x of the curve
	max    float64     // the maximum latency, µs; 0 for none
	points bool        // from recorded percentiles, not a histogram
}

// fromHistogram fills the curve from a merged histogram, up to its 1/N
// quantile.
func (c *latencyCurve) fromHistogram(h *hdrhistogram.Histogram) {
	end := math.Log10(float64(h.TotalCount()))
	for x := nines(0.5); ; x += ninesStep {
		if x > end {
			x = end
		}
		if x < nines(0.5) {
			break
		}
		q := 100 * (1 - math.Pow(10, -x))
		c.xys = append(c.xys, plotter.XY{X: x, Y: float64(h.ValueAtQuantile(q))})
		if x == end {
			break
		}
	}
	c.max = float64(h.Max())
	c.top = end
}

// fromPercentiles fills the curve with points at the group's medians of
// the recorded p50, p99 and p99.9.
func (c *latencyCurve) fromPercentiles(g *stats.Group) {
	for _, pc := range []struct {
		q float64
		e stats.Estimate
	}{{0.5, g.P50Us}, {0.99, g.P99Us}, {0.999, g.P999Us}} {
		if v := pc.e.Median; v > 0 && !math.IsInf(v, 0) {
			c.xys = append(c.xys, plotter.XY{X: nines(pc.q), Y: v})
			c.top = math.Max(c.top, nines(pc.q))
		}
	}
	if v := g.MaxUs.Median; v > 0 && !math.IsInf(v, 0) {
		c.max = v
	}
	c.points = true
}

// latencyRange is the highest x of the curves and their lowest and highest
// latency, maxima included.
func latencyRange(curves []latencyCurve) (top, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		top = math.Max(top, c.top)
		for _, xy := range c.xys {
			lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
		}
		if c.max > 0 {
			hi = math.Max(hi, c.max)
			lo = math.Min(lo, c.max)
		}
	}
	return top, lo, hi
}

// add draws the curve into p (a line, or triangles for recorded
// percentiles, and its maximum as a dot at maxAt) and names it in leg.
func (c *latencyCurve) add(p *plot.Plot, leg *plot.Legend, col color.Color, maxAt float64) error {
	var thumbs []plot.Thumbnailer
	if len(c.xys) > 0 {
		if c.points {
			sc, err := plotter.NewScatter(c.xys)
			if err != nil {
				return err
			}
			sc.Color, sc.Shape, sc.Radius = col, draw.PyramidGlyph{}, vg.Points(3)
			p.Add(sc)
			thumbs = append(thumbs, sc)
		} else {
			l, err := plotter.NewLine(c.xys)
			if err != nil {
				return err
			}
			l.Color, l.Width = col, vg.Points(1.5)
			p.Add(l)
			thumbs = append(thumbs, l)
		}
	}
	if c.max > 0 {
		sc, err := plotter.NewScatter(plotter.XYs{{X: maxAt, Y: c.max}})
		if err != nil {
			return err
		}
		sc.Color, sc.Shape, sc.Radius = col, draw.CircleGlyph{}, vg.Points(3)
		p.Add(sc)
	}
	leg.Add(c.mode, thumbs...)
	return nil
}

// wrapNotes breaks notes into lines that fit a chart of the given width.
func wrapNotes(notes []string, width vg.Length) []string {
	sty := noteStyle()
	limit := width - vg.Points(12)
	var out []string
	for _, n := range notes {
		line := ""
		for _, word := range strings.Fields(n) {
			next := word
			if line != "" {
				next = line + " " + word
			}
			if line != "" && sty.Width(next) > limit {
				out = append(out, line)
				line = "  " + word
				continue
			}
			line = next
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}
