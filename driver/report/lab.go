package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// labSuite is the suite whose report carries the lab section (profiles/lab.yaml).
const labSuite = "lab"

// labReference names the external study the lab suite reproduces. Its
// figures below are that study's published reference values, quoted, not
// data of this repository: no file of it is committed here.
const labReference = "the WAFWiki Docker lab, a comparison of NGINX + ModSecurity 3.0.16 and Caddy 2.11.2 + Coraza 3.7.0 over CRS 4.25"

// labFigure is what the earlier Docker lab comparison (labReference, an
// external published reference) published for one of its hosts: median and
// p95 of curl's time_total over 40 sequential requests per path, and one
// memory snapshot of the host's container.
type labFigure struct {
	mode   string
	host   string
	p50Ms  float64
	p95Ms  float64
	memMiB float64 // 0: not published
}

var labFigures = []labFigure{
	{modes.RefDirect, "go-httpbin 2.21 direct", 0.983, 2.172, 0},
	{modes.RefNginxModSecurity, "nginx + ModSecurity 3.0.16", 3.956, 5.518, 68.85},
	{modes.RefCaddyCoraza, "Caddy 2.11.2 + Coraza 3.7.0", 3.571, 4.904, 57.2},
}

// Connection modes as the section names them, and the per-trial pools of
// every path a host served in each.
const (
	keepAlive  = "keep-alive"
	perRequest = "new connection per request"
	poolPrefix = "all paths, "
)

// pool is the key of the pool of every path in one connection mode.
func pool(connLabel string) string { return poolPrefix + connLabel }

// isPool reports whether path is a pool key.
func isPool(path string) bool { return strings.HasPrefix(path, poolPrefix) }

// connLabel is how the section names r's connection mode.
func connLabel(r *result.Record) string {
	if r.ConnMode == string(load.ConnPerRequest) {
		return perRequest
	}
	return keepAlive
}

// labTrial is one fresh process of one host: its valid records by workload
// key, and the pools of all of them per connection mode.
type labTrial struct {
	repeat int
	recs   map[string]*result.Record          // by workload key (stats.WorkloadKey.String())
	order  []*result.Record                   // as measured (raw.jsonl order)
	pools  map[string]*hdrhistogram.Histogram // by pool key; absent without histograms
	inPool map[string][]*result.Record        // the records of each pool
}

// labComparison is one paired question of the lab section: the per-repeat
// ratio num/den of one metric.
type labComparison struct {
	question, num, den, path, metric string
	ratios, diffs                    []float64 // num/den and num−den, per paired repeat
	geo, lo, hi, p, bootLo, bootHi   float64
	pHolm                            float64
}

// labRun is the lab suite's pooling of its trials: per host, its
// fresh-process trials; the hosts (ref-direct first, the lab's control),
// paths and connection-mode pools present; and the pool closest to the
// lab's method.
type labRun struct {
	trials       map[string][]*labTrial
	hosts, paths []string
	pools        []string // the pools present, keep-alive first
	labPool      string   // "" when no pool
	upstream     string
}

// analyseLab pools the lab suite's trials; nil for any other suite.
func analyseLab(meta *result.Meta, recs []result.Record, s *stats.Summary) *labRun {
	if meta.Suite != labSuite {
		return nil
	}
	l := &labRun{trials: labTrials(recs), upstream: meta.Upstream}
	for h := range l.trials {
		l.hosts = append(l.hosts, h)
	}
	modes.Sort(l.hosts)
	// ref-direct first: it is the lab's control.
	if i := slices.Index(l.hosts, modes.RefDirect); i > 0 {
		l.hosts = append([]string{modes.RefDirect}, slices.Delete(l.hosts, i, i+1)...)
	}
	for _, w := range s.Workloads {
		l.paths = append(l.paths, w.String())
	}
	if l.upstream == "" {
		l.upstream = "wafbench" // the harness's own (runs from before the field)
	}
	for _, c := range []string{keepAlive, perRequest} {
		for _, ts := range l.trials {
			if slices.ContainsFunc(ts, func(t *labTrial) bool { return t.pools[pool(c)] != nil }) {
				l.pools = append(l.pools, pool(c))
				break
			}
		}
	}
	// The pool closest to the lab's method: curl opened a new connection
	// per request.
	if len(l.pools) > 0 {
		l.labPool = l.pools[len(l.pools)-1]
	}
	return l
}

