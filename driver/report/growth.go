package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"wafbench/driver/chart"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/result"
	"wafbench/driver/stats"
	"wafbench/internal/atomicfile"
)

// DefaultSLO is the p99 objective of the latency–throughput section when a
// run recorded none (run --slo).
const DefaultSLO = 10 * time.Millisecond

// sloOf is the run's --slo, else DefaultSLO.
func sloOf(meta *result.Meta) time.Duration {
	if d, err := time.ParseDuration(meta.Flags["slo"]); err == nil && d > 0 {
		return d
	}
	return DefaultSLO
}

// paramConns is the sweep parameter of a plain workload measured at three
// or more connection counts.
const paramConns = profile.ParamConns

// minConnsPoints is how many connection counts make a plain workload a
// connections sweep.
const minConnsPoints = 3

// sweep is one swept curve: a workload (or sweep) at one connection count
// over its parameter, per mode and repeat.
type sweep struct {
	base    string
	param   string // profile.ParamSize, ParamArgs or paramConns
	conns   int    // 0 for a connections sweep
	xs      []float64
	labels  []string
	repeats []int
	modes   []string
	cost    map[string]stats.Curve // Envoy CPU µs/request
}

// title names the sweep in headings: "json_real, body size, 1 connection".
func (s *sweep) title() string {
	what := map[string]string{profile.ParamSize: "body size", profile.ParamArgs: "argument count", paramConns: "connections"}[s.param]
	if s.param == paramConns {
		return s.base + ", " + what
	}
	return s.base + ", " + what + ", " + strconv.Itoa(s.conns) + " conn"
}

func (s *sweep) chartFile() string {
	if s.param == paramConns {
		return "growth_" + chart.FileSafe(s.base) + "_conns.svg"
	}
	return "growth_" + chart.FileSafe(s.base) + "_c" + strconv.Itoa(s.conns) + ".svg"
}

func (s *sweep) xLabel() string {
	return map[string]string{profile.ParamSize: "body size, bytes", profile.ParamArgs: "form fields", paramConns: "client connections"}[s.param]
}

// usable are the records the growth sections read: valid, closed loop.
func usable(r *result.Record) bool {
	return stats.Valid(r) && r.Load != "open" && r.LoadFraction == 0
}

// sweepKey names one swept curve: a workload base, its parameter and the
// connection count (0 for a connections sweep).
type sweepKey struct {
	base, param string
	conns       int
}

// sweepCell is one measured point of a swept curve.
type sweepCell struct {
	mode   string
	repeat int
	x      float64
}

// collectSweeps finds every swept curve among recs, in a fixed order.
func collectSweeps(recs []result.Record) []*sweep {
	byKey := map[sweepKey]map[sweepCell]float64{}
	labels := map[sweepKey]map[float64]string{}
	add := func(k sweepKey, c sweepCell, label string, v float64) {
		if byKey[k] == nil {
			byKey[k], labels[k] = map[sweepCell]float64{}, map[float64]string{}
		}
		byKey[k][c] = v
		labels[k][c.x] = label
	}
	for i := range recs {
		r := &recs[i]
		if !usable(r) || !(r.CPU.UsPerRequest > 0) {
			continue
		}
		if pt, ok := profile.ParsePoint(r.Workload); ok {
			if pt.Param == profile.ParamSize || pt.Param == profile.ParamArgs {
				add(sweepKey{pt.Base, pt.Param, r.Conns}, sweepCell{r.Mode, r.Repeat, pt.Value}, pt.Label, r.CPU.UsPerRequest)
			}
			continue
		}
		add(sweepKey{r.Workload, paramConns, 0}, sweepCell{r.Mode, r.Repeat, float64(r.Conns)}, strconv.Itoa(r.Conns), r.CPU.UsPerRequest)
	}
	var out []*sweep
	for k, cells := range byKey {
		if (k.param == paramConns && len(labels[k]) < minConnsPoints) || len(labels[k]) < 2 {
			continue // a single point (a scale suite's one size) is no sweep
		}
		out = append(out, newSweep(k, cells, labels[k]))
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.param != b.param {
			return paramRank(a.param) < paramRank(b.param)
		}
		if a.base != b.base {
			return a.base < b.base
		}
		return a.conns < b.conns
	})
	return out
}

// newSweep builds the curve k from its cells and the label of each x.
func newSweep(k sweepKey, cells map[sweepCell]float64, labels map[float64]string) *sweep {
	s := &sweep{base: k.base, param: k.param, conns: k.conns, cost: map[string]stats.Curve{}}
	for x := range labels {
		s.xs = append(s.xs, x)
	}
	sort.Float64s(s.xs)
	for _, x := range s.xs {
		s.labels = append(s.labels, labels[x])
	}
	rs, ms := map[int]bool{}, map[string]bool{}
	for c := range cells {
		rs[c.repeat], ms[c.mode] = true, true
	}
	for r := range rs {
		s.repeats = append(s.repeats, r)
	}
	sort.Ints(s.repeats)
	for m := range ms {
		s.modes = append(s.modes, m)
	}
	modes.Sort(s.modes)
	for _, m := range s.modes {
		c := stats.Curve{X: s.xs}
		for _, r := range s.repeats {
			row := make([]float64, len(s.xs))
			for i, x := range s.xs {
				v, ok := cells[sweepCell{m, r, x}]
				row[i] = math.NaN()
				if ok {
					row[i] = v
				}
			}
			c.Y = append(c.Y, row)
		}
		s.cost[m] = c
	}
	return s
}

