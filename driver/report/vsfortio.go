package report

import (
	"math"
	"sort"
)

// vsFortioPair is one pair of windows, fortio's and wafbench's, of one load
// model, and the ratios wafbench ÷ fortio. Open loop, wafbench's latency
// compared is from the actual write (FromSend*), as fortio measures it.
type vsFortioPair struct {
	Pair          int
	First         string
	Fortio, Wb    *loadgenWindow
	ReqRatio      float64
	CPURatio      float64    // net of start-up
	LatRatio      [3]float64 // p50, p90, p99
	WbLatency     [3]float64 // wafbench's compared percentiles, µs
	WbIntended    [3]float64 // open loop: from the intended time, µs; NaN closed
	WbOwn         [3]float64 // open loop: its own send delay, µs; NaN closed
	FortioLatency [3]float64
}

// vsFortioLoad is the pairs of one load model and their summaries.
type vsFortioLoad struct {
	Load  string // "closed", "open" or "open-go-timer" (wafbench paced by Go timers)
	Pairs []vsFortioPair
}

// Load models of the comparison, in the report's order, and their titles.
var vsFortioLoads = []struct{ load, title string }{
	{"closed", "Closed loop"},
	{"open", "Open loop"},
	{"open-go-timer", "Open loop, wafbench paced by Go timers as fortio is"},
}

// vsFortioKey is the load model a window belongs to and the tool it is
// there: wafbench's open-loop windows paced by Go timers form a load model
// of their own, compared with the same fortio windows.
func vsFortioKey(x *loadgenWindow) (load, tool string) {
	load = x.Load
	if load == "" {
		load = "closed"
	}
	if load == "open" && x.Tool == "wafbench" && x.Pacer == "go-timer" {
		load = "open-go-timer"
	}
	return load, x.Tool
}

// ratios returns one ratio of every pair, by get.
func (l *vsFortioLoad) ratios(get func(*vsFortioPair) float64) []float64 {
	out := make([]float64, len(l.Pairs))
	for i := range l.Pairs {
		out[i] = get(&l.Pairs[i])
	}
	return out
}

// buildVsFortio pairs the windows by load model and pair index.
func buildVsFortio(ws []loadgenWindow) []vsFortioLoad {
	var out []vsFortioLoad
	for _, lt := range vsFortioLoads {
		load := lt.load
		by := map[int]map[string]*loadgenWindow{}
		for i := range ws {
			x := &ws[i]
			l, tool := vsFortioKey(x)
			if tool == "fortio" && l == "open" && load == "open-go-timer" {
				l = load // fortio's open-loop windows serve both comparisons
			}
			if l != load {
				continue
			}
			if by[x.Pair] == nil {
				by[x.Pair] = map[string]*loadgenWindow{}
			}
			by[x.Pair][tool] = x
		}
		var idx []int
		for p, t := range by {
			if t["fortio"] != nil && t["wafbench"] != nil {
				idx = append(idx, p)
			}
		}
		sort.Ints(idx)
		vl := vsFortioLoad{Load: load}
		for _, p := range idx {
			a, b := by[p]["fortio"], by[p]["wafbench"]
			pr := vsFortioPair{Pair: p, First: "fortio", Fortio: a, Wb: b,
				ReqRatio: b.ReqPerS / a.ReqPerS, CPURatio: b.netCPUPerReq() / a.netCPUPerReq()}
			if b.Position < a.Position {
				pr.First = "wafbench"
			}
			pr.FortioLatency = [3]float64{val(a.P50Us), val(a.P90Us), val(a.P99Us)}
			pr.WbLatency = [3]float64{val(b.P50Us), val(b.P90Us), val(b.P99Us)}
			pr.WbIntended, pr.WbOwn = [3]float64{math.NaN(), math.NaN(), math.NaN()}, [3]float64{math.NaN(), math.NaN(), math.NaN()}
			if load != "closed" {
				pr.WbIntended = pr.WbLatency
				pr.WbLatency = [3]float64{val(b.FromSendP50Us), val(b.FromSendP90Us), val(b.FromSendP99Us)}
				pr.WbOwn = [3]float64{val(b.OwnP50Us), val(b.OwnP90Us), val(b.OwnP99Us)}
			}
			for j := range 3 {
				pr.LatRatio[j] = pr.WbLatency[j] / pr.FortioLatency[j]
			}
			vl.Pairs = append(vl.Pairs, pr)
		}
		out = append(out, vl)
	}
	return out
}

