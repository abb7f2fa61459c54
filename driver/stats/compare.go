package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// metric names a per-record quantity that comparisons are made on. The
// string is used as-is in summary.json.
type metric string

// Metrics compared between modes.
const (
	MetricReqPerS metric = "req_per_s"
	MetricCPU     metric = "cpu_us_per_req"
	metricP99     metric = "p99_us"
	// MetricCPUAdj is baseline-adjusted CPU: mode CPU/req − passthrough
	// CPU/req in the same repeat. Only compared between two WAF modes.
	metricCPUAdj metric = "cpu_adj_us_per_req"
)

// Verdict words.
const (
	Faster         = "faster"          // req/s ratio above 1
	Slower         = "slower"          // req/s ratio below 1
	Lower          = "lower"           // CPU or latency ratio below 1 (better)
	Higher         = "higher"          // CPU or latency ratio above 1 (worse)
	NotEstablished = "not established" // see Comparison.Reason
)

// higherIsBetter reports the direction of improvement for m.
func (m metric) higherIsBetter() bool { return m == MetricReqPerS }

// Label is a short human name with unit.
func (m metric) Label() string {
	switch m {
	case MetricReqPerS:
		return "req/s"
	case MetricCPU:
		return "CPU µs/req"
	case metricP99:
		return "p99 µs"
	case metricCPUAdj:
		return "CPU µs/req over passthrough"
	}
	return string(m)
}

// words returns the verdicts for a ratio above and below 1.
func (m metric) words() (above, below string) {
	if m == MetricReqPerS {
		return Faster, Slower
	}
	return Higher, Lower
}

func metricValue(m metric, r *result.Record) float64 {
	switch m {
	case MetricReqPerS:
		return r.ReqPerS
	case MetricCPU, metricCPUAdj:
		return r.TotalCPUUsPerRequest() // Envoy's, and an external mode's server's too
	case metricP99:
		return r.Latency.P99Us
	}
	panic("stats: unknown metric " + string(m))
}

// Comparison is the paired comparison Num/Den of one metric on one
// workload. Pairs are formed within a repeat; only repeats where both
// modes (and, for MetricCPUAdj, passthrough) have a valid record count.
type Comparison struct {
	WorkloadKey
	Num, Den string // modes; the ratio is Num/Den
	Metric   metric

	Family Family // the question it answers; Holm runs within it

	Repeats   []int     // paired repeat numbers, ascending
	NumValues []float64 // per repeat, aligned with Repeats
	DenValues []float64
	Ratios    []float64 // NumValues[i]/DenValues[i]
	// NumPositions, DenPositions: each side's position in its repeat's
	// mode order (result.Record.Position), aligned with Repeats.
	NumPositions []int
	DenPositions []int

	MedianRatio float64
	// BootLo, BootHi: seeded percentile bootstrap CI of the median ratio.
	BootLo, BootHi float64
	// OrderLo, OrderHi: order-statistic CI of the median ratio
	// (benchmath); ±Inf when n is too small for one.
	OrderLo, OrderHi float64

	// GeoRatio is the geometric mean of Ratios; TLo, THi its paired-t 95%
	// interval (the t interval of the mean log-ratio, exponentiated); NaN
	// when n < 2 or the log-ratios do not vary.
	GeoRatio, TLo, THi float64
	// P is the two-sided paired t-test of the per-repeat log-ratios against
	// 0 (the test the verdict uses: repeats are paired blocks);
	// PMannWhitney the two-sided Mann–Whitney U of NumValues vs DenValues,
	// which ignores the pairing (kept for comparison).
	P            float64
	PMannWhitney float64
	PHolm        float64 // Holm-adjusted P within Family
	// PSignedRank is the two-sided Wilcoxon signed-rank p of the log-ratios
	// (exact for n ≤ 100, SignedRankP) and PSignedRankHolm its Holm
	// adjustment within Family: the distribution-free check beside the t.
	PSignedRank     float64
	PSignedRankHolm float64
	// Assumptions are the checks of the t interval's assumptions.
	Assumptions assumptions
	Verdict     string
	Reason      string // why NotEstablished; empty otherwise
}

// Family names the question a comparison answers. The Holm correction runs
// within a family: its verdicts are the claims a reader combines to answer
// that one question (driver/stats/METHODS.md).
type Family string

