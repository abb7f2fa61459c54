package report

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// soakMinPoints is the shortest RSS series the soak section fits: half a
// minute of once-a-second samples.
const soakMinPoints = 30

// Latency drift compares the first and the last driftSpanS seconds of a
// window, slot by slot; a slot counts with driftMinCount valid responses or
// more (a p99 of fewer is one of its few largest values).
const (
	driftSpanS    = 60
	driftMinCount = 100
)

// soakVerdict words a slope of resident memory (MiB per minute) over the
// window, and over its second half: memory a process touches for the first
// time early in its life (pages of a pool, a cache filling) grows and
// stops, a leak grows throughout, so a growth whose second half shows no
// slope is named as what was measured, not called a leak.
func soakVerdict(s, late stats.Slope) string {
	switch {
	case math.IsNaN(s.PerX):
		return "too few samples"
	case s.Lo > 0 && late.Lo > 0:
		return "**growing**: the interval excludes 0, in the second half too"
	case s.Lo > 0:
		return "**growing** over the window, no slope established in its second half"
	case s.Hi < 0:
		return "shrinking: the interval excludes 0"
	}
	return "no slope established (the interval includes 0)"
}

// writeSoak states, for each window whose proxy RSS was sampled every
// second (windows of a minute or more: the soak suite), the least-squares
// slope of RSS over the window with its 95% interval, the window's errors
// by kind and its attacks' answers, then the latency drift from the first
// minute to the last where the window's latencies were kept by slot.
// Windows counted under callgrind are left out: valgrind's process, with
// the Go module's garbage collector off, is not the proxy a soak is about.
func writeSoak(m *md, fig *figures) {
	var rows []*result.Record
	for i := range fig.Records {
		if r := &fig.Records[i]; len(r.RSSSeriesKiB) >= soakMinPoints && r.Instructions == nil {
			rows = append(rows, &fig.Records[i])
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool { return modes.Rank(rows[i].Mode) < modes.Rank(rows[j].Mode) })
	m.p("## Soak: resident memory, errors and latency over the window")
	m.nl()
	m.p("The proxy's VmRSS read once a second through each measured window of a minute or more, and its least-squares slope in MiB per minute with a 95%% interval. Successive readings are autocorrelated (ρ, the residuals' lag-1 autocorrelation), so the interval treats the residuals as AR(1): the standard error is inflated by √((1+ρ)/(1−ρ)) and the t quantile takes the effective number of independent readings, n(1−ρ)/(1+ρ), less 2 degrees of freedom (`driver/stats/slope.go`). The second half's slope is fitted the same way: memory a process touches for the first time early on grows and stops, a leak grows throughout. A **growing** verdict is a lead to follow with a longer soak; a slope not established at a large ρ says the window was too short to tell, not that memory is flat. Errors are the window's failed or unexpected answers by kind; attacks are the answers to the concurrent attack stream (a WAF must never answer one 200).")
	m.nl()
	m.head("mode", "workload", "repeat", "minutes", "RSS first → last MiB", "slope MiB/min [95% CI]", "ρ", "effective n", "second half: slope MiB/min [95% CI]", "errors", "attacks: answers", "verdict")
	for _, r := range rows {
		y := make([]float64, len(r.RSSSeriesKiB))
		for i, v := range r.RSSSeriesKiB {
			y[i] = float64(v) / 1024
		}
		s := stats.LinearSlope(y, 1.0/60) // one sample a second: x in minutes
		late := stats.LinearSlope(y[len(y)/2:], 1.0/60)
		m.row("`"+r.Mode+"`", "`"+r.Workload+"`", fmt.Sprint(r.Repeat), fmt.Sprintf("%.1f", float64(len(y)-1)/60),
			fmt.Sprintf("%.1f → %.1f", y[0], y[len(y)-1]), withCI(s.PerX, s.Lo, s.Hi, 3),
			fmt.Sprintf("%.3f", s.Rho), fmt.Sprintf("%.0f", s.NEff), withCI(late.PerX, late.Lo, late.Hi, 3),
			countsCell(r.Errors), attacksCell(r), soakVerdict(s, late))
	}
	m.nl()
	writeDrift(m, rows)
	writeCPUDrift(m, rows)
	writeWaitDrift(m, rows)
	writeAllocator(m, rows)
}

// countsCell is "0", or the total then each kind ("3: timeout×2 status_503×1").
func countsCell(c map[string]int64) string {
	var total int64
	var parts []string
	for k, v := range c {
		total += v
		parts = append(parts, fmt.Sprintf("%s×%d", k, v))
	}
	if total == 0 {
		return "0"
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d: %s", total, strings.Join(parts, " "))
}

// attacksCell is the attack stream's answers, with a WAF's 200s called out.
func attacksCell(r *result.Record) string {
	if r.AttackWorkload == "" {
		return noValue
	}
	s := countsCell(r.Attacks)
	if modes.IsWAF(r.Mode) && r.Attacks["200"] > 0 {
		s += fmt.Sprintf(" (**%d answered 200**)", r.Attacks["200"])
	}
	return s
}

// slotPercentiles are the p50 and p99 (µs) of the slots of r whose whole
// span lies in [from, to) seconds of the window and that hold at least
// driftMinCount responses.
func slotPercentiles(r *result.Record, from, to float64) (p50, p99 []float64, err error) {
	ls := r.LatencySlots
	for i, b64 := range ls.HistBase64 {
		start := float64(i) * ls.EveryS
		end := math.Min(start+ls.EveryS, r.DurationS)
		if start < from-1e-9 || end > to+1e-9 || b64 == "" {
			continue
		}
		h, err := load.DecodeHist(b64)
		if err != nil {
			return nil, nil, fmt.Errorf("slot %d: %w", i, err)
		}
		if h.TotalCount() < driftMinCount {
			continue
		}
		p50 = append(p50, float64(h.ValueAtQuantile(50)))
		p99 = append(p99, float64(h.ValueAtQuantile(99)))
	}
	return p50, p99, nil
}

// driftVerdict words a last/first ratio: higher or lower at the end where
// its interval excludes 1 ("slower", "faster" for latency).
func driftVerdict(q stats.Ratio, higher, lower string) string {
	switch {
	case math.IsNaN(q.Lo):
		return "too few slots"
	case q.Lo > 1:
		return "**" + higher + "** at the end"
	case q.Hi < 1:
		return lower + " at the end"
	}
	return "no drift established"
}

// writeDrift compares each soak window's first minute with its last: the
// p50 and p99 of every 10-s slot (result.LatencySlots), the ratio of the
// last minute's geometric mean to the first's with Welch's 95% interval on
// the logs. The slot, not the request, is the unit: latencies within a few
// seconds share the machine's state (a GC, a neighbour's burst), so a
// bootstrap over single requests would give an interval far too narrow;
// slots 10 s apart are much closer to independent. The two minutes are
// independent groups (no pairing of slot k with slot k), hence Welch.
func writeDrift(m *md, rows []*result.Record) {
	var with []*result.Record
	for _, r := range rows {
		if r.LatencySlots != nil && len(r.LatencySlots.HistBase64) > 0 {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		m.p("Latency drift between the first and last minute is not in these records (written before latencies were kept by slot).")
		m.nl()
		return
	}
	m.p("**Latency drift, first minute → last minute.** Each window's latencies are kept by %g-s slot; a slot with %d valid responses or more gives its p50 and p99. The ratio is the last minute's geometric mean over the first's with Welch's 95%% t interval on the logs: the slot is the unit (latencies seconds apart share the machine's state, so resampling single requests would understate the interval), and the two minutes are independent groups, not pairs. A verdict is given only where the interval excludes 1.", with[0].LatencySlots.EveryS, driftMinCount)
	m.nl()
	m.head("mode", "workload", "repeat", "slots first / last", "p50 first → last ms", "p50 last/first [95% CI]", "p99 first → last ms", "p99 last/first [95% CI]", "verdict")
	for _, r := range with {
		cells := []string{"`" + r.Mode + "`", "`" + r.Workload + "`", fmt.Sprint(r.Repeat)}
		if r.DurationS < 2*driftSpanS {
			m.row(append(cells, "–", "–", "–", "–", "–", fmt.Sprintf("window %.0f s: the first and last minute overlap", r.DurationS))...)
			continue
		}
		a50, a99, err1 := slotPercentiles(r, 0, driftSpanS)
		b50, b99, err2 := slotPercentiles(r, r.DurationS-driftSpanS, r.DurationS)
		if err := errors.Join(err1, err2); err != nil {
			m.row(append(cells, "–", "–", "–", "–", "–", "unreadable slots: "+err.Error())...)
			continue
		}
		q50, q99 := stats.WelchLogRatio(a50, b50, 0.95), stats.WelchLogRatio(a99, b99, 0.95)
		v50, v99 := driftVerdict(q50, "slower", "faster"), driftVerdict(q99, "slower", "faster")
		verdict := "p50 " + v50 + "; p99 " + v99
		if v50 == v99 {
			verdict = "p50 and p99: " + v50
		}
		m.row(append(cells, fmt.Sprintf("%d / %d", q50.NA, q50.NB),
			geoPair(a50, b50, 1e-3, 2), driftCell(q50), geoPair(a99, b99, 1e-3, 2), driftCell(q99), verdict)...)
	}
	m.nl()
}

// geoPair is "A → B": the geometric means of a and b times scale, with
// digits decimals ("–" for an empty side).
func geoPair(a, b []float64, scale float64, digits int) string {
	g := func(v []float64) string {
		if len(v) == 0 {
			return noValue
		}
		var s float64
		for _, x := range v {
			s += math.Log(x)
		}
		return f(math.Exp(s/float64(len(v)))*scale, digits)
	}
	return g(a) + " → " + g(b)
}

func driftCell(q stats.Ratio) string {
	if math.IsNaN(q.Geo) {
		return noValue
	}
	return withCI(q.Geo, q.Lo, q.Hi, 3)
}

// cpuSlotS is the slot of the soak's CPU drift, as the latency slots':
// seconds next to each other share the machine's state.
const cpuSlotS = 10

// cpuSlots are the proxy's CPU µs per valid response in each cpuSlotS
// slot of r whose whole span lies in [from, to) seconds of the window: the
// CPU time between the readings at the slot's edges (CPUSeriesUs, one a
// second from the window's start) over the responses completed in its
// seconds (PerSecond). A slot without a response is left out.
func cpuSlots(r *result.Record, from, to float64) []float64 {
	return seriesSlots(r, r.CPUSeriesUs, true, from, to)
}

// seriesSlots is cpuSlots for any cumulative once-a-second series of r:
// its growth over each slot, per valid response when perResponse, else
// per second.
func seriesSlots(r *result.Record, series []int64, perResponse bool, from, to float64) []float64 {
	var out []float64
	for k := 0; ; k++ {
		a, b := k*cpuSlotS, (k+1)*cpuSlotS
		if b >= len(series) || b > len(r.PerSecond) || float64(b) > to+1e-9 {
			return out
		}
		if float64(a) < from-1e-9 {
			continue
		}
		n := int64(cpuSlotS)
		if perResponse {
			n = 0
			for _, v := range r.PerSecond[a:b] {
				n += v
			}
		}
		if n > 0 {
			out = append(out, float64(series[b]-series[a])/float64(n))
		}
	}
}

// writeCPUDrift compares each soak window's CPU per request in its first
// minute with its last, by 10-s slot, as writeDrift does latencies: a
// proxy that slows down as it ages (a collection that grows, fragmenting
// memory) shows here even where memory stays flat, and explains a latency
// drift at a fixed rate.
func writeCPUDrift(m *md, rows []*result.Record) {
	var with []*result.Record
	for _, r := range rows {
		if len(r.CPUSeriesUs) > 0 && r.DurationS >= 2*driftSpanS {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return
	}
	m.p("**CPU per request drift, first minute → last minute.** The proxy's CPU time (all threads) read with each RSS reading, over the valid responses completed in each %d-s slot (the attack stream's requests included in the CPU, a constant share); the ratio is the last minute's geometric mean over the first's with Welch's 95%% t interval on the logs, as for latency.", cpuSlotS)
	m.nl()
	m.head("mode", "workload", "repeat", "slots first / last", "CPU µs/request first → last", "last/first [95% CI]", "verdict")
	for _, r := range with {
		a, b := cpuSlots(r, 0, driftSpanS), cpuSlots(r, r.DurationS-driftSpanS, r.DurationS)
		q := stats.WelchLogRatio(a, b, 0.95)
		m.row("`"+r.Mode+"`", "`"+r.Workload+"`", fmt.Sprint(r.Repeat), fmt.Sprintf("%d / %d", q.NA, q.NB),
			geoPair(a, b, 1, 1), driftCell(q), driftVerdict(q, "costlier", "cheaper"))
	}
	m.nl()
}

// writeWaitDrift sets beside the CPU drift what else could slow a proxy
// down at a fixed rate: its threads' run-queue wait per request (another
// process on its CPU) and the machine's steal time per second (the
// hypervisor running another guest), first minute against last. Their
// first-minute figures are near zero on a quiet machine, so they are shown
// as they are, without a ratio.
func writeWaitDrift(m *md, rows []*result.Record) {
	var with []*result.Record
	for _, r := range rows {
		if len(r.WaitSeriesUs) > 0 && len(r.StealSeriesUs) > 0 && r.DurationS >= 2*driftSpanS {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return
	}
	m.p("**What else took the CPU, first minute → last minute.** The proxy's threads' run-queue wait (schedstat: runnable, not on a CPU) per valid response, and the machine's steal time (/proc/stat, every CPU: its virtual CPUs ready but the hypervisor running something else) per second, read with each RSS reading; mean of the %d-s slots of each minute, and the largest slot of the last minute. A latency drift at flat CPU per request that comes with a rise here was caused outside the proxy.", cpuSlotS)
	m.nl()
	m.head("mode", "workload", "repeat", "run-queue wait µs/request first → last (largest slot)", "steal ms/s first → last (largest slot)")
	for _, r := range with {
		wa, wb := seriesSlots(r, r.WaitSeriesUs, true, 0, driftSpanS), seriesSlots(r, r.WaitSeriesUs, true, r.DurationS-driftSpanS, r.DurationS)
		sa, sb := seriesSlots(r, r.StealSeriesUs, false, 0, driftSpanS), seriesSlots(r, r.StealSeriesUs, false, r.DurationS-driftSpanS, r.DurationS)
		m.row("`"+r.Mode+"`", "`"+r.Workload+"`", fmt.Sprint(r.Repeat),
			fmt.Sprintf("%.1f → %.1f (%.1f)", stat.Mean(wa, nil), stat.Mean(wb, nil), maxOf(wb)),
			fmt.Sprintf("%.1f → %.1f (%.1f)", stat.Mean(sa, nil)/1e3, stat.Mean(sb, nil)/1e3, maxOf(sb)/1e3))
	}
	m.nl()
}

// allocatorKeys are the allocator statistics the soak report shows, in
// Envoy's admin /memory names, with their column titles.
var allocatorKeys = []struct{ key, title string }{
	{"allocated", "allocated MiB"},
	{"heap_size", "heap MiB"},
	{"pageheap_free", "page heap free MiB"},
	{"pageheap_unmapped", "unmapped MiB"},
	{"total_thread_cache", "thread caches MiB"},
}

// writeAllocator shows each soak window's allocator statistics at its
// start and end (result.Soak.AllocatorStart/End): live allocations that
// grow are a leak, a heap that grows while they stay flat is
// fragmentation or caches.
func writeAllocator(m *md, rows []*result.Record) {
	var with []*result.Record
	for _, r := range rows {
		if r.AllocatorStart != nil && r.AllocatorEnd != nil {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return
	}
	m.p("**The proxy's allocator, window start → end** (Envoy's admin /memory: tcmalloc's live allocations, the heap it holds, its free and unmapped pages, its thread caches).")
	m.nl()
	cols := []string{"mode", "workload", "repeat"}
	for _, k := range allocatorKeys {
		cols = append(cols, k.title)
	}
	m.head(cols...)
	for _, r := range with {
		row := []string{"`" + r.Mode + "`", "`" + r.Workload + "`", fmt.Sprint(r.Repeat)}
		for _, k := range allocatorKeys {
			row = append(row, fmt.Sprintf("%.1f → %.1f", float64(r.AllocatorStart[k.key])/(1<<20), float64(r.AllocatorEnd[k.key])/(1<<20)))
		}
		m.row(row...)
	}
	m.nl()
}