func paramRank(p string) int {
	return map[string]int{profile.ParamSize: 0, profile.ParamArgs: 1, paramConns: 2}[p]
}

// marginal is the cost of mode above the baseline in the same repeat and
// point; NaN where either is missing or the difference is not positive.
func (s *sweep) marginal(mode string) (stats.Curve, bool) {
	base, ok := s.cost[stats.Baseline]
	if !ok {
		return stats.Curve{}, false
	}
	c := s.cost[mode]
	out := stats.Curve{X: c.X}
	for r := range c.Y {
		row := make([]float64, len(c.X))
		for i := range c.X {
			row[i] = c.Y[r][i] - base.Y[r][i]
			if !(row[i] > 0) {
				row[i] = math.NaN()
			}
		}
		out.Y = append(out.Y, row)
	}
	return out, true
}

// fitPoints is the upper part of the sweep the exponent is fitted on: the
// largest half of the points with x > 0, at least three.
func fitPoints(xs []float64) []int {
	var pos []int
	for i, x := range xs {
		if x > 0 {
			pos = append(pos, i)
		}
	}
	n := max(3, (len(pos)+1)/2)
	if n >= len(pos) {
		return pos
	}
	return pos[len(pos)-n:]
}

func subCurve(c stats.Curve, idx []int) stats.Curve {
	out := stats.Curve{}
	for _, i := range idx {
		out.X = append(out.X, c.X[i])
	}
	for _, row := range c.Y {
		var r []float64
		for _, i := range idx {
			r = append(r, row[i])
		}
		out.Y = append(out.Y, r)
	}
	return out
}

// exponent is one mode's fitted cost exponent on a sweep.
type exponent struct {
	mode     string
	marginal bool // fitted on the cost above passthrough (else the raw cost)
	fit      stats.PowerFit
	ci       stats.Interval
	raw      stats.PowerFit // raw cost over every point, for contrast
	err      error
}

func (s *sweep) exponents() []exponent {
	idx := fitPoints(s.xs)
	var out []exponent
	for _, m := range s.modes {
		if !modes.IsWAF(m) {
			continue
		}
		e := exponent{mode: m}
		c, ok := s.marginal(m)
		e.marginal = ok
		if !ok {
			c = s.cost[m]
		}
		e.fit, e.ci, e.err = stats.Exponent(subCurve(c, idx))
		e.raw, _ = stats.FitPowerLaw(s.xs, s.cost[m].Medians())
		out = append(out, e)
	}
	return out
}

// fmtX prints a swept value as its parameter does (sizes as 4k).
func (s *sweep) fmtX(x float64) string {
	if math.IsNaN(x) {
		return noValue
	}
	if s.param == profile.ParamSize {
		if x >= 1024 {
			return f(x/1024, 1) + " KiB"
		}
		return f(x, 0) + " B"
	}
	if x == math.Trunc(x) {
		return f(x, 0)
	}
	return f(x, 1)
}

func (s *sweep) growthSeries(exps []exponent) ([]chart.GrowthTick, []chart.GrowthSeries) {
	var ticks []chart.GrowthTick
	for i, x := range s.xs {
		ticks = append(ticks, chart.GrowthTick{X: x, Label: s.labels[i]})
	}
	var series []chart.GrowthSeries
	for _, m := range s.modes {
		gs := chart.GrowthSeries{Mode: m, Label: m}
		for _, e := range exps {
			if e.mode == m && e.err == nil {
				gs.Label = fmt.Sprintf("%s  k = %s %s", m, f(e.fit.Slope, 2), ivText(e.ci, 2))
			}
		}
		c := s.cost[m]
		for i, x := range s.xs {
			var v []float64
			for _, row := range c.Y {
				if !math.IsNaN(row[i]) {
					v = append(v, row[i])
				}
			}
			if len(v) == 0 {
				continue
			}
			sort.Float64s(v)
			e := stats.Median(v)
			gs.Points = append(gs.Points, chart.GrowthPoint{X: x, Y: e.Median, Lo: v[0], Hi: v[len(v)-1]})
		}
		series = append(series, gs)
	}
	return ticks, series
}

func (s *sweep) draw(w io.Writer) error {
	ticks, series := s.growthSeries(s.exponents())
	return chart.Growth(w, "Envoy CPU per request vs "+s.title(), s.xLabel(), "Envoy CPU µs/request", ticks, series)
}

// ivText prints a bootstrap interval, "[–]" for none (withCI's form).
func ivText(iv stats.Interval, d int) string {
	if s := ci(iv.Lo, iv.Hi, d); s != noValue {
		return s
	}
	return "[" + noValue + "]"
}

// curve is one latency–throughput curve: a load sweep at one connection
// count, per mode and repeat.
type curve struct {
	base    string
	conns   int
	modes   []string
	points  map[string][]*result.Record // by mode, sorted by fraction then repeat
	repeats []int
}