// Comparison families.
const (
	familyOverhead Family = "WAF vs passthrough"       // what each WAF mode costs over the router alone
	FamilyEngines  Family = "engine vs engine"         // modsecurity ÷ coraza: which engine costs less
	FamilyBuilds   Family = "build vs default build"   // each engine build ÷ its engine's default build
	familyHosts    Family = "same engine, other host"  // ref-nginx-modsecurity[@build], ref-caddy-coraza, coraza-wasm, the ext_proc and ext_authz modes ÷ the engine's Envoy module of the same build
	familyEnvoy    Family = "Envoy release vs release" // mode~1.39.3 ÷ the same mode on the run's Envoy, else on the newest release
	// FamilyConfigs: each configuration of a mode ÷ the same mode under the
	// run's first configuration (run --configs; coraza+pl4 ÷ coraza+pl1).
	FamilyConfigs Family = "configuration vs first configuration"
)

// Families lists the families in report order.
var Families = []Family{FamilyEngines, familyOverhead, FamilyBuilds, FamilyConfigs, familyHosts, familyEnvoy}

// N is the number of paired repeats.
func (c *Comparison) N() int { return len(c.Ratios) }

// Name is e.g. "modsecurity/passthrough".
func (c *Comparison) Name() string { return c.Num + "/" + c.Den }

// WAFModes returns the modes compared against passthrough: every Envoy mode
// that runs a WAF engine (any build), in the order given.
func WAFModes(ms []string) []string {
	var out []string
	for _, m := range ms {
		if modes.IsEnvoyWAF(m) {
			out = append(out, m)
		}
	}
	return out
}

type pairSpec struct {
	num, den string
	family   Family
	metrics  []metric
	base     string // the passthrough of metricCPUAdj: Baseline on num's Envoy release
}

// pairSpecs pairs the modes of each Envoy release among themselves
// (modes~1.39.3 like the modes of a run on one Envoy), then each mode on
// a named release with the same mode on the run's own Envoy or, failing
// that, on the newest release of the run.
func pairSpecs(ms []string) []pairSpec {
	var releases []string
	byRelease := map[string][]string{}
	for _, m := range ms {
		v := modes.EnvoyOf(m)
		if _, ok := byRelease[v]; !ok {
			releases = append(releases, v)
		}
		byRelease[v] = append(byRelease[v], modes.Unversioned(m))
	}
	var specs []pairSpec
	for _, v := range releases {
		for _, sp := range releasePairSpecs(byRelease[v]) {
			sp.num, sp.den, sp.base = modes.WithEnvoy(sp.num, v), modes.WithEnvoy(sp.den, v), modes.WithEnvoy(Baseline, v)
			specs = append(specs, sp)
		}
	}
	return append(specs, envoyPairSpecs(ms)...)
}

// envoyPairSpecs pairs every mode on a named Envoy release (mode~v) with
// the same mode on the run's Envoy (mode), else on the newest release the
// run holds it on.
func envoyPairSpecs(ms []string) []pairSpec {
	has := map[string]bool{}
	newest := map[string]string{} // unversioned mode → newest release
	for _, m := range ms {
		has[m] = true
		if v := modes.EnvoyOf(m); v != "" {
			u := modes.Unversioned(m)
			if cur, ok := newest[u]; !ok || modes.EnvoyVersionLess(cur, v) {
				newest[u] = v
			}
		}
	}
	var specs []pairSpec
	for _, m := range ms {
		v := modes.EnvoyOf(m)
		if v == "" {
			continue
		}
		u := modes.Unversioned(m)
		den := u
		if !has[u] {
			den = modes.WithEnvoy(u, newest[u])
		}
		if den != m {
			specs = append(specs, pairSpec{m, den, familyEnvoy, []metric{MetricReqPerS, MetricCPU, metricP99}, ""})
		}
	}
	return specs
}

