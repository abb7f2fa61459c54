package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"wafbench/driver/merge"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

func itoa(i int) string { return strconv.Itoa(i) }

// f formats v with d decimals; NaN is noValue and an infinite value "∞".
func f(v float64, d int) string {
	switch {
	case math.IsNaN(v):
		return noValue
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "−∞"
	}
	s := strconv.FormatFloat(v, 'f', d, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// p formats a p-value.
func p(v float64) string {
	if v < 0.0001 {
		return "<0.0001"
	}
	return f(v, 4)
}

func pct(e stats.Estimate) string {
	h := e.HalfWidthPct()
	if math.IsInf(h, 1) {
		return "±∞"
	}
	return "±" + f(h, 1) + "%"
}

// noValue is the one way a report says there is no value: a figure not
// measured, an interval too few repeats cannot give, an empty field.
const noValue = "–"

// ci formats an interval "[lo, hi]" to d decimals; noValue when an end is
// missing (NaN) or unbounded.
func ci(lo, hi float64, d int) string {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return noValue
	}
	return "[" + f(lo, d) + ", " + f(hi, d) + "]"
}

// withCI is the one form of a value with its interval: "1.234 [1.100,
// 1.380]", "1.234 [–]" when the interval is missing.
func withCI(v, lo, hi float64, d int) string {
	iv := ci(lo, hi, d)
	if iv == noValue {
		iv = "[" + noValue + "]"
	}
	return f(v, d) + " " + iv
}

func orNone(s string) string {
	if s == "" {
		return noValue
	}
	return s
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return orNone(h)
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = itoa(x)
	}
	return strings.Join(s, ",")
}

func floats(v []float64, d int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = f(x, d)
	}
	return strings.Join(s, ", ")
}

type md struct {
	b strings.Builder
}

func (m *md) p(format string, a ...any) { fmt.Fprintf(&m.b, format, a...); m.b.WriteByte('\n') }
func (m *md) nl()                       { m.b.WriteByte('\n') }
func (m *md) row(cells ...string)       { m.b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }
func (m *md) head(cells ...string) {
	m.row(cells...)
	sep := make([]string, len(cells))
	for i := range sep {
		sep[i] = "---"
	}
	m.row(sep...)
}

func writeMethod(m *md, fig *figures) {
	meta, recs, s := fig.Meta, fig.Records, fig.Summary
	m.p("## Method")
	m.nl()
	m.p("- Modes: %s. Workloads: %s. Repeats: %d, mode order `%s` (seed %d), trial scope `%s`.",
		strings.Join(meta.Modes, ", "), strings.Join(meta.Workloads, ", "), meta.Repeats, orNone(meta.Order), meta.Seed, orNone(meta.TrialScope))
	if len(meta.ModeOrder) > 0 {
		var parts []string
		labels := orderLabels(meta)
		for i, o := range meta.ModeOrder {
			parts = append(parts, fmt.Sprintf("%d: %s", labels[i], strings.Join(o, " → ")))
		}
		m.p("- Mode order per repeat: %s.", strings.Join(parts, "; "))
	}
	loads, warm, dur := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range recs {
		loads[loadLabel(recs[i].Load, recs[i].ConnMode)] = true
		warm[f(recs[i].WarmupS, 1)] = true
		dur[f(recs[i].DurationS, 1)] = true
	}
	m.p("- Load model: %s; warmup %s s; measured window %s s per workload.", keys(loads), keys(warm), keys(dur))
	m.p("- Each group (mode × workload × conns) is summarized by its median over repeats with a %g%% order-statistic confidence interval (golang.org/x/perf benchmath, `AssumeNothing`; needs n ≥ 6 for a finite 95%% interval).", 100*stats.Confidence)
	m.p("- Paired ratios: within each repeat, mode ÷ passthrough (req/s, CPU µs/req, p99), modsecurity ÷ coraza (also baseline-adjusted CPU) and every engine build ÷ its engine's default build (req/s, CPU µs/req). Reported: per-repeat ratios, their median, a percentile bootstrap CI of the median (%d resamples, seed %d), the order-statistic CI when n allows, and the geometric-mean ratio with its paired-t interval.", stats.BootstrapResamples, stats.BootstrapSeed)
	var fams []string
	for _, fam := range stats.Families {
		if n := s.FamilySize(fam); n > 0 {
			fams = append(fams, fmt.Sprintf("%s (%d)", fam, n))
		}
	}
	m.p("- Test: repeats are paired blocks (every mode once per repeat, order rotated), so the test is paired: a two-sided one-sample t-test of the per-repeat log-ratios against 0, with its interval for the geometric-mean ratio. It assumes the log-ratios are independent across repeats and roughly normal; the report checks skewness, drift with the repeat number and the modes' order in the block, and shows the exact Wilcoxon signed-rank p (distribution-free) beside it. Holm correction within each question's family of comparisons (family-wise α = %g): %s. Methods and reasons: `driver/stats/METHODS.md`. The unpaired Mann–Whitney U p is kept in summary.json for comparison.", stats.Alpha, strings.Join(fams, ", "))
	m.p("- Verdict rule: **not established** when n < %d paired repeats or the Holm-adjusted paired-t p ≥ %g. Otherwise req/s ratios read `%s`/`%s` and CPU or latency ratios `%s`/`%s` (geometric-mean ratio above/below 1). The bootstrap and order-statistic intervals of the median ratio are shown beside it.",
		stats.MinSamples, stats.Alpha, stats.Faster, stats.Slower, stats.Higher, stats.Lower)
	m.p("- Precision target: 95%% CI half-width ≤ ±%g%% (of a group's median; of a ratio, the paired-t interval of its geometric mean). Steady state: mean completions/s of the first half of each window vs the second half (a trailing partial second dropped); |change| > %g%% is flagged.", stats.PrecisionTargetPct, 100*stats.DriftLimit)
	m.nl()
}