// val is *v, NaN for nil.
func val(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// writeVsFortio writes the "Load engine vs fortio" section
// (scripts/vs-fortio.sh): per load model, one row per pair and the median
// and geometric mean (paired-t 95% interval) of each ratio.
func writeVsFortio(m *md, h loadgenHeader, ws []loadgenWindow) {
	m.p("## Load engine vs fortio")
	m.nl()
	m.p(vsFortioMethod,
		h.Command, h.StartedUTC, h.ReferenceVersion, h.EnvoyCPUs, h.ClientCPUs, h.Conns[0], h.Seconds, h.Path, f(h.OpenRatePerS, 0), h.CPUMethod, loadgenFile)
	m.nl()
	for _, t := range []string{"fortio", "wafbench"} {
		if s := h.StartupMethod[t]; s != "" {
			m.p("- Start-up run, %s: %s.", t, s)
		}
	}
	m.nl()
	for _, n := range h.Notes {
		m.p("Note: %s", n)
		m.nl()
	}
	for i, l := range buildVsFortio(ws) {
		if l.Load == "open-go-timer" && len(l.Pairs) == 0 {
			continue // a run before wafbench's Go-timer windows
		}
		m.p("### %s", vsFortioLoads[i].title)
		m.nl()
		if l.Load == "open-go-timer" {
			m.p(vsFortioGoTimer)
			m.nl()
		}
		if len(l.Pairs) == 0 {
			m.p("No complete pair.")
			m.nl()
			continue
		}
		writeVsFortioLoad(m, &l)
	}
	writeWakeProbe(m, ws)
}

// writeWakeProbe states the wake-up probe's own send delay per pair
// (scripts/vs-fortio.sh: wafbench open loop on one connection at a low
// rate), the floor under the open loop's own send delay on this machine.
func writeWakeProbe(m *md, ws []loadgenWindow) {
	var rows [][]string
	var p50, p90 []float64
	for i := range ws {
		if x := &ws[i]; x.Load == "wake-probe" {
			own := [3]float64{val(x.OwnP50Us), val(x.OwnP90Us), val(x.OwnP99Us)}
			rows = append(rows, []string{itoa(x.Pair), f(x.RatePerS, 0), triple(own), triple([3]float64{val(x.FromSendP50Us), val(x.FromSendP90Us), val(x.FromSendP99Us)})})
			p50, p90 = append(p50, own[0]), append(p90, own[1])
		}
	}
	if len(rows) == 0 {
		return
	}
	m.p("### Wake-up probe")
	m.nl()
	m.p(vsFortioWakeProbe, f(medianOf64(p50), 0), f(medianOf64(p90), 0))
	m.nl()
	m.head("pair", "rate req/s", "own send delay p50 / p90 / p99 µs", "from send p50 / p90 / p99 µs")
	for _, r := range rows {
		m.row(r...)
	}
	m.nl()
}

// writeVsFortioLoad is one load model's table: a row per pair, then the
// median and geometric mean of each ratio.
func writeVsFortioLoad(m *md, l *vsFortioLoad) {
	cols := []string{"pair", "first", "fortio req/s", "wafbench req/s", "req/s ratio", "fortio CPU µs/req", "wafbench CPU µs/req", "CPU ratio",
		"fortio p50 / p90 / p99 µs", "wafbench p50 / p90 / p99 µs", "p50 ratio", "p90 ratio", "p99 ratio"}
	if l.Load != "closed" {
		cols[9] = "wafbench from send p50 / p90 / p99 µs"
		cols = append(cols, "wafbench from intended p50 / p90 / p99 µs", "wafbench own send delay p50 / p90 / p99 µs")
	}
	cols = append(cols, "errors fortio / wafbench")
	m.head(cols...)
	for _, p := range l.Pairs {
		row := []string{itoa(p.Pair), p.First, f(p.Fortio.ReqPerS, 0), f(p.Wb.ReqPerS, 0), f(p.ReqRatio, 3),
			f(p.Fortio.netCPUPerReq(), 2), f(p.Wb.netCPUPerReq(), 2), f(p.CPURatio, 3),
			triple(p.FortioLatency), triple(p.WbLatency), f(p.LatRatio[0], 3), f(p.LatRatio[1], 3), f(p.LatRatio[2], 3)}
		if l.Load != "closed" {
			row = append(row, triple(p.WbIntended), triple(p.WbOwn))
		}
		m.row(append(row, itoa(p.Fortio.Errors)+" / "+itoa(p.Wb.Errors))...)
	}
	rr := l.ratios(func(p *vsFortioPair) float64 { return p.ReqRatio })
	cr := l.ratios(func(p *vsFortioPair) float64 { return p.CPURatio })
	var lr [3][]float64
	for j := range 3 {
		lr[j] = l.ratios(func(p *vsFortioPair) float64 { return p.LatRatio[j] })
	}
	pad := make([]string, len(cols)-13)
	m.row(append([]string{"median", "", "", "", f(medianOf64(rr), 3), "", "", f(medianOf64(cr), 3), "", "",
		f(medianOf64(lr[0]), 3), f(medianOf64(lr[1]), 3), f(medianOf64(lr[2]), 3)}, pad...)...)
	m.row(append([]string{"geo-mean [95% CI]", "", "", "", geoCI(rr), "", "", geoCI(cr), "", "",
		geoCI(lr[0]), geoCI(lr[1]), geoCI(lr[2])}, pad...)...)
	m.nl()
}

// vsFortioMethod says how the comparison with fortio ran; its verbs come
// from the run's header.
const vsFortioMethod = "`%s`, started %s: wafbench's load engine (`wafbench load`) and fortio (%s) against one passthrough Envoy (CPU %s), " +
	"each client pinned to CPU %s (which the upstream shares), %d connections, %g s windows, GET %s, closed loop and open loop at %s req/s, in alternated pairs (the tool that goes first alternates). " +
	"Client CPU: %s, net of start-up (the CPU and requests of a one-request run of the same tool in the same pair subtracted), per request of the window. " +
	"Ratios are wafbench ÷ fortio; over pairs, their median and their geometric mean with its paired-t 95%% interval. " +
	"Open loop, fortio (`-uniform`) measures latency from the actual send; wafbench's compared latency is from its actual write too, and its latency from the intended send time (corrected for coordinated omission) and its own send delay are shown beside it. Rebuilt from %s."

// vsFortioGoTimer says what the Go-timer comparison is for.
const vsFortioGoTimer = "The same fortio windows against a third wafbench window per pair, paced by Go timers (`wafbench load --pacer go-timer`, time.Sleep) as fortio paces: " +
	"the idle Go runtime wakes in whole milliseconds, so both clients' sends bunch at millisecond ticks. " +
	"This compares the two latency measurements on the same kind of schedule; the table above compares wafbench's precise schedule with fortio's bunched one, " +
	"which on a machine whose wake-ups from idle are slow keeps Envoy, the upstream and the client asleep between sends more often, and pays a wake-up per hop more often (docs/open-loop.md)."

// vsFortioWakeProbe says what the wake-up probe is; its verbs are the
// medians over pairs of its own send delay's p50 and p90.
const vsFortioWakeProbe = "wafbench open loop on one connection at a low rate (a send every millisecond), per pair: with nothing but the upstream's light work on the client's CPU, " +
	"its own send delay is the time its timer takes to wake it, a floor under the open loop's own send delay at half capacity. Median over pairs: p50 %s µs, p90 %s µs."