// writeLab is the report's section on the older Docker lab (labReference),
// written only for the lab suite: per host and path, the median and p95
// latency over fresh-process trials with bootstrap intervals; the lab's
// published figures beside ours with the caveats; RSS per host after
// warmup, at the end and at its peak; and the lab's open questions answered
// by paired ratios within repeats.
func writeLab(m *md, fig *figures) {
	l := fig.Lab
	if l == nil {
		return
	}
	trials, hosts, paths, pools, labPool, upstream := l.trials, l.hosts, l.paths, l.pools, l.labPool, l.upstream

	m.p("## The Docker lab, reproduced")
	m.nl()
	m.p("The older lab — "+labReference+", an external study whose figures are quoted here as its published reference values; none of its files are in this repository — sent 40 sequential curl requests per path (safe GET, blocked SQL injection, blocked XSS) to go-httpbin directly, to nginx + ModSecurity and to Caddy + Coraza, all over CRS 4.25, and published the median and p95 of curl's time_total and one memory snapshot per container. This run sends the same kinds of requests one at a time (closed loop, upstream: **%s**), on one persistent connection and, where a path's name ends in `_newconn`, with a new connection per request as curl did, for a fixed window in each of several fresh-process trials per host, mode order rotated, and adds Envoy with and without each engine. Latency is the client's, from writing a request (or, with a new connection per request, from starting to connect) to its last response byte. A trial's median and p95 are over its window; the table gives the median of those over trials with a seeded bootstrap 95%% interval (trials resampled; %d resamples).",
		upstream, stats.BootstrapResamples)
	m.nl()
	m.head("host", "path", "trials", "median ms", "95% CI", "p95 ms", "95% CI", "host CPU µs/req")
	for _, h := range hosts {
		for _, path := range append(slices.Clone(paths), pools...) {
			p50, p95, cpu := labValues(trials[h], path)
			if len(p50) == 0 {
				continue
			}
			e50, e95 := labEstimate(p50), labEstimate(p95)
			cpuCell := noValue
			if len(cpu) > 0 {
				cpuCell = f(stats.MedianOf(cpu), 0)
			}
			name := "`" + h + "`"
			if isPool(path) {
				name, path = "", "*"+path+"*"
			}
			m.row(name, path, itoa(len(p50)), f(e50.mid, 3), ci(e50.lo, e50.hi, 3), f(e95.mid, 3), ci(e95.lo, e95.hi, 3), cpuCell)
		}
	}
	m.nl()
	m.p("*%s…* pools every request of a trial in that connection mode (its paths' HDR histograms merged) before taking the trial's median and p95. Host CPU is the proxy process's CPU (schedstat, all threads) per request, median over trials; ref-direct has no proxy to sample.", poolPrefix)
	m.nl()
	if labPool == "" {
		return
	}
	writeLabBeside(m, trials, labPool)
	writeLabMemory(m, trials, hosts)
	writeLabQuestions(m, trials, hosts, paths, pools, labPool)

	m.p("Caveats. The lab ran on macOS under Docker Desktop (a Linux VM with Docker's port forwarding in every request's path), on different hardware, with ModSecurity 3.0.16 and Coraza 3.7.0; this run is on the Linux VM described under Environment, with the engine versions listed under Versions (Debian's libmodsecurity 3.0.9 and Coraza 3.8.1 unless a build says otherwise), each proxy pinned to one CPU and the client and upstream on the other. curl's time_total includes a new TCP connection per request, as the `_newconn` paths do here; curl also starts a process per request, which time_total does not count. 40 requests give a p95 from two observations; our windows hold hundreds to thousands of requests, and trials are repeated. The lab's memory figure is one container snapshot (every process of the container); ours is the host process's RSS from procfs (nginx runs as one process here, master_process off). So compare ratios within each study, not milliseconds or MiB across them.")
	m.nl()
}