func keys(m map[string]bool) string {
	var k []string
	for x := range m {
		if x == "" {
			x = noValue
		}
		k = append(k, x)
	}
	sort.Strings(k)
	return strings.Join(k, ", ")
}

func cpus(v []int) string {
	if len(v) == 0 {
		return noValue
	}
	return ints(v)
}

func writeEnvironment(m *md, fig *figures) {
	meta, recs := fig.Meta, fig.Records
	m.p("## Environment")
	m.nl()
	m.head("item", "value")
	m.row("CPU", fmt.Sprintf("%s (%d CPUs)", orNone(meta.CPUModel), meta.NumCPU))
	for _, r := range processorRows(meta.Processor) {
		m.row(r[0], r[1])
	}
	for _, n := range cpuNotes(meta) {
		m.row("**warning: runs set side by side**", n)
	}
	if meta.ClkTck > 0 {
		m.row("CLK_TCK (measured)", strconv.FormatInt(meta.ClkTck, 10))
	}
	m.row("kernel", orNone(meta.Kernel))
	m.row("governor / SMT", orNone(meta.Governor)+" / "+orNone(meta.SMT))
	m.row("Envoy concurrency", itoa(meta.Concurrency))
	m.row("CPUs envoy / client / upstream", cpus(meta.EnvoyCPUs)+" / "+cpus(meta.ClientCPUs)+" / "+cpus(meta.UpstreamCPUs))
	m.row("upstream", upstreamName(meta.Upstream))
	checked, off := 0, 0
	for i := range recs {
		for _, a := range recs[i].Affinity {
			if a.Process != "envoy" {
				continue
			}
			checked++
			if !slices.Equal(a.CPUs, meta.EnvoyCPUs) {
				off++
			}
		}
	}
	if checked > 0 {
		m.row("observed Envoy thread affinity", fmt.Sprintf("%d of %d thread observations off the Envoy CPU set", off, checked))
	} else {
		m.row("observed Envoy thread affinity", "not recorded")
	}
	m.row("Go", orNone(meta.GoVersion))
	dirty := ""
	if meta.GitDirty {
		dirty = " (dirty)"
	}
	m.row("git", "`"+orNone(meta.GitSHA)+"`"+dirty)
	if len(meta.Command) > 0 {
		m.row("command", "`"+strings.Join(meta.Command, " ")+"`")
	}
	m.nl()
}

