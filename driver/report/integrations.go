package report

import (
	"math"
	"slices"
	"strings"

	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// integrationsModel is the section "One engine, four ways": for each
// engine and workload, the engine's default build run as a dynamic module
// (the reference), as a proxy-wasm filter, and in the wafbench-extproc
// server through ext_proc and ext_authz, whichever the run holds.
type integrationsModel struct {
	Engines []engineWays
	// Servers are the distinct ways the server ran, as records state them
	// ("over uds on Envoy's CPUs, failing closed"), sorted.
	Servers []string
}

// engineWays is one engine's integrations, workload by workload.
type engineWays struct {
	Engine    string
	Module    string // the reference mode: the engine's dynamic module
	Workloads []wayWorkload
}

// wayWorkload is one workload through each integration the run holds.
type wayWorkload struct {
	Workload stats.WorkloadKey
	Ways     []way
}

// way is one integration's figures on one workload: medians over the
// valid windows, and, except for the module itself, geometric means of
// the per-repeat ratios against the module with their paired-t 95%
// intervals.
type way struct {
	Mode        string
	Integration modes.Integration
	N           int
	// CPU per request, µs: Envoy's, the server's (0 in-process) and both.
	EnvoyCPU, ServerCPU, TotalCPU float64
	P50, P99                      float64 // client latency, µs
	RSSMiB                        float64 // Envoy's and the server's RSS at the window's end
	StartupMs                     float64 // the server's start, then Envoy's, per trial
	// Ratios against the module (nil for the module, or without a pair).
	CPURatio, P99Ratio, RSSRatio, StartupRatio *pairedRatio
	// FailOpen is set when any window ran with the filter's
	// failure_mode_allow: requests pass uninspected when the server fails.
	FailOpen bool
}

// serverSetting says how a record's server ran, in words.
func serverSetting(sc *result.Sidecar) string {
	where := "Envoy's CPUs"
	switch sc.Placement {
	case "envoy", "":
	case "own":
		where = "its own CPUs " + cpuList(sc.CPUs)
	default:
		where = "CPUs " + cpuList(sc.CPUs)
	}
	mode := "failing closed"
	if sc.FailureModeAllow {
		mode = "failing open (failure_mode_allow)"
	}
	return sc.Integration + " over " + sc.Transport + " on " + where + ", " + mode
}

// cpuList is a CPU set as "{0,1}".
func cpuList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = itoa(c)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// pairedRatio is a geometric mean of per-repeat ratios and its interval.
type pairedRatio struct {
	N           int
	Geo, Lo, Hi float64
}

// rssKiB is the record's resident memory at the window's end: Envoy's and,
// in an external mode, the server's.
func rssKiB(r *result.Record) float64 {
	v := float64(r.Memory.RSSEndKiB)
	if r.Sidecar != nil {
		v += float64(r.Sidecar.Memory.RSSEndKiB)
	}
	return v
}

// startupOf is the time from launching the trial's processes to Envoy's
// listener accepting: the server's start (to its ready line) and then
// Envoy's; NaN on records without a start-up.
func startupOf(r *result.Record) float64 {
	if r.Startup == nil || !(r.Startup.ListenerReadyMs > 0) {
		return math.NaN()
	}
	v := r.Startup.ListenerReadyMs
	if r.Sidecar != nil {
		v += r.Sidecar.ReadyMs
	}
	return v
}

// buildIntegrations computes the model from the run's valid records; nil
// when no engine has its module and another integration in the run.
func buildIntegrations(recs []result.Record, s *stats.Summary) *integrationsModel {
	var model integrationsModel
	for _, e := range modes.Engines {
		if !slices.Contains(s.Modes, e) {
			continue
		}
		ways := []string{e}
		for _, mode := range s.Modes {
			if modes.Engine(mode) == e && mode != e && modes.IntegrationOf(mode) != modes.Module && modes.IntegrationOf(mode) != "" {
				ways = append(ways, mode)
			}
		}
		if len(ways) < 2 {
			continue
		}
		slices.SortStableFunc(ways, func(a, b string) int {
			return slices.Index(modes.Integrations, modes.IntegrationOf(a)) - slices.Index(modes.Integrations, modes.IntegrationOf(b))
		})
		ew := engineWays{Engine: e, Module: e}
		for _, w := range s.Workloads {
			ww := wayWorkload{Workload: w}
			for _, mode := range ways {
				if wy, ok := buildWay(recs, mode, e, w); ok {
					ww.Ways = append(ww.Ways, wy)
				}
			}
			if len(ww.Ways) > 1 {
				ew.Workloads = append(ew.Workloads, ww)
			}
		}
		if len(ew.Workloads) > 0 {
			model.Engines = append(model.Engines, ew)
		}
	}
	if len(model.Engines) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for i := range recs {
		if sc := recs[i].Sidecar; sc != nil && stats.Valid(&recs[i]) && !seen[serverSetting(sc)] {
			seen[serverSetting(sc)] = true
			model.Servers = append(model.Servers, serverSetting(sc))
		}
	}
	slices.Sort(model.Servers)
	return &model
}

// buildWay is mode's figures on workload w, its ratios against module.
func buildWay(recs []result.Record, mode, module string, w stats.WorkloadKey) (way, bool) {
	in := func(r *result.Record) bool {
		return stats.Valid(r) && r.Workload == w.Workload && r.Conns == w.Conns
	}
	var envoy, server, total, p50, p99, rss, startup []float64
	failOpen := false
	for i := range recs {
		r := &recs[i]
		if r.Mode != mode || !in(r) {
			continue
		}
		envoy = append(envoy, r.CPU.UsPerRequest)
		if r.Sidecar != nil {
			server = append(server, r.Sidecar.CPU.UsPerRequest)
			failOpen = failOpen || r.Sidecar.FailureModeAllow
		}
		total = append(total, r.TotalCPUUsPerRequest())
		p50, p99 = append(p50, r.Latency.P50Us), append(p99, r.Latency.P99Us)
		rss = append(rss, rssKiB(r)/1024)
	}
	// Start-up is once per trial, on its first record, whatever the workload.
	for i := range recs {
		if r := &recs[i]; r.Mode == mode && stats.Valid(r) && !math.IsNaN(startupOf(r)) {
			startup = append(startup, startupOf(r))
		}
	}
	if len(total) == 0 {
		return way{}, false
	}
	wy := way{Mode: mode, Integration: modes.IntegrationOf(mode), N: len(total),
		EnvoyCPU: stats.Median(envoy).Median, ServerCPU: stats.Median(server).Median, TotalCPU: stats.Median(total).Median,
		P50: stats.Median(p50).Median, P99: stats.Median(p99).Median, RSSMiB: stats.Median(rss).Median,
		StartupMs: stats.Median(startup).Median, FailOpen: failOpen}
	if len(server) == 0 {
		wy.ServerCPU = 0
	}
	if mode == module {
		return wy, true
	}
	pair := func(value func(*result.Record) float64, sel func(*result.Record) bool) *pairedRatio {
		ratios := pairRatios(recs, mode, module, value, sel)
		if len(ratios) == 0 {
			return nil
		}
		geo, lo, hi, _ := stats.PairedLogT(ratios, stats.Confidence)
		return &pairedRatio{N: len(ratios), Geo: geo, Lo: lo, Hi: hi}
	}
	wy.CPURatio = pair((*result.Record).TotalCPUUsPerRequest, in)
	wy.P99Ratio = pair(func(r *result.Record) float64 { return r.Latency.P99Us }, in)
	wy.RSSRatio = pair(rssKiB, in)
	wy.StartupRatio = pair(startupOf, func(r *result.Record) bool { return stats.Valid(r) && !math.IsNaN(startupOf(r)) })
	return wy, true
}

// pairRatios pairs, within each repeat (and shard), the first record of
// num and of den that sel takes and returns the ratios num/den of value.
func pairRatios(recs []result.Record, num, den string, value func(*result.Record) float64, sel func(*result.Record) bool) []float64 {
	type block struct {
		shard  string
		repeat int
	}
	type pair struct{ num, den float64 }
	byBlock := map[block]*pair{}
	var order []block
	for i := range recs {
		r := &recs[i]
		if (r.Mode != num && r.Mode != den) || !sel(r) {
			continue
		}
		v := value(r)
		if !(v > 0) {
			continue
		}
		b := block{r.Shard, r.Repeat}
		p := byBlock[b]
		if p == nil {
			p = &pair{}
			byBlock[b] = p
			order = append(order, b)
		}
		switch {
		case r.Mode == num && p.num == 0:
			p.num = v
		case r.Mode == den && p.den == 0:
			p.den = v
		}
	}
	slices.SortFunc(order, func(a, b block) int {
		if a.shard != b.shard {
			if a.shard < b.shard {
				return -1
			}
			return 1
		}
		return a.repeat - b.repeat
	})
	var out []float64
	for _, b := range order {
		if p := byBlock[b]; p.num > 0 && p.den > 0 {
			out = append(out, p.num/p.den)
		}
	}
	return out
}

// writeIntegrations writes the section "One engine, four ways" from its
// model; nothing when the run has no engine in two integrations.
func writeIntegrations(m *md, fig *figures) {
	model := buildIntegrations(fig.Records, fig.Summary)
	if model == nil {
		return
	}
	m.p("## One engine, four ways")
	m.nl()
	m.p("The same engine code, rules and configuration integrated four ways: as Envoy's dynamic module (the reference), as a proxy-wasm filter in Envoy's V8, and in the wafbench-extproc server beside Envoy, called per request over gRPC through `ext_proc` (request headers and the buffered request body; response headers only where the engine inspects responses, as the module) or `ext_authz` (one check with headers and body; it never sees the response). CPU per request is Envoy's plus the server's, each from schedstat over the same window; RSS is both processes' at the window's end; start-up is the server's start to its ready line, then Envoy's to its listener. Medians over the valid windows; ratios against the dynamic module are geometric means of the per-repeat ratios with their paired-t 95%% intervals (n/a below 2 pairs). Above 1 costs more.")
	m.nl()
	if len(model.Servers) > 0 {
		m.p("The server ran %s.", strings.Join(model.Servers, "; "))
		m.nl()
	}
	for _, e := range model.Engines {
		m.p("### %s", e.Engine)
		m.nl()
		m.head("workload", "integration", "mode", "n", "CPU µs/req Envoy", "server", "total", "total / module", "p50 µs", "p99 µs", "p99 / module", "RSS MiB", "RSS / module", "start-up ms", "start-up / module")
		for _, w := range e.Workloads {
			for _, wy := range w.Ways {
				server := noValue
				if wy.Integration.External() {
					server = f(wy.ServerCPU, 1)
				}
				label := string(wy.Integration)
				if wy.FailOpen {
					label += " (fail open)"
				}
				m.row(w.Workload.String(), label, "`"+wy.Mode+"`", itoa(wy.N),
					f(wy.EnvoyCPU, 1), server, f(wy.TotalCPU, 1), pairedCell(wy.CPURatio),
					f(wy.P50, 0), f(wy.P99, 0), pairedCell(wy.P99Ratio),
					f(wy.RSSMiB, 0), pairedCell(wy.RSSRatio), f(wy.StartupMs, 0), pairedCell(wy.StartupRatio))
			}
		}
		m.nl()
	}
}

// pairedCell is a ratio in the report's one form (withCI), noValue for
// none (the module's own row, or no pair).
func pairedCell(r *pairedRatio) string {
	if r == nil {
		return noValue
	}
	return withCI(r.Geo, r.Lo, r.Hi, ratioDigits)
}