// releasePairSpecs are the pairs among the modes of one Envoy release.
func releasePairSpecs(ms []string) []pairSpec {
	has := map[string]bool{}
	for _, m := range ms {
		has[m] = true
	}
	var specs []pairSpec
	if has[Baseline] {
		for _, m := range WAFModes(ms) {
			specs = append(specs, pairSpec{num: m, den: Baseline, family: familyOverhead, metrics: []metric{MetricReqPerS, MetricCPU, metricP99}})
		}
	}
	if has[modes.ModSecurity] && has[modes.Coraza] {
		mets := []metric{MetricReqPerS, MetricCPU}
		if has[Baseline] {
			mets = append(mets, metricCPUAdj)
		}
		specs = append(specs, pairSpec{num: modes.ModSecurity, den: modes.Coraza, family: FamilyEngines, metrics: append(mets, metricP99)})
	}
	// Every other build of an engine against the engine's default build.
	for _, m := range WAFModes(ms) {
		if stock := modes.Engine(m); m != stock && has[stock] && modes.IntegrationOf(m) == modes.Module {
			specs = append(specs, pairSpec{num: m, den: stock, family: FamilyBuilds, metrics: []metric{MetricReqPerS, MetricCPU}})
		}
	}
	specs = append(specs, configPairs(ms, has)...)
	// The same engine in another host or runtime against its Envoy dynamic
	// module of the same build: Caddy, nginx (on Debian's libmodsecurity or
	// a build's own), Envoy's V8, the wafbench-extproc server through
	// ext_proc or ext_authz (CPU: Envoy's plus the server's); under each
	// rule configuration, the module loading the same configuration.
	for _, m := range ms {
		n, err := modes.Parse(m)
		if err != nil || n.Engine == "" || !(modes.IsReference(m) || modes.IsWasm(m) || modes.IsExternal(m)) {
			continue
		}
		module := modes.Name{Base: n.Engine, Build: n.Build, Engine: n.Engine, Host: modes.Envoy, Config: n.Config}.String()
		if has[module] {
			specs = append(specs, pairSpec{num: m, den: module, family: familyHosts, metrics: []metric{MetricReqPerS, MetricCPU, metricP99}})
		}
	}
	return specs
}

// configPairs are the comparisons of the configuration axis (modes named
// <mode>+<configuration>): each configuration of a mode against the same
// mode under the first configuration ms lists for it, and modsecurity
// against coraza under each configuration both run.
func configPairs(ms []string, has map[string]bool) []pairSpec {
	var specs []pairSpec
	first := map[string]string{} // mode without configuration -> its first configured mode
	for _, m := range ms {
		n, err := modes.Parse(m)
		if err != nil || n.Config == "" {
			continue
		}
		base := n.WithConfig("").String()
		ref, ok := first[base]
		if !ok {
			first[base] = m
			continue
		}
		specs = append(specs, pairSpec{num: m, den: ref, family: FamilyConfigs, metrics: []metric{MetricReqPerS, MetricCPU}})
	}
	for _, m := range ms {
		n, err := modes.Parse(m)
		if err != nil || n.Config == "" || n.Base != modes.ModSecurity || n.Build != "" {
			continue
		}
		if c := modes.Coraza + "+" + n.Config; has[c] {
			specs = append(specs, pairSpec{num: m, den: c, family: FamilyEngines, metrics: []metric{MetricReqPerS, MetricCPU, metricP99}})
		}
	}
	return specs
}

// byRepeat indexes valid records of one workload by mode and repeat. If a
// repeat holds two records of one mode (it should not), the first is used.
func byRepeat(s *Summary, byKey map[Key][]*result.Record, w WorkloadKey) map[string]map[int]*result.Record {
	out := map[string]map[int]*result.Record{}
	for _, m := range s.Modes {
		rs := byKey[Key{m, w.Workload, w.Conns}]
		if len(rs) == 0 {
			continue
		}
		out[m] = map[int]*result.Record{}
		for _, r := range rs {
			if _, dup := out[m][r.Repeat]; !dup {
				out[m][r.Repeat] = r
			}
		}
	}
	return out
}

func sortedRepeats(m map[int]*result.Record) []int {
	var rs []int
	for r := range m {
		rs = append(rs, r)
	}
	sort.Ints(rs)
	return rs
}

func compareAll(s *Summary, byKey map[Key][]*result.Record, pairs []ModePair) []Comparison {
	var out []Comparison
	specs := withPairs(pairSpecs(s.Modes), pairs)
	for _, w := range s.Workloads {
		idx := byRepeat(s, byKey, w)
		for _, sp := range specs {
			num, den := idx[sp.num], idx[sp.den]
			if num == nil || den == nil {
				continue
			}
			for _, m := range sp.metrics {
				c := Comparison{WorkloadKey: w, Num: sp.num, Den: sp.den, Metric: m, Family: sp.family}
				for _, rep := range sortedRepeats(num) {
					a, b := num[rep], den[rep]
					if b == nil {
						continue
					}
					x, y := metricValue(m, a), metricValue(m, b)
					if m == metricCPUAdj {
						base := idx[sp.base][rep]
						if base == nil {
							continue
						}
						x -= base.TotalCPUUsPerRequest()
						y -= base.TotalCPUUsPerRequest()
					}
					if y <= 0 || x < 0 {
						continue // a ratio needs a positive denominator
					}
					c.Repeats = append(c.Repeats, rep)
					c.NumValues = append(c.NumValues, x)
					c.DenValues = append(c.DenValues, y)
					c.Ratios = append(c.Ratios, x/y)
					c.NumPositions = append(c.NumPositions, a.Position)
					c.DenPositions = append(c.DenPositions, b.Position)
				}
				if len(c.Ratios) == 0 {
					continue
				}
				fillRatio(&c)
				out = append(out, c)
			}
		}
	}
	holmByFamily(out)
	for i := range out {
		out[i].Verdict, out[i].Reason = verdict(&out[i])
	}
	return out
}