func writeVersions(m *md, fig *figures) {
	meta := fig.Meta
	m.p("## Versions and hashes")
	m.nl()
	m.head("component", "version", "sha256", "build / path")
	m.row("Envoy", orNone(meta.EnvoyVersion), "`"+orNone(meta.EnvoySHA256)+"`", "`"+orNone(meta.EnvoyPath)+"`")
	var names []string
	for k := range meta.Modules {
		names = append(names, k)
	}
	modes.Sort(names)
	for _, k := range names {
		mod := meta.Modules[k]
		m.row(k+" module ("+orNone(mod.Engine)+")", orNone(mod.EngineVersion), "`"+orNone(mod.SHA256)+"`", orNone(mod.Build))
	}
	if c := meta.CRS; c != nil {
		m.row("CRS", orNone(c.Version), "`"+orNone(c.SHA256)+"`", fmt.Sprintf("%d rule files", c.RuleFiles))
	}
	m.nl()
	if c := meta.CRS; c != nil && len(c.Adaptations) > 0 {
		m.p("CRS adaptations applied to both engines:")
		m.nl()
		for _, a := range c.Adaptations {
			m.p("- %s", a)
		}
		m.nl()
	}
}

func writeResults(m *md, fig *figures) {
	s := fig.Summary
	m.p("## Results")
	m.nl()
	m.p("Medians over repeats; ± is the 95%% CI half-width relative to the median (∞: too few repeats for an interval). Latency in µs, RSS at the end of the window in MiB.")
	m.nl()
	for _, wl := range s.Workloads {
		m.p("### %s", wl)
		m.nl()
		m.head("mode", "n", "req/s", "±", "CPU µs/req", "±", "p50", "p95", "p99", "p99.9", "max", "RSS MiB", "errors")
		for _, mode := range s.Modes {
			g := s.Group(stats.Key{Mode: mode, Workload: wl.Workload, Conns: wl.Conns})
			if g == nil {
				continue
			}
			m.row(mode, itoa(g.N), f(g.ReqPerS.Median, 0), pct(g.ReqPerS), cpuCell(g.CPUUsPerReq.Median), pct(g.CPUUsPerReq),
				f(g.P50Us.Median, 0), f(g.P95Us.Median, 0), f(g.P99Us.Median, 0), f(g.P999Us.Median, 0), f(g.MaxUs.Median, 0),
				f(g.RSSEndKiB.Median/1024, 1), strconv.FormatInt(g.Errors, 10))
		}
		m.nl()
	}
}

func writeRatios(m *md, fig *figures) {
	s := fig.Summary
	m.p("## Paired ratios")
	m.nl()
	if len(s.Comparisons) == 0 {
		m.p("No paired comparisons: a run needs passthrough and at least one WAF mode in the same repeats.")
		m.nl()
		return
	}
	if oneRepeat(s) {
		m.p("%s", oneRepeatNote)
		m.nl()
		return
	}
	for _, wl := range s.Workloads {
		m.p("### %s", wl)
		m.nl()
		m.head("ratio", "metric", "n", "per-repeat ratios", "median ratio", "bootstrap 95% CI (median)", "order-stat CI (median)", ratioHead, "p (paired t)", "Holm p", "signed-rank p", "verdict")
		for i := range s.Comparisons {
			c := &s.Comparisons[i]
			if c.WorkloadKey != wl {
				continue
			}
			m.row(c.Name(), c.Metric.Label(), itoa(c.N()), floats(c.Ratios, 3), f(c.MedianRatio, 3),
				ci(c.BootLo, c.BootHi, 3), ci(c.OrderLo, c.OrderHi, 3), ratioCell(c), p(c.P), p(c.PHolm), p(c.PSignedRank), verdictCell(c))
		}
		m.nl()
	}
}