// labTrials groups valid records by host and trial.
func labTrials(recs []result.Record) map[string][]*labTrial {
	out := map[string][]*labTrial{}
	byTrial := map[[2]any]*labTrial{}
	for i := range recs {
		r := &recs[i]
		if !stats.Valid(r) {
			continue
		}
		k := [2]any{r.Mode, r.Trial}
		t := byTrial[k]
		if t == nil {
			t = &labTrial{repeat: r.Repeat, recs: map[string]*result.Record{}}
			byTrial[k] = t
			out[r.Mode] = append(out[r.Mode], t)
		}
		t.recs[stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}.String()] = r
		t.order = append(t.order, r)
	}
	for _, ts := range out {
		for _, t := range ts {
			t.pools, t.inPool = map[string]*hdrhistogram.Histogram{}, map[string][]*result.Record{}
			hs := map[string][]*hdrhistogram.Histogram{}
			for _, k := range slices.Sorted(maps.Keys(t.recs)) {
				r := t.recs[k]
				key := pool(connLabel(r))
				t.inPool[key] = append(t.inPool[key], r)
				if h, err := load.DecodeHist(r.HistBase64); err == nil && r.HistBase64 != "" {
					hs[key] = append(hs[key], h)
				}
			}
			for key, rs := range t.inPool {
				if len(hs[key]) == len(rs) {
					t.pools[key] = load.Merge(hs[key]...)
				}
			}
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i].repeat < ts[j].repeat })
	}
	return out
}

// labValues are the per-trial median and p95 (ms) and CPU µs/request of one
// path of a host (a pool: the pooled histogram; its CPU is the mean over the
// pool's paths, weighted by requests).
func labValues(ts []*labTrial, path string) (p50, p95, cpu []float64) {
	for _, t := range ts {
		a, b, c, ok := t.value(path)
		if !ok {
			continue
		}
		p50, p95 = append(p50, a), append(p95, b)
		if c > 0 {
			cpu = append(cpu, c)
		}
	}
	return p50, p95, cpu
}

// value is the trial's median and p95 latency (ms) and CPU µs/request on
// path.
func (t *labTrial) value(path string) (p50, p95, cpu float64, ok bool) {
	if !isPool(path) {
		r, found := t.recs[path]
		if !found || r.Latency.P50Us == 0 {
			return 0, 0, 0, false
		}
		return r.Latency.P50Us / 1e3, r.Latency.P95Us / 1e3, r.CPU.UsPerRequest, true
	}
	h := t.pools[path]
	if h == nil || h.TotalCount() == 0 {
		return 0, 0, 0, false
	}
	var ns, n float64
	for _, r := range t.inPool[path] {
		ns += r.CPU.UsPerRequest * float64(r.Requests)
		n += float64(r.Requests)
	}
	if n > 0 {
		cpu = ns / n
	}
	return float64(h.ValueAtQuantile(50)) / 1e3, float64(h.ValueAtQuantile(95)) / 1e3, cpu, true
}

// metric is the trial's value of one metric (median latency, p95 latency,
// CPU µs/req on path; peak RSS of the whole trial) for paired comparisons.
func (t *labTrial) metric(metric, path string) (float64, bool) {
	switch metric {
	case "median latency", "p95 latency", "CPU µs/req":
		p50, p95, cpu, ok := t.value(path)
		v := map[string]float64{"median latency": p50, "p95 latency": p95, "CPU µs/req": cpu}[metric]
		return v, ok && v > 0
	case "peak RSS":
		_, _, peak := t.memory()
		return float64(peak), peak > 0
	}
	return 0, false
}

// memory is the trial's RSS after the first warmup, at the end of the last
// window, and its peak (VmHWM), in KiB; zeros for ref-direct.
func (t *labTrial) memory() (afterWarmup, end, peak int64) {
	for _, r := range t.order {
		if r.Memory.RSSAfterWarmupKiB > 0 && afterWarmup == 0 {
			afterWarmup = r.Memory.RSSAfterWarmupKiB
		}
		if r.Memory.RSSEndKiB > 0 {
			end = r.Memory.RSSEndKiB
		}
		peak = max(peak, r.Memory.PeakKiB)
	}
	return afterWarmup, end, peak
}

// labEst is a median over trials with its bootstrap interval.
type labEst struct{ mid, lo, hi float64 }

// labEstimate is the median of v with its seeded percentile bootstrap 95%
// interval (unbounded for fewer than two values).
func labEstimate(v []float64) labEst {
	lo, hi := stats.BootstrapMedianCI(v, stats.BootstrapSeed, stats.BootstrapResamples, stats.Confidence)
	if len(v) < 2 {
		lo, hi = math.Inf(-1), math.Inf(1)
	}
	return labEst{stats.MedianOf(v), lo, hi}
}

