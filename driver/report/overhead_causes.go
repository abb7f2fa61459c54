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
	// extra work outside the hooks, our glue (module + ABI callbacks), and
	// the rest, the WAF's own work (Added − EnvoyExtra − Glue: engine,
	// regex, allocator, helpers, the kernel inside the hooks, the Go
	// runtime's threads, unattributed samples).
	Added, EnvoyExtra, Glue, Work []float64
	// Parts is the account row's µs per request by part, per repeat.
	Parts [account.NParts][]float64
}

// workParts are the parts of a WAF's own work, compared one by one with
// the engine alone (account.Alone places the benchmark's samples on the
// same parts).
var workParts = []account.Part{account.Engine, account.Regex, account.Alloc, account.HookOther, account.Module, account.Kernel, account.Runtime}

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
			added := r.CPU[i] - base.CPU[j]
			extra := r.Parts[account.Envoy][i] - base.CPU[j]
			glue := r.Parts[account.Module][i] + r.Parts[account.ABI][i]
			c.Added, c.EnvoyExtra, c.Glue = append(c.Added, added), append(c.EnvoyExtra, extra), append(c.Glue, glue)
			c.Work = append(c.Work, added-extra-glue)
			for p := range account.NParts {
				c.Parts[p] = append(c.Parts[p], r.Parts[p][i])
			}
		}
		if len(c.Added) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// writeOverheadCauses explains the integration overhead of a run that has
// both the cost account and the engine benchmarks (scripts/overhead.sh,
// which runs with --perf): what the mode adds over passthrough, cause by
// cause, and the overhead left once each is taken out, ending with the
// WAF's own work inside Envoy against the engine alone with its caches
// evicted between requests (tests/enginebench.ThrashEnv); then, where the
// benchmarks were profiled too, that work part by part against the engine
// alone.
func writeOverheadCauses(m *md, fig *figures) {
	rows := causeRows(fig)
	if len(rows) == 0 {
		return
	}
	m.p("### Where the overhead goes")
	m.nl()
	m.p("What each WAF mode adds over passthrough (the cost account's CPU, paired by repeat), split by the account into Envoy's extra work outside the hooks (buffering, local replies), our glue (module + ABI callbacks) and the rest, the WAF's own work: engine, regex, allocator, libc/libstdc++ helpers and the kernel inside the hooks, the Go runtime's threads (whose GC work a Go benchmark's time includes) and unattributed samples. The engine-only benchmark runs with the allocator the engine gets inside Envoy (libmodsecurity: tcmalloc; Coraza: its Go heap), hot (its data cached from the previous request, as a benchmark loop leaves it) and cold (a buffer written between requests, untimed, so each starts with caches holding other work, as Envoy's own request work leaves them). Each ratio is per repeat, divided by the engine-only median, with a 95%% t interval over repeats: **overhead** = added ÷ engine-only hot; **net of Envoy** = (added − Envoy's extra) ÷ hot; **net of Envoy and glue** = the WAF's own work ÷ hot; **÷ cold** = that work ÷ engine-only cold — 1 means the engine inside Envoy costs what it costs alone with cold caches.")
	m.nl()
	m.head("mode", "workload", "engine-only hot µs", "engine-only cold µs", "added µs", "Envoy's extra µs", "glue µs", "WAF's own work µs", "overhead", "net of Envoy", "net of Envoy and glue", "WAF's own work ÷ cold")
	for _, c := range rows {
		hot := c.Hot.NsPerOp.Median / 1e3
		netEnvoy := make([]float64, len(c.Added))
		for i := range c.Added {
			netEnvoy[i] = c.Added[i] - c.EnvoyExtra[i]
		}
		var colds, inSitu []string
		for _, e := range c.Cold {
			cold := e.NsPerOp.Median / 1e3
			colds = append(colds, f(cold, 1)+" ("+e.Caches+")")
			inSitu = append(inSitu, ratioMeanCell(scaled(c.Work, 1/cold)))
		}
		m.row(c.Mode, stats.WorkloadKey{Workload: c.Workload, Conns: c.Conns}.String(), f(hot, 1), orDash(strings.Join(colds, "; ")),
			meanCell(c.Added), meanCell(c.EnvoyExtra), meanCell(c.Glue), meanCell(c.Work),
			ratioMeanCell(scaled(c.Added, 1/hot)), ratioMeanCell(scaled(netEnvoy, 1/hot)), ratioMeanCell(scaled(c.Work, 1/hot)), orDash(strings.Join(inSitu, "; ")))
	}
	m.nl()
	writeOverheadParts(m, rows)
}