func writeBaseline(m *md, fig *figures) {
	s := fig.Summary
	if len(s.Baseline) == 0 {
		return
	}
	m.p("## Baseline-adjusted CPU")
	m.nl()
	m.p("CPU µs per request a WAF mode adds over passthrough in the same repeat.")
	m.nl()
	m.head("workload", "mode", "n", "per repeat µs/req", "median", "bootstrap 95% CI", "order-stat CI")
	for _, b := range s.Baseline {
		m.row(b.WorkloadKey.String(), b.Mode, itoa(len(b.Values)), floats(b.Values, 1), f(b.Median.Median, 1),
			ci(b.BootLo, b.BootHi, 1), ci(b.Median.Lo, b.Median.Hi, 1))
	}
	m.nl()
}

// oneRepeatNote stands for the sections that need repeats (paired
// ratios, precision, verdicts, variance) in a run of one repeat.
const oneRepeatNote = "One repeat: every ratio is a single value, with no interval, precision or verdict (an interval needs 2 paired repeats, a verdict 4); the run's own sections (Results, Baseline-adjusted CPU and any suite's section) give its figures, summary.json every per-repeat ratio."

// oneRepeat reports whether no group of s has more than one repeat.
func oneRepeat(s *stats.Summary) bool {
	for _, g := range s.Groups {
		if g.N > 1 {
			return false
		}
	}
	return len(s.Groups) > 0
}

func writePrecision(m *md, fig *figures) {
	s := fig.Summary
	m.p("## Precision achieved")
	m.nl()
	if oneRepeat(s) {
		m.p("%s", oneRepeatNote)
		m.nl()
		return
	}
	pm := buildPrecision(s)
	met := func(e stats.Estimate) string {
		if e.PrecisionMet() {
			return pct(e) + " met"
		}
		return pct(e) + " not met"
	}
	m.p("Target ±%g%% (95%% CI half-width / median): met by %d of %d groups for req/s and %d of %d for CPU µs/req.",
		stats.PrecisionTargetPct, pm.nReq, len(s.Groups), pm.nCPU, len(s.Groups))
	m.nl()
	m.head("workload", "mode", "n", "req/s", "CPU µs/req")
	for _, g := range s.Groups {
		m.row(g.WorkloadKey().String(), g.Mode, itoa(g.N), met(g.ReqPerS), met(g.CPUUsPerReq))
	}
	m.nl()
	if len(pm.ratios) == 0 {
		return
	}
	m.p("Paired ratios: half-width of the 95%% interval relative to the ratio (the larger side). " +
		"The target is judged on the paired-t interval of the geometric-mean ratio, the interval run --precision stops on; the bootstrap interval of the median is optimistic with few repeats, and the order-statistic one (∞ below 6 repeats) conservative.")
	m.nl()
	m.head("workload", "ratio", "metric", "n", "geo-mean", "paired-t ±", "median", "bootstrap ±", "order-stat ±", "±3% target")
	for _, r := range pm.ratios {
		c := r.c
		m.row(c.WorkloadKey.String(), c.Num+"/"+c.Den, c.Metric.Label(), itoa(c.N()),
			f(c.GeoRatio, 3), halfWidth(c.HalfWidthPct()), f(c.MedianRatio, 3), halfWidth(r.boot), halfWidth(r.order), r.verdict)
	}
	m.nl()
}

// ratioHalfWidth is the larger distance from the median to an interval end,
// in percent of the median; +Inf for an unbounded or missing interval.
func ratioHalfWidth(median, lo, hi float64) float64 {
	if median == 0 || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || (lo == 0 && hi == 0) {
		return math.Inf(1)
	}
	return 100 * math.Max(hi-median, median-lo) / median
}

func halfWidth(v float64) string {
	if math.IsInf(v, 1) {
		return "±∞"
	}
	return "±" + f(v, 1) + "%"
}

func writeSteady(m *md, fig *figures) {
	s := fig.Summary
	m.p("## Steady state")
	m.nl()
	flagged, short := 0, 0
	for _, d := range s.Drift {
		if d.Flagged {
			flagged++
		}
		if d.TooShort {
			short++
		}
	}
	m.p("%d records checked: %d flagged (first vs second half differs by more than %g%%), %d too short to check.",
		len(s.Drift), flagged, 100*stats.DriftLimit, short)
	m.nl()
	if flagged == 0 {
		return
	}
	m.head("trial", "repeat", "mode", "workload", "first half req/s", "second half req/s", "change")
	for _, d := range s.Drift {
		if d.Flagged {
			m.row(itoa(d.Trial), itoa(d.Repeat), d.Mode, d.WorkloadKey().String(), f(d.FirstMean, 0), f(d.SecondMean, 0), fmt.Sprintf("%+.1f%%", 100*d.Change))
		}
	}
	m.nl()
}

