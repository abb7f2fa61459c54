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

// loadgenFile is the raw file of a comparison of wafbench's load engine with
// a reference tool — wrk (scripts/vs-wrk.sh) or h2load (scripts/vs-h2load.sh,
// HTTP/2 and TLS) — : a header record, then one record per tool window.
const loadgenFile = "loadgen.jsonl"

// loadgenHeader is the first record of LoadgenFile: how the comparison ran.
type loadgenHeader struct {
	Kind       string  `json:"kind"` // "header"
	Command    string  `json:"command"`
	StartedUTC string  `json:"started_utc"`
	Pairs      int     `json:"pairs"`
	Conns      []int   `json:"conns"`
	Seconds    float64 `json:"seconds"`
	Path       string  `json:"path"`
	Wrk        string  `json:"wrk"` // wrk's version (vs-wrk.sh)
	// Reference is the tool compared with: "" (files before the field)
	// and "wrk", or "h2load"; ReferenceVersion its version when not wrk.
	Reference        string `json:"reference,omitempty"`
	ReferenceVersion string `json:"reference_version,omitempty"`
	// OpenRatePerS is the open-loop rate of a comparison that runs both
	// load models (scripts/vs-fortio.sh); 0 otherwise.
	OpenRatePerS float64 `json:"open_rate_per_s,omitempty"`
	// Downstream is the protocol both tools spoke (h1-tls, h2-tls, h2c;
	// "" is plain HTTP/1.1) and Streams the HTTP/2 streams per connection.
	Downstream string `json:"downstream,omitempty"`
	Streams    int    `json:"streams,omitempty"`
	EnvoyCPUs  string `json:"envoy_cpus"`
	ClientCPUs string `json:"client_cpus"`
	CPUMethod  string `json:"cpu_method"`
	// StartupMethod says, per tool, what its start-up run was.
	StartupMethod map[string]string `json:"startup_method"`
	Notes         []string          `json:"notes"`
}

// loadgenWindow is one tool's measured window in one pair.
type loadgenWindow struct {
	Kind     string  `json:"kind"` // "window"
	Tool     string  `json:"tool"` // the reference tool ("wrk", "h2load") or "wafbench"
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
	// Load is "closed" or "open" (scripts/vs-fortio.sh; "" is closed) and
	// RatePerS the open loop's requested rate. Open loop, wafbench's
	// percentiles above run from the intended send time; FromSend* from
	// the actual write, Own* its own send delay; WindowCPUUsPerReq is its
	// own account of its CPU over the window (wafbench load --json).
	Load              string   `json:"load,omitempty"`
	RatePerS          float64  `json:"rate_per_s,omitempty"`
	FromSendP50Us     *float64 `json:"from_send_p50_us,omitempty"`
	FromSendP90Us     *float64 `json:"from_send_p90_us,omitempty"`
	FromSendP99Us     *float64 `json:"from_send_p99_us,omitempty"`
	OwnP50Us          *float64 `json:"own_p50_us,omitempty"`
	OwnP90Us          *float64 `json:"own_p90_us,omitempty"`
	OwnP99Us          *float64 `json:"own_p99_us,omitempty"`
	WindowCPUUsPerReq *float64 `json:"window_cpu_us_per_req,omitempty"`
	// Pacer is how wafbench paced an open-loop window: "timerfd" ("" in
	// files before the field) or "go-timer" (`load --pacer`).
	Pacer string `json:"pacer,omitempty"`
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

// reference is the tool the comparison is against.
func (h *loadgenHeader) reference() string {
	if h.Reference == "" {
		return "wrk"
	}
	return h.Reference
}

// loadgenRun is a run's LoadgenFile: its header and windows.
type loadgenRun struct {
	header  loadgenHeader
	windows []loadgenWindow
}

// readLoadgen reads dir/LoadgenFile; nil when the run has none.
func readLoadgen(dir string) (*loadgenRun, error) {
	b, ok, err := readOptional(dir, loadgenFile)
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
			return h, nil, fmt.Errorf("%s:%d: %v", loadgenFile, line, err)
		}
		switch kind.Kind {
		case "header":
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
				return h, nil, fmt.Errorf("%s:%d: %v", loadgenFile, line, err)
			}
		case "window":
			var w loadgenWindow
			if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
				return h, nil, fmt.Errorf("%s:%d: %v", loadgenFile, line, err)
			}
			if ref := h.reference(); w.Tool != ref && w.Tool != "wafbench" {
				return h, nil, fmt.Errorf("%s:%d: tool: want %s or wafbench, got %q", loadgenFile, line, ref, w.Tool)
			}
			ws = append(ws, w)
		default:
			return h, nil, fmt.Errorf("%s:%d: kind: want header or window, got %q", loadgenFile, line, kind.Kind)
		}
	}
	if h.Kind == "" {
		return h, nil, fmt.Errorf("%s: no header record", loadgenFile)
	}
	return h, ws, sc.Err()
}

