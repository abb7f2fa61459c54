package report

import (
	"math"
	"slices"

	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// writeStartup is the report's answer to "what does a mode cost before and
// beside its throughput?": per mode the time a fresh proxy took to become
// ready and its resident memory, then per workload each mode's req/s next
// to its RSS, and, when the run has both Coraza hosts, the paired ratios
// coraza-wasm/coraza of CPU per request, RSS and start-up. It writes
// nothing when no record carries a start-up time.
func writeStartup(m *md, fig *figures) {
	recs, s := fig.Records, fig.Summary
	rows := buildStartup(recs, s)
	if rows == nil {
		return
	}
	m.p("## Start-up and memory")
	m.nl()
	m.p("Start-up is the time from launching a fresh proxy to its listener accepting connections (Envoy: admin /ready LIVE and the listener bound), once per trial. coraza-wasm's includes V8 compiling the whole Wasm module; its first request waits for it. RSS is the proxy's resident memory after the warm-up and at the end of each measured window. Medians with their 95%% order-statistic intervals (– below 6 values).")
	m.nl()
	m.head("mode", "trials", "start-up s", "95% CI", "RSS after warm-up MiB", "RSS at end MiB", "peak MiB")
	for _, r := range rows {
		st := r.startup
		m.row("`"+r.mode+"`", itoa(st.N), f(st.Median/1000, 2), ci(st.Lo/1000, st.Hi/1000, 2),
			f(r.warm, 0), f(r.end, 0), f(r.peak, 0))
	}
	m.nl()
	writePerCPUCaches(m, recs)
	writeThroughputMemory(m, s)
	writeWasmRatios(m, recs, s)
}

// writeThroughputMemory is the table of median req/s beside median RSS at
// the end of the window, per workload and mode.
func writeThroughputMemory(m *md, s *stats.Summary) {
	m.p("Throughput beside memory, per workload: median req/s and median RSS at the end of the window.")
	m.nl()
	head := []string{"workload"}
	for _, mode := range s.Modes {
		head = append(head, "`"+mode+"` req/s", "MiB")
	}
	m.head(head...)
	for _, w := range s.Workloads {
		row := []string{w.String()}
		for _, mode := range s.Modes {
			g := s.Group(stats.Key{Mode: mode, Workload: w.Workload, Conns: w.Conns})
			if g == nil || g.N == 0 {
				row = append(row, "–", "–")
				continue
			}
			row = append(row, f(g.ReqPerS.Median, 0), f(g.RSSEndKiB.Median/1024, 0))
		}
		m.row(row...)
	}
	m.nl()
}

// writeWasmRatios: coraza-wasm against the native coraza module, paired
// within repeats (geometric-mean ratio, paired-t 95% interval).
func writeWasmRatios(m *md, recs []result.Record, s *stats.Summary) {
	if !slices.Contains(s.Modes, modes.CorazaWasm) || !slices.Contains(s.Modes, modes.Coraza) {
		return
	}
	m.p("### %s / %s", modes.CorazaWasm, modes.Coraza)
	m.nl()
	m.p("The same Coraza engine, rules and request logic as a proxy-wasm plugin in V8 against the native dynamic module, paired within repeats: geometric mean of the per-repeat ratios with its paired-t 95%% interval ([–] below 2 pairs). Above 1 costs more.")
	m.nl()
	m.head("metric", "workload", "n", "coraza-wasm/coraza, "+ratioHead)
	for _, w := range s.Workloads {
		for _, c := range s.Comparisons {
			if c.WorkloadKey == w && c.Num == modes.CorazaWasm && c.Den == modes.Coraza && c.Metric == stats.MetricCPU {
				m.row(c.Metric.Label(), w.String(), itoa(c.N()), ratioCell(&c))
			}
		}
	}
	for _, w := range s.Workloads {
		ratios := pairedRatios(recs, func(r *result.Record) (float64, bool) {
			return float64(r.Memory.RSSEndKiB), r.Workload == w.Workload && r.Conns == w.Conns && r.Memory.RSSEndKiB > 0
		})
		if len(ratios) > 0 {
			m.row("RSS at end", w.String(), itoa(len(ratios)), geoCell(ratios))
		}
	}
	ratios := pairedRatios(recs, func(r *result.Record) (float64, bool) {
		return startupMs(r), r.Startup != nil && r.Startup.ListenerReadyMs > 0
	})
	if len(ratios) > 0 {
		m.row("start-up", "per trial", itoa(len(ratios)), geoCell(ratios))
	}
	m.nl()
}

func startupMs(r *result.Record) float64 {
	if r.Startup == nil {
		return math.NaN()
	}
	return r.Startup.ListenerReadyMs
}

// pairedRatios pairs, within each repeat, the coraza-wasm record and the
// coraza record that value selects (the first of each) and returns the
// ratios wasm/native of their values.
func pairedRatios(recs []result.Record, value func(*result.Record) (float64, bool)) []float64 {
	type pair struct{ wasm, native float64 }
	byRepeat := map[int]*pair{}
	var repeats []int
	for i := range recs {
		r := &recs[i]
		if !stats.Valid(r) || (r.Mode != modes.CorazaWasm && r.Mode != modes.Coraza) {
			continue
		}
		v, ok := value(r)
		if !ok || !(v > 0) {
			continue
		}
		p := byRepeat[r.Repeat]
		if p == nil {
			p = &pair{}
			byRepeat[r.Repeat] = p
			repeats = append(repeats, r.Repeat)
		}
		if r.Mode == modes.CorazaWasm && p.wasm == 0 {
			p.wasm = v
		} else if r.Mode == modes.Coraza && p.native == 0 {
			p.native = v
		}
	}
	slices.Sort(repeats)
	var out []float64
	for _, rep := range repeats {
		if p := byRepeat[rep]; p.wasm > 0 && p.native > 0 {
			out = append(out, p.wasm/p.native)
		}
	}
	return out
}

func kibToMiB(k int64) float64 { return float64(k) / 1024 }

func maxOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return slices.Max(v)
}

// writePerCPUCaches says in how many Envoy trials tcmalloc ran with its
// per-CPU caches (result.Startup.TcmallocPerCPU); nothing for runs that
// did not record it.
func writePerCPUCaches(m *md, recs []result.Record) {
	type trial struct {
		shard string
		n     int
	}
	seen := map[trial]bool{} // one answer per fresh Envoy
	for i := range recs {
		r := &recs[i]
		if r.Startup != nil && r.Startup.TcmallocPerCPU != nil {
			seen[trial{r.Shard, r.Trial}] = *r.Startup.TcmallocPerCPU
		}
	}
	if len(seen) == 0 {
		return
	}
	on := 0
	for _, v := range seen {
		if v {
			on++
		}
	}
	m.p("Envoy's tcmalloc ran with its per-CPU caches in %d of %d Envoy trials (admin /memory/tcmalloc after start-up: per-CPU slabs resident). They need tcmalloc's own rseq registration, which glibc ≥ 2.35 takes first for every thread unless Envoy runs with `GLIBC_TUNABLES=glibc.pthread.rseq=0` (google/tcmalloc#144); without them every allocation in Envoy, the WAF engines' included, takes a slower path.", on, len(seen))
	m.nl()
}