// headlineSplit is the most modes the headline shows in one table, req/s
// and CPU side by side; with more, each metric gets a table of its own so
// that neither is wider than a page.
const headlineSplit = 4

// writeHeadline is one row per workload: median req/s and Envoy CPU µs per
// request of every mode, in one table or, with more than headlineSplit
// modes, one per metric.
func writeHeadline(m *md, fig *figures) {
	s := fig.Summary
	if len(s.Groups) == 0 {
		return
	}
	m.p("## Headline")
	m.nl()
	m.p("Medians over repeats: throughput (req/s) and Envoy CPU per request (µs, all Envoy threads, schedstat). Intervals, tests and verdicts are in the sections below.")
	m.nl()
	type metric struct {
		unit string
		cell func(*stats.Group) string
	}
	metrics := []metric{
		{"req/s", func(g *stats.Group) string { return f(g.ReqPerS.Median, 0) }},
		{"CPU µs/req", func(g *stats.Group) string { return cpuCell(g.CPUUsPerReq.Median) }},
	}
	tables := [][]metric{metrics}
	if len(s.Modes) > headlineSplit {
		tables = [][]metric{metrics[:1], metrics[1:]}
	}
	for _, t := range tables {
		cells := []string{"workload"}
		for _, mt := range t {
			for _, mode := range s.Modes {
				cells = append(cells, mode+" "+mt.unit)
			}
		}
		m.head(cells...)
		for _, w := range s.Workloads {
			row := []string{w.String()}
			for _, mt := range t {
				for _, mode := range s.Modes {
					if g := s.Group(stats.Key{Mode: mode, Workload: w.Workload, Conns: w.Conns}); g != nil {
						row = append(row, mt.cell(g))
					} else {
						row = append(row, noValue)
					}
				}
			}
			m.row(row...)
		}
		m.nl()
	}
	writeHeadlineProtection(m, fig)
}

func writeMemory(m *md, fig *figures) {
	s := fig.Summary
	m.p("## Memory")
	m.nl()
	var flagged []stats.Growth
	for _, g := range s.Growth {
		if g.Flagged {
			flagged = append(flagged, g)
		}
	}
	m.p("Envoy RSS at the end of each measured window vs right after its warmup: %d of %d windows grew by ≥ %d KiB and ≥ %d bytes per request (flagged as a possible per-request leak).",
		len(flagged), len(s.Growth), stats.GrowthMinKiB, stats.GrowthMinBytesPerReq)
	m.nl()
	if len(flagged) == 0 {
		return
	}
	m.head("trial", "repeat", "mode", "workload", "requests", "RSS after warmup MiB", "RSS at end MiB", "bytes/request")
	for _, g := range flagged {
		m.row(itoa(g.Trial), itoa(g.Repeat), g.Mode, g.WorkloadKey().String(), itoa(int(g.Requests)),
			f(float64(g.BeforeKiB)/1024, 1), f(float64(g.AfterKiB)/1024, 1), f(g.BytesPerRequest, 0))
	}
	m.nl()
}

func writeExcluded(m *md, fig *figures) {
	meta, s := fig.Meta, fig.Summary
	m.p("## Interrupted and failed trials")
	m.nl()
	if meta.Status != "" && meta.Status != "complete" {
		m.p("The run's status is **%s**.", meta.Status)
		m.nl()
	}
	if len(s.Excluded) == 0 {
		m.p("None.")
		m.nl()
		return
	}
	m.p("Excluded from all statistics above:")
	m.nl()
	m.head("trial", "repeat", "mode", "workload", "reason")
	for _, e := range s.Excluded {
		m.row(itoa(e.Trial), itoa(e.Repeat), e.Mode, e.WorkloadKey().String(), strings.ReplaceAll(e.Reason, "|", "\\|"))
	}
	m.nl()
}