// writeLabBeside puts the lab's published figures beside this run's, as
// absolute values, as what each WAF host adds to the direct path and as
// ratios to it, each within its own study.
func writeLabBeside(m *md, trials map[string][]*labTrial, labPool string) {
	m.p("### Beside the lab's published figures")
	m.nl()
	m.p("The \"lab\" columns are the published figures of "+labReference+", an external reference quoted as published (not measured here, no data of it in this repository). The lab published one median and p95 per host. Ours are over *%s* (pooled per trial, median over trials, 95%% bootstrap interval). Milliseconds from two machines are not comparable; what each WAF host adds to the direct path within the same study is closer to it (the lab's Docker port forwarding is in every one of its figures, and subtracting the direct path removes it), and the ratio to direct is given too. Ours: median of per-repeat differences with a bootstrap 95%% interval, and geometric mean of per-repeat ratios with its paired-t 95%% interval.", labPool)
	m.nl()
	m.head("host", "lab median ms", "lab p95 ms", "our median ms", "our p95 ms", "lab: added to direct, ms", "ours: added to direct, ms", "lab median / direct", "our median / direct", "95% CI")
	labDirect := labFigures[0].p50Ms
	for _, lf := range labFigures {
		p50, p95, _ := labValues(trials[lf.mode], labPool)
		ours50, ours95 := "not run", "not run"
		if len(p50) > 0 {
			e50, e95 := labEstimate(p50), labEstimate(p95)
			ours50 = withCI(e50.mid, e50.lo, e50.hi, 3)
			ours95 = withCI(e95.mid, e95.lo, e95.hi, 3)
		}
		labRatio, ourRatio, ourCI, labAdded, ourAdded := "1", "1", "", "0", "0"
		if lf.mode != modes.RefDirect {
			labRatio, labAdded = f(lf.p50Ms/labDirect, 2), f(lf.p50Ms-labDirect, 3)
			c := labCompare(trials, "", lf.mode, modes.RefDirect, labPool, "median latency")
			ourRatio, ourCI, ourAdded = noValue, noValue, "–"
			if len(c.ratios) > 0 {
				ourRatio, ourCI = f(c.geo, 2), ci(c.lo, c.hi, 2)
				e := labEstimate(c.diffs)
				ourAdded = withCI(e.mid, e.lo, e.hi, 3)
			}
		}
		m.row("`"+lf.mode+"` ("+lf.host+")", f(lf.p50Ms, 3), f(lf.p95Ms, 3), ours50, ours95, labAdded, ourAdded, labRatio, ourRatio, ourCI)
	}
	m.nl()
}

// writeLabMemory is RSS per host: after warmup, at the end, and the peak,
// median over trials with the range.
func writeLabMemory(m *md, trials map[string][]*labTrial, hosts []string) {
	m.p("### Memory per host")
	m.nl()
	m.p("Resident memory of the host process (Envoy, nginx, Caddy) from /proc: after the first path's warmup, at the end of the last window, and the peak (VmHWM) — median over trials, range in brackets, MiB. The lab's figure is one `docker stats` snapshot of the container.")
	m.nl()
	m.head("host", "trials", "after warmup", "end", "peak", "lab snapshot")
	mib := func(v []float64) string {
		if len(v) == 0 {
			return noValue
		}
		return f(stats.MedianOf(v)/1024, 1) + " [" + f(slices.Min(v)/1024, 1) + ", " + f(slices.Max(v)/1024, 1) + "]"
	}
	for _, h := range hosts {
		var aw, end, peak []float64
		for _, t := range trials[h] {
			a, e, p := t.memory()
			if a > 0 {
				aw = append(aw, float64(a))
			}
			if e > 0 {
				end = append(end, float64(e))
			}
			if p > 0 {
				peak = append(peak, float64(p))
			}
		}
		if len(peak) == 0 {
			continue
		}
		lab := noValue
		for _, lf := range labFigures {
			if lf.mode == h && lf.memMiB > 0 {
				lab = f(lf.memMiB, 2)
			}
		}
		m.row("`"+h+"`", itoa(len(trials[h])), mib(aw), mib(end), mib(peak), lab)
	}
	m.nl()
}