func (c *curve) fileLatency() string {
	return "curve_" + chart.FileSafe(c.base) + "_c" + strconv.Itoa(c.conns) + ".svg"
}
func (c *curve) fileAchieved() string {
	return "curve_achieved_" + chart.FileSafe(c.base) + "_c" + strconv.Itoa(c.conns) + ".svg"
}

func collectCurves(recs []result.Record) []*curve {
	type key struct {
		base  string
		conns int
	}
	by := map[key]*curve{}
	for i := range recs {
		r := &recs[i]
		if !stats.Valid(r) || r.LoadFraction <= 0 {
			continue
		}
		pt, ok := profile.ParsePoint(r.Workload)
		if !ok || pt.Param != profile.ParamLoad {
			continue
		}
		k := key{pt.Base, r.Conns}
		c := by[k]
		if c == nil {
			c = &curve{base: pt.Base, conns: r.Conns, points: map[string][]*result.Record{}}
			by[k] = c
		}
		if _, seen := c.points[r.Mode]; !seen {
			c.modes = append(c.modes, r.Mode)
		}
		c.points[r.Mode] = append(c.points[r.Mode], r)
		if !slices.Contains(c.repeats, r.Repeat) {
			c.repeats = append(c.repeats, r.Repeat)
		}
	}
	var out []*curve
	for _, c := range by {
		modes.Sort(c.modes)
		sort.Ints(c.repeats)
		for _, rs := range c.points {
			sort.SliceStable(rs, func(i, j int) bool {
				if rs[i].LoadFraction != rs[j].LoadFraction {
					return rs[i].LoadFraction < rs[j].LoadFraction
				}
				return rs[i].Repeat < rs[j].Repeat
			})
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].base != out[j].base {
			return out[i].base < out[j].base
		}
		return out[i].conns < out[j].conns
	})
	return out
}

// fractions lists the load fractions of mode, ascending.
func (c *curve) fractions(mode string) []float64 {
	var fs []float64
	for _, r := range c.points[mode] {
		if !slices.Contains(fs, r.LoadFraction) {
			fs = append(fs, r.LoadFraction)
		}
	}
	return fs
}

func medianOf(rs []*result.Record, get func(*result.Record) float64) float64 {
	var v []float64
	for _, r := range rs {
		if x := get(r); x > 0 {
			v = append(v, x)
		}
	}
	return stats.MedianOf(v)
}

func (c *curve) at(mode string, frac float64) []*result.Record {
	var out []*result.Record
	for _, r := range c.points[mode] {
		if r.LoadFraction == frac {
			out = append(out, r)
		}
	}
	return out
}

func (c *curve) series() []chart.CurveSeries {
	var out []chart.CurveSeries
	for _, m := range c.modes {
		s := chart.CurveSeries{Mode: m}
		for _, fr := range c.fractions(m) {
			rs := c.at(m, fr)
			s.Points = append(s.Points, chart.CurvePoint{
				Offered:  medianOf(rs, func(r *result.Record) float64 { return r.RateRequestedPerS }),
				Achieved: medianOf(rs, func(r *result.Record) float64 { return r.RateAchievedPerS }),
				P50:      medianOf(rs, func(r *result.Record) float64 { return r.Latency.P50Us }),
				P99:      medianOf(rs, func(r *result.Record) float64 { return r.Latency.P99Us }),
				P999:     medianOf(rs, func(r *result.Record) float64 { return r.Latency.P999Us }),
			})
		}
		out = append(out, s)
	}
	return out
}

