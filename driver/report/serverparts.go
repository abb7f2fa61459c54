package report

import (
	"wafbench/driver/modes"
	"wafbench/driver/perf"
	"wafbench/driver/perf/flame"
)

// serverPartsRow is one external mode × workload's sampled CPU per
// request, split by part (perf.PartOrder).
type serverPartsRow struct {
	Mode, Key string
	Parts     []float64 // µs per request, in perf.PartOrder
	Total     float64
}

// serverParts splits the profiles of the external modes (Envoy and the
// wafbench-extproc server, both sampled) by part; nil without any.
func serverParts(fl *flame.Set) []serverPartsRow {
	var rows []serverPartsRow
	for _, g := range fl.Groups {
		if !modes.IsExternal(g.Mode) || g.Requests == 0 {
			continue
		}
		parts := g.Stacks.Parts()
		row := serverPartsRow{Mode: g.Mode, Key: g.Key()}
		for _, p := range perf.PartOrder {
			us := float64(parts[p]) / 1e3 / float64(g.Requests)
			row.Parts = append(row.Parts, us)
			row.Total += us
		}
		rows = append(rows, row)
	}
	return rows
}

// serverPartsNote says how the external modes' profiles are split.
const serverPartsNote = "In the external modes perf samples Envoy and the wafbench-extproc server together (`perf record -p` with both pids). Their sampled CPU per request (µs) by where it went: a server sample belongs to the frame nearest its leaf that names a part — the WAF engine (the engine and the engine code our modules run in Envoy too), gRPC with its HTTP/2 transport, protobuf, the server's own code — else, when it holds C or C++ frames (libmodsecurity, PCRE and libc lack frame pointers, so their stacks break; only the engine runs C in the server), to the engine, and otherwise to the Go runtime, libc and the kernel."

// writeServerParts writes the external modes' CPU by part.
func writeServerParts(m *md, fl *flame.Set) {
	rows := serverParts(fl)
	if len(rows) == 0 {
		return
	}
	m.p("%s", serverPartsNote)
	m.nl()
	m.head(append(append([]string{"mode", "workload"}, perf.PartOrder...), "sampled")...)
	for _, r := range rows {
		cells := []string{"`" + r.Mode + "`", r.Key}
		for _, us := range r.Parts {
			cells = append(cells, f(us, 1))
		}
		m.row(append(cells, f(r.Total, 1))...)
	}
	m.nl()
}