// labCompare pairs trials of num and den by repeat on one metric and path.
func labCompare(trials map[string][]*labTrial, question, num, den, path, metric string) labComparison {
	c := labComparison{question: question, num: num, den: den, path: path, metric: metric}
	byRepeat := map[int]*labTrial{}
	for _, t := range trials[den] {
		byRepeat[t.repeat] = t
	}
	for _, t := range trials[num] {
		d, ok := byRepeat[t.repeat]
		if !ok {
			continue
		}
		a, okA := t.metric(metric, path)
		b, okB := d.metric(metric, path)
		if okA && okB {
			c.ratios = append(c.ratios, a/b)
			c.diffs = append(c.diffs, a-b)
		}
	}
	c.geo, c.lo, c.hi, c.p = stats.PairedLogT(c.ratios, stats.Confidence)
	c.bootLo, c.bootHi = stats.BootstrapMedianCI(c.ratios, stats.BootstrapSeed, stats.BootstrapResamples, stats.Confidence)
	return c
}

// labCompareWithin pairs, within each trial of one host, the median latency
// of pool num against pool den (the same process, both connection modes).
func labCompareWithin(ts []*labTrial, question, host, num, den string) labComparison {
	c := labComparison{question: question, num: host, den: host, metric: "median latency",
		path: strings.TrimPrefix(num, poolPrefix) + " / " + strings.TrimPrefix(den, poolPrefix)}
	for _, t := range ts {
		a, okA := t.metric("median latency", num)
		b, okB := t.metric("median latency", den)
		if okA && okB {
			c.ratios = append(c.ratios, a/b)
			c.diffs = append(c.diffs, a-b)
		}
	}
	c.geo, c.lo, c.hi, c.p = stats.PairedLogT(c.ratios, stats.Confidence)
	c.bootLo, c.bootHi = stats.BootstrapMedianCI(c.ratios, stats.BootstrapSeed, stats.BootstrapResamples, stats.Confidence)
	return c
}

// writeLabQuestions answers the lab's open questions with paired ratios
// within repeats, Holm-corrected over the section.
func writeLabQuestions(m *md, trials map[string][]*labTrial, hosts, paths, pools []string, labPool string) {
	cs := labQuestions(trials, hosts, paths, pools, labPool)
	if len(cs) == 0 {
		return
	}
	m.p("### The lab's open questions")
	m.nl()
	m.p("The lab left these unsettled (40 requests, one run, no intervals). Each row is the ratio num/den of one metric, paired within repeats (both hosts' trials of the same repeat): geometric mean with its paired-t 95%% interval, the bootstrap interval of the median ratio, and the paired-t p Holm-adjusted over the %d rows of this table. **Established** needs at least %d pairs, both intervals excluding 1 and Holm p < %g; otherwise the row says what is missing.", len(cs), stats.MinSamples, stats.Alpha)
	m.nl()
	m.head("question", "num / den", "metric", "path", "n", "ratio", "95% CI (paired t)", "95% CI (bootstrap, median)", "Holm p", "verdict")
	for _, c := range cs {
		path := c.path
		switch {
		case c.metric == "peak RSS":
			path = "whole trial"
		case isPool(path):
			path = "*" + path + "*"
		}
		pair := "`" + c.num + "` / `" + c.den + "`"
		if c.num == c.den {
			pair = "`" + c.num + "`"
		}
		m.row(c.question, pair, c.metric, path, itoa(len(c.ratios)), f(c.geo, 3),
			ci(c.lo, c.hi, 3), ci(c.bootLo, c.bootHi, 3), p(c.pHolm), labVerdict(c))
	}
	m.nl()
}

// labVerdict applies the section's rule.
func labVerdict(c labComparison) string {
	excludes := func(lo, hi float64) bool { return !math.IsNaN(lo) && !math.IsNaN(hi) && (lo > 1 || hi < 1) }
	switch {
	case len(c.ratios) < stats.MinSamples:
		return fmt.Sprintf("not established (n=%d < %d)", len(c.ratios), stats.MinSamples)
	case !excludes(c.lo, c.hi):
		return "not established (paired-t interval includes 1)"
	case !excludes(c.bootLo, c.bootHi):
		return "not established (bootstrap interval includes 1)"
	case c.pHolm >= stats.Alpha:
		return "not established (Holm p ≥ " + f(stats.Alpha, 2) + ")"
	}
	subject := "`" + c.num + "`"
	if c.num == c.den { // two connection modes of one host
		subject, _, _ = strings.Cut(c.path, " / ")
	}
	word := "higher"
	if c.geo < 1 {
		word = "lower"
	}
	return "**established**: " + subject + " " + word + " (×" + f(c.geo, 2) + ")"
}