// writeLoadgenSection appends the "Load engine vs wrk" (or "vs h2load")
// section when the run holds LoadgenFile: per connection count, one row per
// pair and the median and geometric mean (paired-t 95% interval) of each
// ratio over pairs.
func writeLoadgenSection(m *md, fig *figures) {
	if fig.Loadgen == nil {
		return
	}
	h, ws := fig.Loadgen.header, fig.Loadgen.windows
	ref := h.reference()
	if ref == "fortio" {
		writeVsFortio(m, h, ws)
		return
	}
	version, latency, request := h.Wrk, "(wrk's from its --latency distribution)", "GET "+h.Path
	if ref != "wrk" {
		version, latency = h.ReferenceVersion, "("+ref+" reports no percentiles: its columns are empty)"
	}
	if h.Downstream != "" {
		request += " over " + h.Downstream
		if h.Streams > 0 {
			request += fmt.Sprintf(" with %d stream%s per connection", h.Streams, map[bool]string{true: "", false: "s"}[h.Streams == 1])
		}
	}
	m.p("## Load engine vs %s", ref)
	m.nl()
	m.p(loadgenMethod,
		h.Command, h.StartedUTC, ref, version, h.EnvoyCPUs, h.ClientCPUs, h.Seconds, request, h.CPUMethod, ref, latency, loadgenFile)
	m.nl()
	for _, t := range []string{ref, "wafbench"} {
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
		writeLoadgenPairs(m, ws, ref, c)
	}
}

// loadgenMethod says how the load engine was compared with the reference
// tool; its verbs come from the run's header.
const loadgenMethod = "`%s`, started %s: wafbench's load engine (`wafbench load`) and %s (%s) against one passthrough Envoy (CPU %s), " +
	"each client pinned to CPU %s, same connections and %g s window, %s, in alternated pairs (the tool that goes first " +
	"alternates). Client CPU: %s, over the window's requests (errors included); *net of start-up* subtracts the CPU and " +
	"requests of a one-request run of the same tool in the same pair. Ratios are wafbench ÷ %s; over pairs, their median " +
	"and their geometric mean with its paired-t 95%% interval. Latency percentiles are each tool's own %s, so they are shown, not divided. Rebuilt from %s."

// writeLoadgenPairs is the table of the pairs at c connections, wafbench
// against the reference tool ref.
func writeLoadgenPairs(m *md, ws []loadgenWindow, ref string, c int) {
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
		if t[ref] != nil && t["wafbench"] != nil {
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
	m.head("pair", "first", ref+" req/s", "wafbench req/s", "req/s ratio", ref+" CPU µs/req", "wafbench CPU µs/req", "CPU ratio",
		ref+" start-up ms", "wafbench start-up ms", "CPU ratio net of start-up", ref+" p50 / p99 ms", "wafbench p50 / p99 ms", "errors "+ref+" / wafbench")
	var rr, cr, nr []float64
	for _, p := range pairs {
		a, b := byPair[p][ref], byPair[p]["wafbench"]
		first := ref
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
			return noValue
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
	return stats.MedianOf(ok)
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
		return noValue
	}
	g, lo, hi, _ := stats.PairedLogT(ok, stats.Confidence)
	return withCI(g, lo, hi, 3)
}
