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

// hostPartsRow is one Coraza host's (Envoy with our Go module, or Caddy
// with our handler) sampled CPU per request, split by host part
// (perf.HostPartOrder).
type hostPartsRow struct {
	Mode, Key string
	Parts     []float64 // µs per request, in perf.HostPartOrder
	Total     float64
}

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

// hostParts splits the profiles of the Coraza hosts (and of Envoy alone)
// by host part; nil without a Coraza host.
func hostParts(fl *flame.Set) []hostPartsRow {
	var rows []hostPartsRow
	coraza := false
	for _, g := range fl.Groups {
		if !hostPartsMode(g.Mode) || g.Requests == 0 {
			continue
		}
		parts := g.Stacks.HostParts()
		row := hostPartsRow{Mode: g.Mode, Key: g.Key()}
		for _, p := range perf.HostPartOrder {
			us := float64(parts[p]) / 1e3 / float64(g.Requests)
			row.Parts = append(row.Parts, us)
			row.Total += us
		}
		rows = append(rows, row)
		coraza = coraza || modes.Engine(g.Mode) == modes.Coraza
	}
	if !coraza {
		return nil
	}
	return rows
}

// hostPartsNote says how the Coraza hosts' profiles are split.
const hostPartsNote = "The same engine in two hosts, Envoy with our Go module and Caddy with our handler, split alike: sampled CPU per request (µs) by where it went. A sample belongs to the frame nearest its leaf that decides — the WAF engine (Coraza and our engine package, with the allocation, regular expressions and kernel work under them), the integration (the module's hooks, cgo's crossings and the ABI callbacks under them in Envoy; our handler's own code in Caddy), the host's own serving (Caddy's modules, Go's net and net/http), or the Go runtime's collector and monitor threads — and a stack no frame decides is the host's own (Envoy's stripped frames, Go's scheduler, the kernel under them). The host's own is split into its user-space code and the kernel's work under it (a stack through a system call, interrupt or fault entry). Envoy alone (passthrough) is all the host's own."

// writeHostParts writes the Coraza hosts' CPU by host part.
func writeHostParts(m *md, fl *flame.Set) {
	rows := hostParts(fl)
	if len(rows) == 0 {
		return
	}
	m.p("%s", hostPartsNote)
	m.nl()
	m.head(append(append([]string{"mode", "workload"}, perf.HostPartOrder...), "sampled")...)
	for _, r := range rows {
		cells := []string{"`" + r.Mode + "`", r.Key}
		for _, us := range r.Parts {
			cells = append(cells, f(us, 1))
		}
		m.row(append(cells, f(r.Total, 1))...)
	}
	m.nl()
}
