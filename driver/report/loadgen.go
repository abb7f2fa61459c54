package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"wafbench/driver/stats"
)

// LoadgenFile is the raw file of a comparison of wafbench's load engine with
// wrk (scripts/vs-wrk.sh): a header record, then one record per tool window.
const LoadgenFile = "loadgen.jsonl"

// loadgenHeader is the first record of LoadgenFile: how the comparison ran.
type loadgenHeader struct {
	Kind       string  `json:"kind"` // "header"
	Command    string  `json:"command"`
	StartedUTC string  `json:"started_utc"`
	Pairs      int     `json:"pairs"`
	Conns      []int   `json:"conns"`
	Seconds    float64 `json:"seconds"`
	Path       string  `json:"path"`
	Wrk        string  `json:"wrk"`
	EnvoyCPUs  string  `json:"envoy_cpus"`
	ClientCPUs string  `json:"client_cpus"`
	CPUMethod  string  `json:"cpu_method"`
	// StartupMethod says, per tool, what its start-up run was.
	StartupMethod map[string]string `json:"startup_method"`
	Notes         []string          `json:"notes"`
}

// loadgenWindow is one tool's measured window in one pair.
type loadgenWindow struct {
	Kind     string  `json:"kind"` // "window"
	Tool     string  `json:"tool"` // "wrk" or "wafbench"
	Conns    int     `json:"conns"`
	Pair     int     `json:"pair"`
	Position int     `json:"position"` // 1: ran first in its pair
	Seconds  float64 `json:"seconds"`
	Requests int     `json:"requests"` // attempts in the window, errors included
	Errors   int     `json:"errors"`
	ReqPerS  float64 `json:"req_per_s"`
	// ClientCPUS is the client process's user+sys CPU over the window's
	// run, start-up included; StartupCPUS that of a run of
	// StartupRequests requests in the same pair.
	ClientCPUS      float64  `json:"client_cpu_s"`
	StartupCPUS     float64  `json:"startup_cpu_s"`
	StartupRequests int      `json:"startup_requests"`
	P50Us           *float64 `json:"p50_us"`
	P90Us           *float64 `json:"p90_us"`
	P99Us           *float64 `json:"p99_us"`
}

// cpuPerReq is client CPU µs per request, start-up included.
func (w *loadgenWindow) cpuPerReq() float64 {
	if w.Requests <= 0 {
		return math.NaN()
	}
	return w.ClientCPUS * 1e6 / float64(w.Requests)
}

// netCPUPerReq is client CPU µs per request net of start-up: the start-up
// run's CPU and requests subtracted.
func (w *loadgenWindow) netCPUPerReq() float64 {
	n := w.Requests - w.StartupRequests
	if n <= 0 {
		return math.NaN()
	}
	return (w.ClientCPUS - w.StartupCPUS) * 1e6 / float64(n)
}

// loadgenRun is a run's LoadgenFile: its header and windows.
type loadgenRun struct {
	header  loadgenHeader
	windows []loadgenWindow
}

// readLoadgen reads dir/LoadgenFile; nil when the run has none.
func readLoadgen(dir string) (*loadgenRun, error) {
	b, ok, err := readOptional(dir, LoadgenFile)
	if !ok {
		return nil, err
	}
	h, ws, err := parseLoadgen(b)
	if err != nil {
		return nil, err
	}
	return &loadgenRun{header: h, windows: ws}, nil
}

// parseLoadgen parses the records of a LoadgenFile.
func parseLoadgen(b []byte) (h loadgenHeader, ws []loadgenWindow, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(sc.Bytes(), &kind); err != nil {
			return h, nil, fmt.Errorf("%s:%d: %v", LoadgenFile, line, err)
		}
		switch kind.Kind {
		case "header":
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
				return h, nil, fmt.Errorf("%s:%d: %v", LoadgenFile, line, err)
			}
		case "window":
			var w loadgenWindow
			if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
				return h, nil, fmt.Errorf("%s:%d: %v", LoadgenFile, line, err)
			}
			if w.Tool != "wrk" && w.Tool != "wafbench" {
				return h, nil, fmt.Errorf("%s:%d: tool: want wrk or wafbench, got %q", LoadgenFile, line, w.Tool)
			}
			ws = append(ws, w)
		default:
			return h, nil, fmt.Errorf("%s:%d: kind: want header or window, got %q", LoadgenFile, line, kind.Kind)
		}
	}
	if h.Kind == "" {
		return h, nil, fmt.Errorf("%s: no header record", LoadgenFile)
	}
	return h, ws, sc.Err()
}