// sloRates is each repeat's highest offered rate holding the objective.
func (c *curve) sloRates(mode string, sloUs float64) ([]stats.SLORate, error) {
	byRepeat := map[int][]stats.LoadPoint{}
	for _, r := range c.points[mode] {
		byRepeat[r.Repeat] = append(byRepeat[r.Repeat], stats.LoadPoint{Offered: r.RateRequestedPerS, Achieved: r.RateAchievedPerS, P99Us: r.Latency.P99Us})
	}
	var out []stats.SLORate
	for _, rep := range c.repeats {
		if pts := byRepeat[rep]; len(pts) > 0 {
			s, err := stats.MaxRateAtSLO(pts, sloUs)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// scaleSet is throughput against Envoy worker count for one workload.
type scaleSet struct {
	wl      stats.WorkloadKey
	modes   []string
	workers []int
	rps     map[string]map[int][]float64 // mode -> workers -> req/s per record
	cpus    map[int][]int                // workers -> CPUs observed on Envoy's threads
}

func (s *scaleSet) file() string {
	return "scale_" + chart.FileSafe(s.wl.Workload) + "_c" + strconv.Itoa(s.wl.Conns) + ".svg"
}

// workersOf is the Envoy worker count of r: its own record, else the run's.
func workersOf(meta *result.Meta, r *result.Record) int {
	if r.EnvoyConcurrency > 0 {
		return r.EnvoyConcurrency
	}
	return max(meta.Concurrency, 1)
}

func collectScale(meta *result.Meta, recs []result.Record) []*scaleSet {
	by := map[stats.WorkloadKey]*scaleSet{}
	for i := range recs {
		r := &recs[i]
		if !usable(r) || modes.HostOf(r.Mode) != modes.Envoy || !(r.ReqPerS > 0) {
			continue
		}
		k := stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}
		s := by[k]
		if s == nil {
			s = &scaleSet{wl: k, rps: map[string]map[int][]float64{}, cpus: map[int][]int{}}
			by[k] = s
		}
		if s.rps[r.Mode] == nil {
			s.rps[r.Mode] = map[int][]float64{}
			s.modes = append(s.modes, r.Mode)
		}
		n := workersOf(meta, r)
		s.rps[r.Mode][n] = append(s.rps[r.Mode][n], r.ReqPerS)
		for _, t := range r.Affinity {
			if t.Process != "envoy" {
				continue
			}
			for _, c := range t.CPUs {
				if !slices.Contains(s.cpus[n], c) {
					s.cpus[n] = append(s.cpus[n], c)
				}
			}
		}
		if !slices.Contains(s.workers, n) {
			s.workers = append(s.workers, n)
		}
	}
	var out []*scaleSet
	for _, s := range by {
		modes.Sort(s.modes)
		sort.Ints(s.workers)
		for _, c := range s.cpus {
			sort.Ints(c)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].wl.Workload != out[j].wl.Workload {
			return out[i].wl.Workload < out[j].wl.Workload
		}
		return out[i].wl.Conns < out[j].wl.Conns
	})
	return out
}

func (s *scaleSet) series() []chart.GrowthSeries {
	var out []chart.GrowthSeries
	for _, m := range s.modes {
		gs := chart.GrowthSeries{Mode: m}
		for _, n := range s.workers {
			v := slices.Clone(s.rps[m][n])
			if len(v) == 0 {
				continue
			}
			sort.Float64s(v)
			gs.Points = append(gs.Points, chart.GrowthPoint{X: float64(n), Y: stats.Median(v).Median, Lo: v[0], Hi: v[len(v)-1]})
		}
		out = append(out, gs)
	}
	return out
}

// writeGrowthCharts renders the growth, latency–throughput and scale
// charts of g into dir (charts/), the files writeGrowth links.
func writeGrowthCharts(dir string, meta *result.Meta, g *growthFigures) error {
	write := func(name string, draw func(io.Writer) error) error {
		var buf bytes.Buffer
		if err := draw(&buf); err != nil {
			if errors.Is(err, chart.ErrNothingToDraw) {
				os.Remove(filepath.Join(dir, name))
				return nil
			}
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return atomicfile.WriteFile(filepath.Join(dir, name), buf.Bytes())
	}
	for _, s := range g.sweeps {
		if err := write(s.chartFile(), s.draw); err != nil {
			return err
		}
	}
	slo := float64(sloOf(meta).Microseconds())
	for _, c := range g.curves {
		title := c.base + ", " + strconv.Itoa(c.conns) + " conn"
		if err := write(c.fileLatency(), func(w io.Writer) error {
			return chart.Curve(w, "Latency vs offered load, "+title, c.series(), slo)
		}); err != nil {
			return err
		}
		if err := write(c.fileAchieved(), func(w io.Writer) error {
			return chart.CurveAchieved(w, "Achieved vs offered load, "+title, c.series())
		}); err != nil {
			return err
		}
	}
	for _, s := range g.scale {
		if len(s.workers) < 2 {
			continue
		}
		if err := write(s.file(), func(w io.Writer) error {
			return chart.Scale(w, "Throughput vs Envoy workers, "+s.wl.String(), s.series())
		}); err != nil {
			return err
		}
	}
	return nil
}

// drawable reports whether draw has something to draw.
func drawable(draw func(io.Writer) error) bool { return draw(io.Discard) == nil }

// growthFigures are the growth analyses of a run: its swept curves (with
// their fitted exponents), latency–throughput curves and worker-scaling
// sets, and the wall time of one block of repeats (for the repeats a
// verdict would take).
type growthFigures struct {
	sweeps []*sweep
	curves []*curve
	scale  []*scaleSet
	block  float64 // seconds
}

// analyseGrowth finds the run's sweeps, curves and scaling sets.
func analyseGrowth(meta *result.Meta, recs []result.Record) *growthFigures {
	cost := stats.EstimateCost(meta, recs)
	return &growthFigures{sweeps: collectSweeps(recs), curves: collectCurves(recs),
		scale: collectScale(meta, recs), block: cost.BlockS(cost.WindowS)}
}

// writeGrowth writes the growth sections: cost against each swept
// parameter with fitted exponents and crossovers, the latency–throughput
// curves with the highest rate holding the p99 objective, and throughput
// against Envoy workers. Nothing is written for a run without sweeps.
func writeGrowth(m *md, fig *figures) {
	g := fig.Growth
	if g == nil {
		return
	}
	writeSweeps(m, g.sweeps, g.block)
	writeCurves(m, fig.Meta, g.curves)
	writeScale(m, fig.Meta, g.scale)
}

func writeSweeps(m *md, sweeps []*sweep, block float64) {
	if len(sweeps) == 0 {
		return
	}
	m.p("## How cost grows")
	m.nl()
	m.p(sweepsMethod, stats.FitResamples, 100*crossShare)
	m.nl()
	for _, s := range sweeps {
		m.p("### %s", s.title())
		m.nl()
		if drawable(s.draw) {
			m.p("![growth %s](%s/%s)", s.title(), ChartsDir, s.chartFile())
			m.nl()
		}
		head := []string{map[string]string{profile.ParamSize: "body size", profile.ParamArgs: "fields", paramConns: "conns"}[s.param]}
		head = append(head, s.modes...)
		m.head(head...)
		meds := map[string][]float64{}
		for _, md := range s.modes {
			meds[md] = s.cost[md].Medians()
		}
		for i := range s.xs {
			row := []string{s.labels[i]}
			for _, md := range s.modes {
				row = append(row, f(meds[md][i], 1))
			}
			m.row(row...)
		}
		m.nl()
		writeExponents(m, s)
		writeCrossovers(m, s, block)
	}
}

// writeExponents is the table of a sweep's cost exponents.
func writeExponents(m *md, s *sweep) {
	exps := s.exponents()
	if len(exps) == 0 {
		return
	}
	idx := fitPoints(s.xs)
	rng := noValue
	if len(idx) > 0 {
		rng = s.labels[idx[0]] + "–" + s.labels[idx[len(idx)-1]]
	}
	m.head("mode", "cost exponent k ("+rng+")", "95% CI", "R²", "fitted on", "k, raw cost, whole range")
	for _, e := range exps {
		on := "marginal over passthrough"
		if !e.marginal {
			on = "raw cost (no passthrough in this run)"
		}
		if e.err != nil {
			m.row(e.mode, "–", "–", "–", on, f(e.raw.Slope, 2))
			continue
		}
		m.row(e.mode, f(e.fit.Slope, 2), ivText(e.ci, 2), f(e.fit.R2, 3), on, f(e.raw.Slope, 2))
	}
	m.nl()
	m.p("%d repeats resampled; with fewer than 6 the bootstrap has few distinct resamples and the interval is optimistic.", len(s.repeats))
	m.nl()
}

// sweepsMethod says how cost growth, exponents and crossovers are
// estimated; its verbs are the bootstrap resamples and the crossing share
// in percent.
const sweepsMethod = "Envoy CPU µs per request (all Envoy threads, schedstat), median over repeats, against each swept parameter. " +
	"**Cost exponent k**: the slope of a least-squares line through ln(cost) against ln(parameter), fitted to the WAF's " +
	"*marginal* cost (mode − passthrough in the same repeat and point) over the upper half of the range (the largest half " +
	"of the points, at least three). Marginal, because passthrough's own cost (proxying, buffering) is not the engine's; " +
	"the upper half, because at small sizes the rules' fixed per-request cost (headers, CRS set-up) hides how the " +
	"body-dependent part grows. k = 1 is linear growth, above 1 faster than linear. The interval is a 95%% percentile " +
	"bootstrap over whole repeats (%d resamples, fixed seed); k over the whole range of the raw cost is shown for contrast. " +
	"**Crossover**: where the median paired log-ratio of two modes' costs changes sign, interpolated in ln(parameter) " +
	"between the two points around it, with the same bootstrap. It is stated only when the medians in the table cross too " +
	"and at least %.0f%% of the resamples cross; its interval is then over the resamples that cross (conditional on a " +
	"crossing), and the share is given. **Cheaper throughout** is stated only when the paired-t 95%% interval of the " +
	"ratio excludes 1 on the same side at every point. Anything else is *not established*, with the repeats it would take " +
	"at the observed ratios and spread (estimated as in Verdicts)."

// crossShare is the share of bootstrap resamples that must show a crossing
// before the growth section states a crossover.
const crossShare = 0.95

// pointRatio is the paired ratio a ÷ b of two modes' costs at one point of
// a sweep: its geometric mean over repeats and paired-t 95% interval, as
// the paired ratios of the report compute it.
type pointRatio struct {
	label       string
	n           int
	geo, lo, hi float64
	side        int     // +1: interval above 1 (a costs more); −1: below; 0: includes 1 or none
	need        int     // repeats for the interval to exclude 1 (0: cannot be estimated)
	medA, medB  float64 // the table's medians
	medSide     int     // sign of medA − medB (0 when equal or missing)
}

// pointRatios pairs a and b by repeat at every point of s.
func (s *sweep) pointRatios(a, b string) []pointRatio {
	ca, cb := s.cost[a], s.cost[b]
	ma, mb := ca.Medians(), cb.Medians()
	out := make([]pointRatio, len(s.xs))
	for i := range s.xs {
		var ratios []float64
		for r := range ca.Y {
			if x, y := ca.Y[r][i], cb.Y[r][i]; x > 0 && y > 0 {
				ratios = append(ratios, x/y)
			}
		}
		pr := pointRatio{label: s.labels[i], n: len(ratios), geo: math.NaN(), lo: math.NaN(), hi: math.NaN(), medA: ma[i], medB: mb[i]}
		if len(ratios) > 0 {
			pr.geo, pr.lo, pr.hi, _ = stats.PairedLogT(ratios, stats.Confidence)
		}
		switch {
		case pr.lo > 1:
			pr.side = 1
		case pr.hi < 1:
			pr.side = -1
		}
		if pr.side == 0 {
			// The Verdicts section's estimator, at one comparison: the
			// smallest n whose 95% interval excludes 1 at this ratio and
			// spread.
			pr.need = (&stats.Comparison{Ratios: ratios, GeoRatio: pr.geo}).RepeatsToEstablish(1)
		}
		if pr.medA > 0 && pr.medB > 0 {
			switch {
			case pr.medA > pr.medB:
				pr.medSide = 1
			case pr.medA < pr.medB:
				pr.medSide = -1
			}
		}
		out[i] = pr
	}
	return out
}

// medianCrossings counts the sign changes of the median costs' difference
// (the table's medians) and returns the indexes of the two points around
// the first one (−1, −1 without a crossing).
func medianCrossings(prs []pointRatio) (n, lo, hi int) {
	lo, hi = -1, -1
	prev := -1
	for i, pr := range prs {
		if pr.medSide == 0 {
			continue
		}
		if prev >= 0 && prs[prev].medSide != pr.medSide {
			if n == 0 {
				lo, hi = prev, i
			}
			n++
		}
		prev = i
	}
	return n, lo, hi
}

// mostNeeded is the largest repeats estimate over the points idx whose
// interval includes 1, and whether any of them cannot be estimated.
func mostNeeded(prs []pointRatio, idx []int) (need int, unknown bool) {
	for _, i := range idx {
		if prs[i].side != 0 {
			continue
		}
		if prs[i].need == 0 {
			unknown = true
			continue
		}
		need = max(need, prs[i].need)
	}
	return need, unknown
}

func sharePct(k, n int) string {
	if n == 0 {
		return noValue
	}
	return f(100*float64(k)/float64(n), 0) + "%"
}

// writeCrossovers compares every two WAF modes of s point by point and
// states a crossover, or one mode cheaper throughout, only where the data
// support it:
//   - a crossover when the medians of the table cross, the median paired
//     log-ratio changes sign, and at least CrossShare of the bootstrap
//     resamples cross (the interval is over those resamples: conditional on
//     a crossing);
//   - "cheaper throughout" when every point's paired-t 95% interval of the
//     ratio excludes 1 on the same side;
//   - otherwise "not established", with the repeats it would take at the
//     observed ratios and spread (the Verdicts section's estimator).
func writeCrossovers(m *md, s *sweep, block float64) {
	var waf []string
	for _, md := range s.modes {
		if modes.IsWAF(md) {
			waf = append(waf, md)
		}
	}
	for i := 0; i < len(waf); i++ {
		for j := i + 1; j < len(waf); j++ {
			writeCrossover(m, s, waf[i], waf[j], block)
		}
	}
}

func writeCrossover(m *md, s *sweep, a, b string, block float64) {
	c, err := buildCrossover(s, a, b)
	if err != nil {
		m.p("- %s vs %s: %v", a, b, err)
		m.nl()
		return
	}
	writePointRatios(m, s, c, block)
	lo, hi := s.fmtX(s.xs[0]), s.fmtX(s.xs[len(s.xs)-1])
	shareText := fmt.Sprintf("a crossing in %d of %d resamples (%s)", c.at.Defined, c.at.Resamples, sharePct(c.at.Defined, c.at.Resamples))
	takes := func(pair bool, what string) string {
		if pair {
			return crossTakes(c.needPair, c.unknownPair, what, block, len(s.repeats))
		}
		return crossTakes(c.needAll, c.unknownAll, what, block, len(s.repeats))
	}
	switch c.verdict {
	case crossEqual:
		m.p("- %s vs %s: no paired difference to compare.", a, b)
	case crossAt:
		writeCrossAt(m, s, c, shareText, takes(true, "Intervals excluding 1 on opposite sides at "+c.prs[c.mLo].label+" and "+c.prs[c.mHi].label))
	case crossThroughout:
		m.p("- %s vs %s: **no crossover** in %s–%s: **%s is cheaper throughout** (the 95%% interval of %s ÷ %s excludes 1 on the same side at every point; %s).",
			a, b, lo, hi, c.cheaper, a, b, shareText)
	case crossUnsure:
		m.p("- %s vs %s: no crossover seen in %s–%s (%s is cheaper at every point's median; %s), but **%s cheaper throughout is not established**: the 95%% interval of %s ÷ %s includes 1 at %d of %d points (%s). %s",
			a, b, lo, hi, c.cheaper, shareText, c.cheaper, a, b, len(c.open), len(c.prs), joinComma(c.open), takes(false, "An interval excluding 1 at every point"))
	default:
		writeCrossOpen(m, s, c, lo, hi, shareText)
		t := takes(false, "An interval excluding 1 at every point (for "+c.medianCheaper()+" cheaper throughout)")
		if c.nMed > 0 {
			t = takes(true, fmt.Sprintf("Intervals excluding 1 on opposite sides at %s and %s", c.prs[c.mLo].label, c.prs[c.mHi].label))
		}
		if t != "" {
			m.p("  %s", t)
		}
	}
	m.nl()
}

// writePointRatios is the table of a ÷ b at every point of the sweep.
func writePointRatios(m *md, s *sweep, c *crossoverModel, block float64) {
	head := map[string]string{profile.ParamSize: "body size", profile.ParamArgs: "fields", paramConns: "conns"}[s.param]
	m.p("%s ÷ %s, Envoy CPU per request, paired by repeat at each point:", c.a, c.b)
	m.nl()
	m.head(head, "n", "ratio (geo-mean)", "paired-t 95% CI", "interval", "repeats for the interval to exclude 1")
	for _, pr := range c.prs {
		side := map[int]string{1: "above 1 (" + c.b + " cheaper)", -1: "below 1 (" + c.a + " cheaper)", 0: "includes 1"}[pr.side]
		if math.IsNaN(pr.lo) {
			side = "none (n < 2)"
		}
		need := noValue
		if pr.side == 0 {
			need = repeatsCell(pr.need, block)
		}
		m.row(pr.label, itoa(pr.n), f(pr.geo, 3), ci(pr.lo, pr.hi, 3), side, need)
	}
	m.nl()
}

// crossTakes says what a verdict would take: need repeats (unknown when a
// point cannot be estimated), against this run's have and its block
// seconds per repeat.
func crossTakes(need int, unknown bool, what string, block float64, have int) string {
	switch {
	case need > stats.MaxRepeats:
		return fmt.Sprintf("%s would take more than %d repeats at the observed ratios and spread (a ratio too close to 1).", what, stats.MaxRepeats)
	case need > 0:
		wall := ""
		if block > 0 {
			wall = " (≈ " + minutes(float64(need)*block) + " at this run's " + minutes(block) + " per repeat)"
		}
		return fmt.Sprintf("%s would take about %d repeats%s at the observed ratios and spread (this run has %d; the most any of those points needs, estimated as in Verdicts).", what, need, wall, have)
	case unknown:
		return what + " cannot be estimated from this run (a point has fewer than 2 paired repeats)."
	}
	return ""
}

func writeCrossAt(m *md, s *sweep, c *crossoverModel, shareText, takes string) {
	extra := ""
	if c.crosses > 1 || c.nMed > 1 {
		extra = fmt.Sprintf("; the curves cross more than once (paired medians %d times, the table's medians %d times), the first is given", c.crosses, c.nMed)
	}
	m.p("- %s vs %s: **crossover at %s** (the table's medians cross between %s and %s; %s, at least the %.0f%% a crossover needs; 95%% CI %s–%s, conditional on a crossing: over the %d resamples that cross): %s is cheaper below, %s above%s.",
		c.a, c.b, s.fmtX(c.at.Value), c.prs[c.mLo].label, c.prs[c.mHi].label, shareText, 100*crossShare, s.fmtX(c.at.Lo), s.fmtX(c.at.Hi), c.at.Defined,
		c.cheaper, c.other, extra)
	if len(c.open) > 0 {
		m.p("  The paired-t interval of the ratio still includes 1 at %s, beside the crossing (with %d repeats the bootstrap has few distinct resamples). %s",
			joinComma(c.open), len(s.repeats), takes)
	}
}

func writeCrossOpen(m *md, s *sweep, c *crossoverModel, lo, hi, shareText string) {
	var seen []string
	if c.nMed > 0 {
		seen = append(seen, fmt.Sprintf("the table's medians cross between %s and %s", c.prs[c.mLo].label, c.prs[c.mHi].label))
	} else {
		seen = append(seen, "the table's medians do not cross ("+c.medianCheaper()+" is cheaper at every point's median)")
	}
	if c.crosses > 0 {
		seen = append(seen, fmt.Sprintf("the median paired log-ratio changes sign %s, first at %s", times(c.crosses), s.fmtX(c.at.Value)))
	} else {
		seen = append(seen, "the median paired log-ratio does not change sign")
	}
	cond := ""
	if c.crosses > 0 && !math.IsNaN(c.at.Lo) {
		cond = fmt.Sprintf(" (95%% CI %s–%s, conditional on a crossing: over those %d resamples only)", s.fmtX(c.at.Lo), s.fmtX(c.at.Hi), c.at.Defined)
	}
	m.p("- %s vs %s: **crossover not established** in %s–%s: %s; %s%s. Stating a crossover needs the table's medians and the paired medians to cross and at least %.0f%% of resamples to cross.",
		c.a, c.b, lo, hi, joinSemi(seen), shareText, cond, 100*crossShare)
}

// allSide is +1 or −1 when every point's interval lies on that side of 1,
// else 0.
func allSide(prs []pointRatio) int {
	if len(prs) == 0 {
		return 0
	}
	side := prs[0].side
	for _, pr := range prs {
		if pr.side != side {
			return 0
		}
	}
	return side
}

// firstSide is the sign of the first nonzero median difference.
func firstSide(prs []pointRatio) int {
	for _, pr := range prs {
		if pr.medSide != 0 {
			return pr.medSide
		}
	}
	return 0
}

// times is "once", "twice" or "n times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return itoa(n) + " times"
}

func joinSemi(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x)
	}
	return b.String()
}