// holmByFamily sets PHolm and PSignedRankHolm: Holm over the comparisons of
// each family separately.
func holmByFamily(cs []Comparison) {
	members := map[Family][]int{}
	for i := range cs {
		members[cs[i].Family] = append(members[cs[i].Family], i)
	}
	for _, idx := range members {
		pt := make([]float64, len(idx))
		pr := make([]float64, len(idx))
		for j, i := range idx {
			pt[j], pr[j] = cs[i].P, cs[i].PSignedRank
		}
		ht, hr := Holm(pt), Holm(pr)
		for j, i := range idx {
			cs[i].PHolm, cs[i].PSignedRankHolm = ht[j], hr[j]
		}
	}
}

// FamilySize is the number of comparisons in family f.
func (s *Summary) FamilySize(f Family) int {
	n := 0
	for i := range s.Comparisons {
		if s.Comparisons[i].Family == f {
			n++
		}
	}
	return n
}

func fillRatio(c *Comparison) {
	e := Median(c.Ratios)
	c.MedianRatio, c.OrderLo, c.OrderHi = e.Median, e.Lo, e.Hi
	c.BootLo, c.BootHi = BootstrapMedianCI(c.Ratios, BootstrapSeed, BootstrapResamples, Confidence)
	c.PMannWhitney = mannWhitneyP(c.NumValues, c.DenValues)
	c.GeoRatio, c.TLo, c.THi, c.P = PairedLogT(c.Ratios, Confidence)
	logs := make([]float64, len(c.Ratios))
	for i, r := range c.Ratios {
		logs[i] = math.Log(r)
	}
	c.PSignedRank = signedRankP(logs)
	c.Assumptions = checkAssumptions(c)
}

// PairedLogT is the paired analysis of per-repeat ratios: the geometric
// mean ratio, its t interval at level conf, and the two-sided p-value of
// the one-sample t-test of the log-ratios against 0. It assumes the
// log-ratios are independent across repeats and roughly normal (the report
// flags skewed or drifting ratios). With fewer than 2 ratios, or log-ratios
// that do not vary, the interval is NaN and p is 1 (n < 2) or 0 (no spread,
// every ratio ≠ 1) — the verdict rule then rests on n and the bootstrap.
func PairedLogT(ratios []float64, conf float64) (geo, lo, hi, p float64) {
	n := len(ratios)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), 1
	}
	logs := make([]float64, n)
	for i, r := range ratios {
		logs[i] = math.Log(r)
	}
	mean, sd := stat.MeanStdDev(logs, nil)
	geo = math.Exp(mean)
	if n < 2 || math.IsNaN(sd) {
		return geo, math.NaN(), math.NaN(), 1
	}
	if sd == 0 {
		if mean == 0 {
			return geo, geo, geo, 1
		}
		return geo, geo, geo, 0
	}
	se := sd / math.Sqrt(float64(n))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
	q := t.Quantile(1 - (1-conf)/2)
	p = 2 * t.CDF(-math.Abs(mean/se))
	return geo, math.Exp(mean - q*se), math.Exp(mean + q*se), p
}

// mannWhitneyP is the two-sided Mann–Whitney U p-value of a against b, as
// benchmath.AssumeNothing.Compare computes it. Identical samples give 1.
func mannWhitneyP(a, b []float64) float64 {
	t := &benchmath.DefaultThresholds
	sa := benchmath.NewSample(slices.Clone(a), t)
	sb := benchmath.NewSample(slices.Clone(b), t)
	return benchmath.AssumeNothing.Compare(sa, sb).P
}