// writeOverheadParts compares, part by part, the WAF's own work inside
// Envoy with the engine alone, where scripts/overhead.sh profiled the
// benchmarks too (engineBench.Parts).
func writeOverheadParts(m *md, rows []*causeRow) {
	var with []*causeRow
	for _, c := range rows {
		if c.Hot.Parts != nil {
			with = append(with, c)
		}
	}
	if len(with) == 0 {
		return
	}
	m.p("**The WAF's own work, part by part, inside Envoy and alone** (µs per request). Envoy's column is the cost account's (mean ± 95%% t over repeats); the engine alone is its benchmark's time per op split by the same rules applied to the benchmark's own perf profile, recorded at the same rate (`account.Alone`: every sample is the engine's; kernel frames are the kernel, the Go runtime's background work is the runtime). **Δ** is Envoy's mean less the engine alone with the largest cold buffer: where inside Envoy the same engine spends more. The benchmarks ran under perf as Envoy did, so both sides carry its sampling cost.")
	m.nl()
	head := []string{"mode", "workload", "part", "inside Envoy", "alone, hot"}
	for _, e := range with[0].Cold {
		head = append(head, "alone, "+e.Caches)
	}
	m.head(append(head, "Δ")...)
	for _, c := range with {
		delta, all, ok := partsDelta(c)
		wl := stats.WorkloadKey{Workload: c.Workload, Conns: c.Conns}.String()
		total := []string{c.Mode, wl, "**all**", meanCell(c.Work), f(sum(c.Hot.Parts), 0)}
		for _, e := range c.Cold {
			total = append(total, partCell(e, -1))
		}
		for _, p := range workParts {
			row := []string{c.Mode, wl, p.String(), meanCell(c.Parts[p]), f(c.Hot.Parts[p], 0)}
			for _, e := range c.Cold {
				row = append(row, partCell(e, p))
			}
			m.row(append(row, deltaCell(delta[p], ok))...)
		}
		m.row(append(total, deltaCell(all, ok))...)
	}
	m.nl()
	m.p("**all** inside Envoy is the WAF's own work of the table above (unattributed samples included); alone it is the benchmark's whole time per op.")
	m.nl()
}

// partsDelta is c's mean inside Envoy less the engine alone with the last
// profiled cold buffer, per part and over all parts; ok is false when no
// cold benchmark was profiled.
func partsDelta(c *causeRow) (delta [account.NParts]float64, all float64, ok bool) {
	var last *engineBench
	for _, e := range c.Cold {
		if e.Parts != nil {
			last = e
		}
	}
	if last == nil {
		return delta, 0, false
	}
	for _, p := range workParts {
		mean, _ := meanT(c.Parts[p])
		delta[p] = mean - last.Parts[p]
	}
	mean, _ := meanT(c.Work)
	return delta, mean - sum(last.Parts), true
}

func deltaCell(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return signed(v)
}

// partCell is e's µs for part p (all parts for p < 0), "–" without a
// profile.
func partCell(e *engineBench, p account.Part) string {
	switch {
	case e.Parts == nil:
		return noValue
	case p < 0:
		return f(sum(e.Parts), 0)
	}
	return f(e.Parts[p], 0)
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// signed is v with its sign: "+12", "-3".
func signed(v float64) string {
	if v >= 0 {
		return "+" + f(v, 0)
	}
	return f(v, 0)
}

// scaled is v times k.
func scaled(v []float64, k float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return noValue
	}
	return s
}

// ratioMeanCell is a ratio's mean with its interval: "1.23 ±0.04".
func ratioMeanCell(v []float64) string {
	mean, half := meanT(v)
	switch {
	case math.IsNaN(mean):
		return noValue
	case math.IsNaN(half):
		return f(mean, 2)
	}
	return f(mean, 2) + " ±" + f(half, 2)
}