func writeCurves(m *md, meta *result.Meta, curves []*curve) {
	if len(curves) == 0 {
		return
	}
	slo := sloOf(meta)
	sloUs := float64(slo.Microseconds())
	m.p("## Latency–throughput")
	m.nl()
	m.p(curvesMethod, slo, 100*stats.HeldFraction)
	m.nl()
	for _, c := range curves {
		m.p("### %s, %d connections", c.base, c.conns)
		m.nl()
		title := c.base + ", " + strconv.Itoa(c.conns) + " conn"
		if drawable(func(w io.Writer) error { return chart.Curve(w, title, c.series(), sloUs) }) {
			m.p("![latency vs offered load](%s/%s) ![achieved vs offered](%s/%s)", ChartsDir, c.fileLatency(), ChartsDir, c.fileAchieved())
			m.nl()
		}
		m.head("mode", "capacity req/s", "max rate at p99 ≤ "+slo.String(), "per repeat", "share of capacity")
		for _, md := range c.modes {
			writeCurveSLO(m, c.slo(md, sloUs))
		}
		m.nl()
		m.head("mode", "load", "offered req/s", "achieved req/s", "p50 ms", "p99 ms", "p99.9 ms")
		for _, s := range c.series() {
			for i, fr := range c.fractions(s.Mode) {
				pt := s.Points[i]
				m.row(s.Mode, f(100*fr, 0)+"%", f(pt.Offered, 0), f(pt.Achieved, 0), f(pt.P50/1000, 2), f(pt.P99/1000, 2), f(pt.P999/1000, 2))
			}
		}
		m.nl()
	}
}