// verdict applies the rule: NotEstablished when n < MinSamples or the
// Holm-adjusted (within the family) paired-t p ≥ Alpha; otherwise the
// direction of the geometric-mean ratio. The rule rests on one pre-stated
// test; the bootstrap and order-statistic intervals and the signed-rank
// test are reported beside it, and the assumption checks annotate it
// (RankDisagrees is set here).
func verdict(c *Comparison) (string, string) {
	switch {
	case c.N() < MinSamples:
		return NotEstablished, fmt.Sprintf("n=%d < %d paired repeats", c.N(), MinSamples)
	case !(c.PHolm < Alpha):
		return NotEstablished, fmt.Sprintf("Holm p=%.3g ≥ %g", c.PHolm, Alpha)
	}
	if c.Assumptions.Checked && SignedRankMinP(c.N()) < Alpha && !(c.PSignedRank < Alpha) {
		c.Assumptions.RankDisagrees = true
	}
	above, below := c.Metric.words()
	if c.GeoRatio > 1 {
		return above, ""
	}
	return below, ""
}

// Holm returns Holm–Bonferroni adjusted p-values, in the order of p:
// sorting ascending, adj(i) = max over j ≤ i of min(1, (m−j+1)·p(j)).
// A hypothesis is rejected at family-wise level α when adj < α. Written by
// hand: x/perf has no multiple-comparison correction.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	adj := make([]float64, m)
	run := 0.0
	for rank, i := range idx {
		v := math.Min(1, float64(m-rank)*p[i])
		run = math.Max(run, v)
		adj[i] = run
	}
	return adj
}

// BootstrapMedianCI is the percentile bootstrap confidence interval of the
// median of values: resamples draws of len(values) with replacement from a
// PCG generator seeded with seed, the median of each, and the
// (1−confidence)/2 and (1+confidence)/2 quantiles of those medians. The
// same inputs always give the same interval. Written by hand: benchmath
// only offers order-statistic intervals.
func BootstrapMedianCI(values []float64, seed uint64, resamples int, confidence float64) (lo, hi float64) {
	n := len(values)
	if n == 0 || resamples <= 0 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	meds := make([]float64, resamples)
	buf := make([]float64, n)
	for b := range meds {
		for i := range buf {
			buf[i] = values[rng.IntN(n)]
		}
		sort.Float64s(buf)
		meds[b] = medianSorted(buf)
	}
	sort.Float64s(meds)
	a := (1 - confidence) / 2
	li := int(math.Floor(a * float64(resamples)))
	hi_ := int(math.Ceil((1-a)*float64(resamples))) - 1
	li = min(max(li, 0), resamples-1)
	hi_ = min(max(hi_, 0), resamples-1)
	return meds[li], meds[hi_]
}

// minP is the smallest two-sided Mann–Whitney p-value attainable with n1
// and n2 samples and no ties: 2 / C(n1+n2, n1).
func minP(n1, n2 int) float64 {
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// repeatsNeeded is the smallest n per side for which even a complete
// separation of the samples could survive Holm over m comparisons, i.e.
// MinP(n, n)·m < Alpha. It is a floor, not a power calculation.
func repeatsNeeded(m int) int {
	if m < 1 {
		m = 1
	}
	n := MinSamples
	for minP(n, n)*float64(m) >= Alpha {
		n++
	}
	return n
}

// baselineCPU is a WAF mode's CPU per request minus passthrough's, paired
// within each repeat: what the engine itself adds, in µs per request.
type baselineCPU struct {
	WorkloadKey
	Mode    string
	Repeats []int
	Values  []float64 // µs/req added, per repeat
	Median  Estimate  // order-statistic CI (benchmath)
	BootLo  float64   // seeded bootstrap CI of the median
	BootHi  float64
}

func baselineAll(s *Summary, byKey map[Key][]*result.Record) []baselineCPU {
	var out []baselineCPU
	for _, w := range s.Workloads {
		idx := byRepeat(s, byKey, w)
		for _, m := range WAFModes(s.Modes) {
			recs, base := idx[m], idx[modes.WithEnvoy(Baseline, modes.EnvoyOf(m))]
			if recs == nil || base == nil {
				continue
			}
			b := baselineCPU{WorkloadKey: w, Mode: m}
			for _, rep := range sortedRepeats(recs) {
				if p := base[rep]; p != nil {
					b.Repeats = append(b.Repeats, rep)
					b.Values = append(b.Values, recs[rep].TotalCPUUsPerRequest()-p.TotalCPUUsPerRequest())
				}
			}
			if len(b.Values) == 0 {
				continue
			}
			b.Median = Median(b.Values)
			b.BootLo, b.BootHi = BootstrapMedianCI(b.Values, BootstrapSeed, BootstrapResamples, Confidence)
			out = append(out, b)
		}
	}
	return out
}