// writeLoadgenSection appends the "Load engine vs wrk" section when the run
// holds LoadgenFile: per connection count, one row per pair and the median
// and geometric mean (paired-t 95% interval) of each ratio over pairs.
func writeLoadgenSection(m *md, fig *Figures) {
	if fig.Loadgen == nil {
		return
	}
	h, ws := fig.Loadgen.header, fig.Loadgen.windows
	m.p("## Load engine vs wrk")
	m.nl()
	m.p("`%s`, started %s: wafbench's load engine (`wafbench load`) and wrk (%s) against one passthrough Envoy (CPU %s), "+
		"each client pinned to CPU %s, same connections and %g s window, GET %s, in alternated pairs (the tool that goes first "+
		"alternates). Client CPU: %s, over the window's requests (errors included); *net of start-up* subtracts the CPU and "+
		"requests of a one-request run of the same tool in the same pair. Ratios are wafbench ÷ wrk; over pairs, their median "+
		"and their geometric mean with its paired-t 95%% interval. Latency percentiles are each tool's own (wrk's from its "+
		"--latency distribution), so they are shown, not divided. Rebuilt from %s.",
		h.Command, h.StartedUTC, h.Wrk, h.EnvoyCPUs, h.ClientCPUs, h.Seconds, h.Path, h.CPUMethod, LoadgenFile)
	m.nl()
	for _, t := range []string{"wrk", "wafbench"} {
		if s := h.StartupMethod[t]; s != "" {
			m.p("- Start-up run, %s: %s.", t, s)
		}
	}
	if len(h.StartupMethod) > 0 {
		m.nl()
	}
	for _, n := range h.Notes {
		m.p("Note: %s", n)
		m.nl()
	}
	conns := slices.Clone(h.Conns)
	for _, x := range ws {
		if !slices.Contains(conns, x.Conns) {
			conns = append(conns, x.Conns)
		}
	}
	for _, c := range conns {
		writeLoadgenPairs(m, ws, c)
	}
}

// writeLoadgenPairs is the table of the pairs at c connections.
func writeLoadgenPairs(m *md, ws []loadgenWindow, c int) {
	byPair := map[int]map[string]*loadgenWindow{}
	for i := range ws {
		x := &ws[i]
		if x.Conns != c {
			continue
		}
		if byPair[x.Pair] == nil {
			byPair[x.Pair] = map[string]*loadgenWindow{}
		}
		byPair[x.Pair][x.Tool] = x
	}
	var pairs []int
	for p, t := range byPair {
		if t["wrk"] != nil && t["wafbench"] != nil {
			pairs = append(pairs, p)
		}
	}
	sort.Ints(pairs)
	m.p("### %d connection%s", c, map[bool]string{true: "", false: "s"}[c == 1])
	m.nl()
	if len(pairs) == 0 {
		m.p("No complete pair at %d connections.", c)
		m.nl()
		return
	}
	m.head("pair", "first", "wrk req/s", "wafbench req/s", "req/s ratio", "wrk CPU µs/req", "wafbench CPU µs/req", "CPU ratio",
		"wrk start-up ms", "wafbench start-up ms", "CPU ratio net of start-up", "wrk p50 / p99 ms", "wafbench p50 / p99 ms", "errors wrk / wafbench")
	var rr, cr, nr []float64
	for _, p := range pairs {
		a, b := byPair[p]["wrk"], byPair[p]["wafbench"]
		first := "wrk"
		if b.Position == 1 {
			first = "wafbench"
		}
		r, cu, ne := b.ReqPerS/a.ReqPerS, b.cpuPerReq()/a.cpuPerReq(), b.netCPUPerReq()/a.netCPUPerReq()
		rr, cr, nr = append(rr, r), append(cr, cu), append(nr, ne)
		m.row(itoa(p), first, f(a.ReqPerS, 0), f(b.ReqPerS, 0), f(r, 3), f(a.cpuPerReq(), 2), f(b.cpuPerReq(), 2), f(cu, 3),
			f(a.StartupCPUS*1e3, 1), f(b.StartupCPUS*1e3, 1), f(ne, 3), latPair(a), latPair(b), itoa(a.Errors)+" / "+itoa(b.Errors))
	}
	m.row("median", "", "", "", f(medianOf64(rr), 3), "", "", f(medianOf64(cr), 3), "", "", f(medianOf64(nr), 3), "", "", "")
	m.row("geo-mean [95% CI]", "", "", "", geoCI(rr), "", "", geoCI(cr), "", "", geoCI(nr), "", "", "")
	m.nl()
}

// latPair is "p50 / p99" in ms, "–" for a percentile the tool did not give.
func latPair(x *loadgenWindow) string {
	ms := func(v *float64) string {
		if v == nil {
			return "–"
		}
		return f(*v/1000, 2)
	}
	return ms(x.P50Us) + " / " + ms(x.P99Us)
}

func medianOf64(v []float64) float64 {
	var ok []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return math.NaN()
	}
	return stats.Median(ok).Median
}

// geoCI is the geometric mean of positive ratios with its paired-t 95%
// interval.
func geoCI(v []float64) string {
	var ok []float64
	for _, x := range v {
		if x > 0 && !math.IsInf(x, 0) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return "–"
	}
	g, lo, hi, _ := stats.PairedLogT(ok, stats.Confidence)
	return f(g, 3) + " " + ciNaN(lo, hi, 3)
}