// writeCurveSLO is one mode's row of the max rate at the SLO.
func writeCurveSLO(m *md, r curveSLO) {
	if !r.ok {
		m.row(r.mode, f(r.capacity, 0), "–", "–", "–")
		return
	}
	var each []string
	for _, x := range r.rates {
		each = append(each, map[string]string{"": "", "ge": "≥", "lt": "<"}[x.Bound]+f(x.Rate, 0))
	}
	e := r.median
	cell := map[string]string{"": "", "ge": "≥ ", "lt": "< "}[r.bound] + f(e.Median, 0)
	if !math.IsInf(e.Lo, 0) && !math.IsNaN(e.Lo) {
		cell += " [" + f(e.Lo, 0) + ", " + f(e.Hi, 0) + "]"
	}
	m.row(r.mode, f(r.capacity, 0), cell, joinComma(each), f(100*e.Median/r.capacity, 0)+"%")
}

// curvesMethod says how latency–throughput curves and the max rate at the
// SLO are measured; its verbs are the SLO and the held share in percent.
const curvesMethod = "Open loop (coordinated-omission-corrected: latency from each request's intended send time), offered rate a fraction of " +
	"each mode's closed-loop capacity measured earlier in the same trial. Medians over repeats. **Max rate at SLO**: per " +
	"repeat, the offered rate where p99 reaches %s, interpolated in ln(p99) between the last point of the prefix that holds " +
	"it and the next; a point that achieves less than %.0f%% of its offered rate does not hold. ≥ means every point held " +
	"(the maximum is higher than the sweep went), < that even the lowest failed."

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// scaleSuite is the suite whose report always has the workers section.
const scaleSuite = "scale"