// writeBehind lists the open-loop windows that fell behind their requested
// rate (result.FellBehind): their latencies include the queueing of sends
// that could not go out on time, and their throughput is not the rate asked.
func writeBehind(m *md, fig *figures) {
	q := fig.Quality
	if len(q.Behind) == 0 {
		return
	}
	m.p("## Open-loop rate")
	m.nl()
	// Records written before the due count existed (Due 0) were flagged by
	// the rule of their day; say which rule flagged what is listed.
	old := false
	for _, r := range q.Behind {
		old = old || r.Due == 0
	}
	if old {
		m.p("These windows fell behind their requested rate by the rule in force when they were recorded (achieved below 95%% of it, or more than 1%% of sends over 1 ms late; runs recorded since judge by the arrivals their schedule made due and by the client's own lag); they stay in the statistics above, but their figures are not at the rate asked:")
	} else {
		m.p("These windows fell behind their requested rate (fewer responses than %.0f%% of the arrivals their schedule made due in the window, less one, or more than %.0f%% of sends, plus one, held back by the client itself past the stall threshold — half the mean inter-arrival time, at least 1 ms; windows recorded before it judged by half the inter-arrival time alone, older ones by 1 ms — beyond the later of their intended time and their connection falling free; sends that waited for a busy connection are late but not behind); they stay in the statistics above, but their figures are not at the rate asked:",
			100*result.BehindRatio, 100*result.BehindLateShare)
	}
	m.nl()
	m.head("trial", "repeat", "mode", "workload", "requested req/s", "achieved req/s", "late sends")
	for _, r := range q.Behind {
		m.row(itoa(r.Trial), itoa(r.Repeat), r.Mode, stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}.String(), f(r.RateRequestedPerS, 0), f(r.RateAchievedPerS, 0), strconv.FormatInt(r.Late, 10))
	}
	m.nl()
}

func writeLimitations(m *md, fig *figures) {
	meta, recs, s, q := fig.Meta, fig.Records, fig.Summary, fig.Quality
	m.p("## Limitations")
	m.nl()
	for _, l := range append(q.lines(), provenanceLimitations(meta, recs)...) {
		m.p("- %s.", strings.ToUpper(l[:1])+l[1:])
	}
	nc := len(s.Comparisons)
	if nc > 0 {
		minN := math.MaxInt
		established := 0
		for _, c := range s.Comparisons {
			minN = min(minN, c.N())
			if c.Verdict != stats.NotEstablished {
				established++
			}
		}
		m.p("- %d of %d comparisons reached a verdict (n ≥ %d paired repeats each). Holm within a family of m comparisons multiplies the smallest p by m: an effect of a few percent needs more repeats than a large one (the Verdicts section estimates how many), and the per-repeat ratios in the tables show how much each comparison varies between fresh processes.",
			established, nc, minN)
	}
	m.p("- The paired t-test assumes the per-repeat log-ratios are independent and roughly normal; with few repeats that cannot be checked well (the checks run from n = %d and flag, they do not decide). The exact signed-rank p beside it assumes only symmetry; it cannot go below %.3g at n = 6.", stats.CheckMinN, stats.SignedRankMinP(6))
	m.p("- A percentile bootstrap of a median from few repeats is optimistic (too narrow); it is shown beside the order-statistic interval, which is exact but needs n ≥ 6.")
	m.p("- Timing on shared VMs varies about ±30%% run to run; only differences established across interleaved repeats should be trusted, and only for this machine.")
	if meta.GitDirty {
		m.p("- The tree was dirty when the run started (git `%s`).", orNone(meta.GitSHA))
	}
	for _, n := range meta.Notes {
		if strings.HasPrefix(n, merge.EnvDifferencePrefix) {
			m.p("- Pooled despite an environment difference: %s", strings.TrimPrefix(n, merge.EnvDifferencePrefix))
		}
	}
	var other []string
	for _, n := range meta.Notes {
		if !strings.HasPrefix(n, merge.EnvDifferencePrefix) {
			other = append(other, n)
		}
	}
	if len(other) > 0 {
		m.p("- Run notes:")
		for _, n := range other {
			m.p("  - %s", n)
		}
	}
	m.nl()
}
