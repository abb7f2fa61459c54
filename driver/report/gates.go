package report

import (
	"fmt"

	"wafbench/driver/result"
)

// gate is one qualification threshold of the upgle/envoy-modsecurity
// benchmark (Envoy + libmodsecurity), which this project reproduces: a
// metric of one workload, at most (or at least) a limit.
type gate struct {
	Name     string
	Workload string // "name@conns"
	Metric   string // req_per_s, p99_ms, cpu_ms_per_req, rss_growth_mib
	Min, Max float64
}

// gates are that benchmark's thresholds. Times are absolute as it states
// them; the report shows each beside the same figure as a ratio to
// passthrough in the same run, which is what carries between machines.
var gates = []gate{
	{Name: "throughput", Workload: "headers@16", Metric: "req_per_s", Min: 50},
	{Name: "p99", Workload: "headers@16", Metric: "p99_ms", Max: 250},
	{Name: "pathological regex p99", Workload: "gate_regex@1", Metric: "p99_ms", Max: 1000},
	{Name: "pathological regex CPU", Workload: "gate_regex@1", Metric: "cpu_ms_per_req", Max: 250},
	{Name: "16 KiB body soak RSS growth", Workload: "gate_soak_16k@4", Metric: "rss_growth_mib", Max: 64},
}

func gateValue(r *result.Record, metric string) (float64, bool) {
	switch metric {
	case "req_per_s":
		return r.ReqPerS, r.DurationS > 0
	case "p99_ms":
		return r.Latency.P99Us / 1e3, r.Requests > 0
	case "cpu_ms_per_req":
		return r.CPU.UsPerRequest / 1e3, r.Requests > 0 && r.CPU.SchedstatNs > 0
	case "rss_growth_mib":
		return float64(r.Memory.RSSEndKiB-r.Memory.RSSAfterWarmupKiB) / 1024, r.Memory.RSSEndKiB > 0
	}
	return 0, false
}

// writeGates judges every gate per mode on the worst repeat (a gate holds
// only if every repeat holds it). A record with an error fails its gates and
// says why; a window that completed no request is "no request", never 0.
func writeGates(m *md, fig *figures) {
	gm := buildGates(fig.Records)
	if gm == nil {
		return
	}
	m.p("## Qualification gates")
	m.nl()
	m.p("The gates of the upgle/envoy-modsecurity benchmark, judged per mode on the worst repeat. The limits are absolute times from that benchmark's machine; the ×passthrough column is the same figure over passthrough's in this run (a shared 2-core machine: absolute times are pessimistic, the ratio is what carries).")
	m.nl()
	m.head("mode", "gate", "workload", "limit", "measured", "×passthrough", "result")
	for _, row := range gm.rows {
		g := row.g
		limit := fmt.Sprintf("≤ %g", g.Max)
		if g.Min > 0 {
			limit = fmt.Sprintf("≥ %g", g.Min)
		}
		limit += " " + gateUnit(g.Metric)
		measured, ratio, res := row.why, "–", "FAIL"
		if row.measured {
			measured = f(row.worst, 1)
		}
		if row.hasRatio {
			ratio = f(row.ratio, 2) + "×"
		}
		if row.pass {
			res = "pass"
		}
		m.row("`"+row.mode+"`", g.Name, "`"+g.Workload+"`", limit, measured, ratio, res)
	}
	m.nl()
	for _, md := range gm.modes {
		if len(gm.failed[md]) == 0 {
			m.p("- `%s`: passes every gate.", md)
		} else {
			m.p("- `%s`: fails %v.", md, gm.failed[md])
		}
	}
	m.nl()
}

func gateUnit(metric string) string {
	switch metric {
	case "req_per_s":
		return "req/s"
	case "p99_ms", "cpu_ms_per_req":
		return "ms"
	}
	return "MiB"
}
