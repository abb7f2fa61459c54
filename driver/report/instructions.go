package report

import (
	"fmt"
	"math"
	"slices"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// writeInstructions is run --callgrind's answer: per workload and mode the
// instructions per request of the whole Envoy process, inside the WAF
// module's hooks and outside them, medians over repeats with their spread,
// beside passthrough's whole-process count. It writes nothing when no
// record carries instruction counts.
func writeInstructions(m *md, fig *figures) {
	im := buildInstructions(fig.Records, fig.Summary)
	if im == nil {
		return
	}
	m.p("## Instructions per request")
	m.nl()
	m.p(instructionsMethod, orNone(im.tool), spanOf(im.warmup), spanOf(im.requests))
	m.nl()
	m.head("workload", "mode", "n", "Envoy Ir/req", "spread", "inside hooks Ir/req", "spread", "outside hooks Ir/req", "outside − passthrough", "hooks share of Envoy")
	for _, r := range im.rows {
		row := []string{r.w.String(), "`" + r.mode + "`", itoa(r.n), irCell(r.envoy.Median), spreadCell(r.envoy)}
		if !r.split {
			m.row(append(row, "–", "–", "–", "–", "–")...)
			continue
		}
		over := noValue
		if r.hasOver {
			over = irCell(r.over)
		}
		m.row(append(row, irCell(r.hooks.Median), spreadCell(r.hooks), irCell(r.outside.Median), over,
			f(r.sharePct, 1)+"%")...)
	}
	m.nl()
}

// instructionsMethod says how instructions are counted; its verbs are the
// tool and the spans of warm-up and counted requests.
const instructionsMethod = "Envoy ran under valgrind's callgrind (%s; `run --callgrind`), so this run's CPU, throughput and latency figures are valgrind's, not Envoy's: read only the instruction counts. " +
	"Per workload, in each Envoy process: %s warm-up requests uncounted, then %s requests counted over the whole process (every thread; " +
	"callgrind's Ir, instructions executed), then in a WAF mode as many again with every outermost call of the module's `envoy_dynamic_module_on_*` hooks excluded " +
	"(the meter, `filters/meter`, loaded in the module's place, forwards every hook to it); *inside hooks* is the first count less the second, " +
	"inclusive of everything the hooks call (engine, allocator, Envoy's callbacks). Requests go one at a time over one connection. " +
	"Medians over repeats; spread is (max − min) / median. The meter adds a call and three memory reads per hook call to the whole-process count. " +
	"Envoy flushes stats only when asked (`stats_flush_on_admin`: no 5 s timer inside a window). " +
	"The Go module runs with `GODEBUG=asyncpreemptoff=1` (callgrind 3.19 fails on Go's preemption signals) and `GOGC=off`: " +
	"a collection cycle would fall into one window and not the next, so Coraza's counts leave garbage collection out."

// instrMedian is the median of per(in) over in, with its range.
func instrMedian(in []*result.Instructions, per func(*result.Instructions) float64) stats.Estimate {
	v := make([]float64, len(in))
	for i, x := range in {
		v[i] = per(x)
	}
	e := stats.Median(v)
	if len(v) > 0 {
		e.Lo, e.Hi = slices.Min(v), slices.Max(v)
	}
	return e
}

// irCell is an instruction count with thin-space thousands separators.
func irCell(v float64) string {
	if math.IsNaN(v) {
		return noValue
	}
	n := int64(math.Round(v))
	sign := ""
	if n < 0 {
		sign, n = "−", -n
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return sign + s
}

// spreadCell is (max − min) / median of e in per cent, "–" for one value.
func spreadCell(e stats.Estimate) string {
	if e.N < 2 || e.Median == 0 {
		return noValue
	}
	return f(100*(e.Hi-e.Lo)/math.Abs(e.Median), 2) + "%"
}

// spanOf is the one value of v, or its range.
func spanOf(v []int64) string {
	lo, hi := slices.Min(v), slices.Max(v)
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}
