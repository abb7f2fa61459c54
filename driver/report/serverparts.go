package report

import (
	"wafbench/driver/modes"
	"wafbench/driver/perf"
	"wafbench/driver/perf/flame"
)

// Two splits of a run --perf run's profiles by part, each a table of
// sampled CPU per request: the external modes' (Envoy and the
// wafbench-extproc server) and the Coraza hosts' (Envoy with our Go
// module, Caddy with our handler, beside Envoy alone).

// partsRow is one mode × workload's sampled CPU per request, split by
// part.
type partsRow struct {
	Mode, Key string
	Parts     []float64 // µs per request, in the split's order
	Total     float64
}

// split is one way of dividing a profile: which modes it applies to, how
// a profile's stacks divide, the parts in table order, and what the table
// says of itself.
type split struct {
	applies func(mode string) bool
	divide  func(perf.Folded) map[string]int64
	order   []string
	note    string
}

// serverSplit divides the external modes' profiles (perf.Folded.Parts).
var serverSplit = split{applies: modes.IsExternal, divide: perf.Folded.Parts, order: perf.PartOrder, note: serverPartsNote}

// hostSplit divides the Coraza hosts' profiles, and Envoy alone's
// (perf.Folded.HostParts).
var hostSplit = split{applies: hostPartsMode, divide: perf.Folded.HostParts, order: perf.HostPartOrder, note: hostPartsNote}

// rows are the profiles of fl that sp applies to, divided.
func (sp split) rows(fl *flame.Set) []partsRow {
	var rows []partsRow
	for _, g := range fl.Groups {
		if !sp.applies(g.Mode) || g.Requests == 0 {
			continue
		}
		parts := sp.divide(g.Stacks)
		row := partsRow{Mode: g.Mode, Key: g.Key()}
		for _, p := range sp.order {
			us := float64(parts[p]) / 1e3 / float64(g.Requests)
			row.Parts = append(row.Parts, us)
			row.Total += us
		}
		rows = append(rows, row)
	}
	return rows
}

// write writes rows as sp's table, after its note; nothing without rows.
func (sp split) write(m *md, rows []partsRow) {
	if len(rows) == 0 {
		return
	}
	m.p("%s", sp.note)
	m.nl()
	m.head(append(append([]string{"mode", "workload"}, sp.order...), "sampled")...)
	for _, r := range rows {
		cells := []string{"`" + r.Mode + "`", r.Key}
		for _, us := range r.Parts {
			cells = append(cells, f(us, 1))
		}
		m.row(append(cells, f(r.Total, 1))...)
	}
	m.nl()
}

// serverPartsNote says how the external modes' profiles are split.
const serverPartsNote = "In the external modes perf samples Envoy and the wafbench-extproc server together (`perf record -p` with both pids). Their sampled CPU per request (µs) by where it went: a server sample belongs to the frame nearest its leaf that names a part — the WAF engine (the engine and the engine code our modules run in Envoy too), gRPC with its HTTP/2 transport, protobuf, the server's own code — else, when it holds C or C++ frames (libmodsecurity, PCRE and libc lack frame pointers, so their stacks break; only the engine runs C in the server), to the engine, and otherwise to the Go runtime, libc and the kernel."

// writeServerParts writes the external modes' CPU by part.
func writeServerParts(m *md, fl *flame.Set) { serverSplit.write(m, serverSplit.rows(fl)) }

// hostPartsMode reports whether mode's profile is split by host part: it
// runs Coraza in-process in a host whose Go frames perf names (our dynamic
// module in Envoy, or Caddy), or it is Envoy alone, all of it the host's.
func hostPartsMode(mode string) bool {
	if modes.Engine(mode) == "" {
		return modes.HostOf(mode) == modes.Envoy
	}
	return modes.Engine(mode) == modes.Coraza &&
		(modes.IntegrationOf(mode) == modes.Module || modes.HostOf(mode) == modes.Caddy)
}

// hostPartsNote says how the Coraza hosts' profiles are split.
const hostPartsNote = "The same engine in two hosts, Envoy with our Go module and Caddy with our handler, split alike: sampled CPU per request (µs) by where it went. A sample belongs to the frame nearest its leaf that decides — the WAF engine (Coraza and our engine package, with the allocation, regular expressions and kernel work under them), the integration (the module's hooks, cgo's crossings and the ABI callbacks under them in Envoy; our handler's own code in Caddy), the host's own serving (Caddy's modules, net/http, the methods of net's connections), or the Go runtime's collector and monitor threads — and a stack no frame decides is the host's own (Envoy's stripped frames, Go's scheduler, the kernel under them). The host's own is split into its user-space code and the kernel's work under it (a stack through a system call, interrupt or fault entry). Envoy alone (passthrough) is all the host's own."

// writeHostParts writes the Coraza hosts' CPU by host part, when the run
// profiled a Coraza host (Envoy alone's rows alone say nothing of it).
func writeHostParts(m *md, fl *flame.Set) {
	rows := hostSplit.rows(fl)
	for _, r := range rows {
		if modes.Engine(r.Mode) == modes.Coraza {
			hostSplit.write(m, rows)
			return
		}
	}
}
