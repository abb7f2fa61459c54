package report

import (
	"math"
	"slices"
	"strings"

	"wafbench/driver/account"
	"wafbench/driver/modes"
	"wafbench/driver/stats"
)

// envoyAllocator is, per engine, the allocator its engine-only benchmark
// must run with to match Envoy: libmodsecurity's malloc/free resolve to the
// tcmalloc Envoy's executable exports, Coraza's Go heap is its own.
var envoyAllocator = map[string]string{"modsecurity": "tcmalloc", "coraza": "go"}

// causeRow is one WAF mode × workload of a run that has both a cost
// account (run --perf) and engine benchmarks: per repeat, the CPU µs per
// request the mode adds over passthrough, split by the account.
type causeRow struct {
	Mode, Workload string
	Conns          int
	Hot            *engineBench   // engine-only, caches hot, Envoy's allocator
	Cold           []*engineBench // the same with caches cold, by thrash size
	// Per repeat paired with passthrough's: what the mode adds, Envoy's
	// extra work outside the hooks, glue (module + ABI), kernel inside the
	// hooks, Go runtime and unattributed samples, and the engine's own work
	// inside the hooks (engine, regex, allocator, helpers). The last five
	// sum to Added.
	Added, EnvoyExtra, Glue, Kernel, Other, Work []float64
}

// causeRows pairs fig's account rows with its engine benchmarks.
func causeRows(fig *figures) []*causeRow {
	if fig.Overhead == nil || len(fig.Account) == 0 {
		return nil
	}
	var out []*causeRow
	for _, r := range fig.Account {
		if r.Mode == modes.Baseline {
			continue
		}
		var base *accountRow
		for _, b := range fig.Account {
			if b.Mode == modes.Baseline && b.key() == r.key() {
				base = b
			}
		}
		if base == nil {
			continue
		}
		c := &causeRow{Mode: r.Mode, Workload: r.Workload, Conns: r.Conns}
		for i := range fig.Overhead.Engines {
			e := &fig.Overhead.Engines[i]
			if e.Engine != r.Mode || e.Workload != r.Workload || e.Allocator != envoyAllocator[e.Engine] {
				continue
			}
			if e.Caches == "" {
				c.Hot = e
			} else {
				c.Cold = append(c.Cold, e)
			}
		}
		if c.Hot == nil {
			continue
		}
		for i, rep := range r.Repeats {
			j := slices.Index(base.Repeats, rep)
			if j < 0 {
				continue
			}
			part := func(p account.Part) float64 { return r.Parts[p][i] }
			c.Added = append(c.Added, r.CPU[i]-base.CPU[j])
			c.EnvoyExtra = append(c.EnvoyExtra, part(account.Envoy)-base.CPU[j])
			c.Glue = append(c.Glue, part(account.Module)+part(account.ABI))
			c.Kernel = append(c.Kernel, part(account.Kernel))
			c.Other = append(c.Other, part(account.Runtime)+part(account.Unattributed))
			c.Work = append(c.Work, part(account.Engine)+part(account.Regex)+part(account.Alloc)+part(account.HookOther))
		}
		if len(c.Added) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// writeOverheadCauses explains the integration overhead of a run that has
// both the cost account and the engine benchmarks (scripts/overhead.sh
// with --perf): what the mode adds over passthrough, cause by cause, and
// the overhead left once each is taken out, ending with the engine's own
// work inside Envoy against the engine alone with its caches evicted
// between requests (tests/enginebench.ThrashEnv).
func writeOverheadCauses(m *md, fig *figures) {
	rows := causeRows(fig)
	if len(rows) == 0 {
		return
	}
	m.p("### Where the overhead goes")
	m.nl()
	m.p("What each WAF mode adds over passthrough (the cost account's CPU, paired by repeat), split by the account into Envoy's extra work outside the hooks (buffering, local replies), our glue (module + ABI callbacks), the kernel inside the hooks, the Go runtime's threads and unattributed samples, and the engine's own work inside the hooks (engine, regex, allocator, libc/libstdc++ helpers). The engine-only benchmark runs with the allocator the engine gets inside Envoy (libmodsecurity: tcmalloc; Coraza: its Go heap), hot (its data cached from the previous request, as a benchmark loop leaves it) and cold (a buffer written between requests, untimed, so each starts with caches holding other work, as Envoy's own request work leaves them). Each ratio is per repeat, divided by the engine-only median, with a 95%% t interval over repeats: **overhead** = added ÷ engine-only hot; **net of Envoy** = (added − Envoy's extra) ÷ hot; **net of Envoy and glue** = the engine's own work in the hooks ÷ hot (also net of the kernel, runtime and unattributed parts); **in situ ÷ cold** = that work ÷ engine-only cold — 1 means the engine inside Envoy costs what it costs alone with cold caches. The account's CPU includes perf's sampling cost; the benchmarks ran without it.")
	m.nl()
	m.head("mode", "workload", "engine-only hot µs", "engine-only cold µs", "added µs", "Envoy's extra µs", "glue µs", "kernel µs", "runtime + unattr. µs", "engine work µs", "overhead", "net of Envoy", "net of Envoy and glue", "in situ ÷ cold")
	for _, c := range rows {
		hot := c.Hot.NsPerOp.Median / 1e3
		ratio := func(v []float64, den float64) string {
			out := make([]float64, len(v))
			for i, x := range v {
				out[i] = x / den
			}
			return ratioMeanCell(out)
		}
		netEnvoy := make([]float64, len(c.Added))
		for i := range c.Added {
			netEnvoy[i] = c.Added[i] - c.EnvoyExtra[i]
		}
		coldUs, inSitu := "–", "–"
		var colds, situs []string
		for _, e := range c.Cold {
			cold := e.NsPerOp.Median / 1e3
			colds = append(colds, f(cold, 1)+" ("+e.Caches+")")
			situs = append(situs, ratio(c.Work, cold))
		}
		if len(colds) > 0 {
			coldUs, inSitu = strings.Join(colds, "; "), strings.Join(situs, "; ")
		}
		m.row(c.Mode, stats.WorkloadKey{Workload: c.Workload, Conns: c.Conns}.String(), f(hot, 1), coldUs,
			meanCell(c.Added), meanCell(c.EnvoyExtra), meanCell(c.Glue), meanCell(c.Kernel), meanCell(c.Other), meanCell(c.Work),
			ratio(c.Added, hot), ratio(netEnvoy, hot), ratio(c.Work, hot), inSitu)
	}
	m.nl()
}

// ratioMeanCell is a ratio's mean with its interval: "1.23 ±0.04".
func ratioMeanCell(v []float64) string {
	mean, half := meanT(v)
	switch {
	case math.IsNaN(mean):
		return "–"
	case math.IsNaN(half):
		return f(mean, 2)
	}
	return f(mean, 2) + " ±" + f(half, 2)
}