func writeScale(m *md, meta *result.Meta, sets []*scaleSet) {
	multi := slices.ContainsFunc(sets, func(s *scaleSet) bool { return len(s.workers) > 1 })
	if !multi && meta.Suite != scaleSuite {
		return
	}
	m.p("## Throughput vs Envoy workers")
	m.nl()
	if !multi {
		m.p("This run measured one worker count (--concurrency %d). Run the scale suite once per worker count the machine has CPUs for "+
			"(`--concurrency N` with N Envoy CPUs), then pool the runs with `wafbench merge` (across machines `--force`, which records "+
			"the differences); the merged report draws throughput against workers.", max(meta.Concurrency, 1))
		m.nl()
		return
	}
	m.p("Median req/s over the records at each worker count (runs pooled by `wafbench merge`; machines may differ, see Environment). " +
		"Efficiency is req/s per worker relative to req/s per worker at the fewest workers (100%% = linear scaling). " +
		"Envoy CPUs are the CPUs observed on Envoy's threads: more workers than CPUs time-share them, which measures contention, not scaling.")
	m.nl()
	for _, s := range sets {
		if len(s.workers) < 2 {
			continue
		}
		m.p("### %s", s.wl)
		m.nl()
		m.p("![throughput vs workers](%s/%s)", ChartsDir, s.file())
		m.nl()
		m.head("mode", "workers", "Envoy CPUs", "req/s", "records", "efficiency")
		for _, gs := range s.series() {
			if len(gs.Points) == 0 {
				continue
			}
			first := gs.Points[0]
			for _, pt := range gs.Points {
				eff := pt.Y / pt.X / (first.Y / first.X)
				n := int(pt.X)
				cpus := noValue
				if c := s.cpus[n]; len(c) > 0 {
					cpus = itoa(len(c)) + " (" + ints(c) + ")"
					if len(c) < n {
						cpus += " ⚠ fewer than workers"
					}
				}
				m.row(gs.Mode, itoa(n), cpus, f(pt.Y, 0), itoa(len(s.rps[gs.Mode][n])), f(100*eff, 0)+"%")
			}
		}
		m.nl()
	}
}
