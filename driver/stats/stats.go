// Package stats turns raw wafbench records into the numbers a report may
// claim: per-group medians with confidence intervals, paired per-repeat
// ratios between modes with verdicts, baseline-adjusted CPU, precision
// achieved against targets, variance components with the repeats × window
// allocation they imply, and a steady-state check of every record.
// METHODS.md beside this file says why each method was chosen.
//
// Medians, their order-statistic confidence intervals and the Mann–Whitney U
// test come from golang.org/x/perf/benchmath (AssumeNothing), the same
// machinery benchstat uses; t and normal distributions, moments and
// correlations from gonum/stat. What neither offers is written here by hand
// and marked as such: the paired-t verdict on log-ratios, the exact Wilcoxon
// signed-rank test, the seeded percentile bootstrap of a median, the Holm
// correction, the assumption checks, the variance components and the drift
// check.
package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// Analysis constants. They are part of the method and printed in reports.
const (
	// Confidence is the requested confidence level of every interval.
	Confidence = 0.95
	// Alpha is the family-wise error rate controlled by the Holm correction.
	Alpha = 0.05
	// MinSamples is the smallest number of samples per side for which a
	// verdict may be given. Below it a comparison is "not established":
	// with n=3 per side the smallest two-sided Mann–Whitney p is 0.1, so no
	// difference could ever reach Alpha.
	MinSamples = 4
	// BootstrapSeed seeds every bootstrap, so intervals are reproducible.
	BootstrapSeed = 1
	// BootstrapResamples is the number of bootstrap resamples.
	BootstrapResamples = 10000
	// DriftLimit is the relative change between the first and second half
	// of a record's per-second series above which it is flagged.
	DriftLimit = 0.05
	// PrecisionTargetPct is the CI half-width, relative to the median, that
	// the harness aims for (±3 %).
	PrecisionTargetPct = 3.0
	// Baseline is the mode every WAF mode is paired against.
	Baseline = modes.Baseline
)

// Estimate is the median of a sample with its order-statistic confidence
// interval. Lo and Hi are ±Inf when the sample is too small for an interval
// at the requested level (benchmath needs n ≥ 6 for 95 %).
type Estimate struct {
	N          int
	Median     float64
	Lo, Hi     float64
	Confidence float64   // actual level, ≥ Confidence
	Values     []float64 // ascending
}

// Median summarizes values with benchmath.AssumeNothing at Confidence.
// values is not modified.
func Median(values []float64) Estimate {
	if len(values) == 0 {
		return Estimate{Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	s := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	return Estimate{N: len(values), Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence, Values: s.Values}
}

// MedianOf is the median of values (NaN when there are none): the middle
// value, or the mean of the two middle values. values is not modified. It is
// the one median of the project; Median adds its interval.
func MedianOf(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Clone(values)
	slices.Sort(s)
	return medianSorted(s)
}

// medianSorted is the median of v, which is sorted and not empty.
func medianSorted(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// HalfWidthPct is the larger distance from the median to a CI bound, as a
// percentage of the median (benchstat's "±"). It is +Inf when the interval
// is unbounded and NaN when the median is zero or missing.
func (e Estimate) HalfWidthPct() float64 {
	if e.N == 0 || e.Median == 0 || math.IsNaN(e.Median) {
		return math.NaN()
	}
	if math.IsInf(e.Lo, 0) || math.IsInf(e.Hi, 0) {
		return math.Inf(1)
	}
	return 100 * math.Max(e.Hi-e.Median, e.Median-e.Lo) / math.Abs(e.Median)
}

// PrecisionMet reports whether the CI half-width is within PrecisionTargetPct.
func (e Estimate) PrecisionMet() bool {
	h := e.HalfWidthPct()
	return !math.IsNaN(h) && h <= PrecisionTargetPct
}

// Key identifies one measured group: a mode on one workload at one
// connection count.
type Key struct {
	Mode     string
	Workload string
	Conns    int
}

// WorkloadKey names a workload at one connection count, e.g. "headers/c16".
type WorkloadKey struct {
	Workload string
	Conns    int
}

// String returns e.g. "headers/c16".
func (w WorkloadKey) String() string { return w.Workload + "/c" + strconv.Itoa(w.Conns) }

// WorkloadKey returns k without its mode.
func (k Key) WorkloadKey() WorkloadKey { return WorkloadKey{k.Workload, k.Conns} }

// Group holds the estimates of one (mode, workload, conns) over the valid
// records, one value per record.
type Group struct {
	Key
	N           int
	ReqPerS     Estimate
	CPUUsPerReq Estimate
	P50Us       Estimate
	P95Us       Estimate
	P99Us       Estimate
	P999Us      Estimate
	MaxUs       Estimate
	RSSEndKiB   Estimate
	Errors      int64 // summed over valid records
}

// excluded is a record left out of the statistics, with why.
type excluded struct {
	Trial, Repeat int
	Key
	Reason string
}

// Summary is everything the report states about one run.
type Summary struct {
	Modes       []string      // canonical order: passthrough, modsecurity, coraza, others sorted
	Workloads   []WorkloadKey // sorted by name, then conns
	Groups      []Group       // ordered by workload, then mode
	Comparisons []Comparison  // Holm-adjusted across all of them
	Baseline    []baselineCPU // mode CPU/req − passthrough CPU/req, per repeat
	Drift       []drift       // one per valid record, ordered by trial, workload
	Growth      []Growth      // one per valid record, ordered like Drift
	Excluded    []excluded
	Components  []Component // per group, ordered like Groups
}

// Group returns the group for k, or nil.
func (s *Summary) Group(k Key) *Group {
	for i := range s.Groups {
		if s.Groups[i].Key == k {
			return &s.Groups[i]
		}
	}
	return nil
}

// Valid reports whether r may enter the statistics: not interrupted and
// without a trial error.
func Valid(r *result.Record) bool { return !r.Interrupted && r.Error == "" }

func excludeReason(r *result.Record) string {
	var why []string
	if r.Interrupted {
		why = append(why, "interrupted")
	}
	if r.Error != "" {
		why = append(why, "error: "+r.Error)
	}
	return strings.Join(why, "; ")
}

// ModeRank orders modes as the registry does (modes.Rank).
func ModeRank(m string) int { return modes.Rank(m) }

func sortModes(ms []string) { modes.Sort(ms) }

func lessWorkload(a, b WorkloadKey) bool {
	if a.Workload != b.Workload {
		return a.Workload < b.Workload
	}
	return a.Conns < b.Conns
}

// Summarize computes every statistic of the run from its records. Records
// that were interrupted or carry an Error are excluded and listed;
// slow-client records (result.Slow) are left out.
func Summarize(recs []result.Record) *Summary {
	return SummarizePairs(recs, nil)
}

// SummarizePairs is Summarize with pairs compared besides the ones the
// run's modes imply (run --compare).
func SummarizePairs(recs []result.Record, pairs []ModePair) *Summary {
	s := &Summary{}
	byKey := map[Key][]*result.Record{}
	modes := map[string]bool{}
	wls := map[WorkloadKey]bool{}
	for i := range recs {
		r := &recs[i]
		k := Key{r.Mode, r.Workload, r.Conns}
		if r.Slow != nil {
			continue // a slow-client record measures no load: the report's slow-client section reads it
		}
		if !Valid(r) {
			s.Excluded = append(s.Excluded, excluded{Trial: r.Trial, Repeat: r.Repeat, Key: k, Reason: excludeReason(r)})
			continue
		}
		byKey[k] = append(byKey[k], r)
		modes[r.Mode] = true
		wls[k.WorkloadKey()] = true
		s.Drift = append(s.Drift, CheckDrift(r))
		s.Growth = append(s.Growth, checkGrowth(r))
	}
	for m := range modes {
		s.Modes = append(s.Modes, m)
	}
	sortModes(s.Modes)
	for w := range wls {
		s.Workloads = append(s.Workloads, w)
	}
	sort.Slice(s.Workloads, func(i, j int) bool { return lessWorkload(s.Workloads[i], s.Workloads[j]) })
	sort.SliceStable(s.Drift, func(i, j int) bool {
		return lessTrial(s.Drift[i].Trial, s.Drift[i].Key, s.Drift[j].Trial, s.Drift[j].Key)
	})
	sort.SliceStable(s.Growth, func(i, j int) bool {
		return lessTrial(s.Growth[i].Trial, s.Growth[i].Key, s.Growth[j].Trial, s.Growth[j].Key)
	})

	for _, w := range s.Workloads {
		for _, m := range s.Modes {
			k := Key{m, w.Workload, w.Conns}
			rs := byKey[k]
			if len(rs) == 0 {
				continue
			}
			s.Groups = append(s.Groups, summarizeGroup(k, rs))
			s.Components = append(s.Components, component(k, rs))
		}
	}
	s.Comparisons = compareAll(s, byKey, pairs)
	s.Baseline = baselineAll(s, byKey)
	return s
}

func summarizeGroup(k Key, rs []*result.Record) Group {
	col := func(f func(r *result.Record) float64) Estimate {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return Median(v)
	}
	g := Group{Key: k, N: len(rs)}
	g.ReqPerS = col(func(r *result.Record) float64 { return r.ReqPerS })
	g.CPUUsPerReq = col(func(r *result.Record) float64 { return r.TotalCPUUsPerRequest() }) // Envoy's, and an external mode's server's too
	g.P50Us = col(func(r *result.Record) float64 { return r.Latency.P50Us })
	g.P95Us = col(func(r *result.Record) float64 { return r.Latency.P95Us })
	g.P99Us = col(func(r *result.Record) float64 { return r.Latency.P99Us })
	g.P999Us = col(func(r *result.Record) float64 { return r.Latency.P999Us })
	g.MaxUs = col(func(r *result.Record) float64 { return r.Latency.MaxUs })
	g.RSSEndKiB = col(func(r *result.Record) float64 { return float64(r.Memory.RSSEndKiB) })
	for _, r := range rs {
		g.Errors += ErrorCount(r)
	}
	return g
}

// ErrorCount sums r.Errors over all kinds.
func ErrorCount(r *result.Record) int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// lessTrial orders per-record checks by trial, then workload.
func lessTrial(ta int, a Key, tb int, b Key) bool {
	if ta != tb {
		return ta < tb
	}
	return lessWorkload(a.WorkloadKey(), b.WorkloadKey())
}

// drift is the steady-state check of one record: the mean completions per
// second of the first half of the window against the second half.
type drift struct {
	Trial, Repeat int
	Key
	Seconds    int     // per-second buckets used
	FirstMean  float64 // completions/s, first half
	SecondMean float64 // completions/s, second half
	Change     float64 // SecondMean/FirstMean − 1
	Flagged    bool    // |Change| > DriftLimit
	TooShort   bool    // fewer than 4 usable buckets; not checked
}

// CheckDrift compares the first and second half of r.PerSecond. A final
// bucket is treated as a partial second and dropped when the series has more
// buckets than whole seconds in DurationS (or when DurationS is unknown and
// the bucket is below half the median). With an odd number of buckets the
// middle one is left out. Written by hand: benchmath has no stationarity
// check (its NewSample carries a TODO for one).
func CheckDrift(r *result.Record) drift {
	d := drift{Trial: r.Trial, Repeat: r.Repeat, Key: Key{r.Mode, r.Workload, r.Conns}}
	ps := r.PerSecond
	if n := len(ps); n > 0 {
		whole := int(math.Floor(r.DurationS + 1e-9))
		if r.DurationS > 0 && n > whole {
			ps = ps[:whole]
		} else if r.DurationS <= 0 && n > 1 {
			m := Median(int64s(ps)).Median
			if float64(ps[n-1]) < m/2 {
				ps = ps[:n-1]
			}
		}
	}
	d.Seconds = len(ps)
	if len(ps) < 4 {
		d.TooShort = true
		return d
	}
	half := len(ps) / 2
	d.FirstMean = mean(int64s(ps[:half]))
	d.SecondMean = mean(int64s(ps[len(ps)-half:]))
	if d.FirstMean > 0 {
		d.Change = d.SecondMean/d.FirstMean - 1
	} else if d.SecondMean > 0 {
		d.Change = math.Inf(1)
	}
	d.Flagged = math.Abs(d.Change) > DriftLimit
	return d
}

func int64s(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Memory growth limits: a measured window is flagged when Envoy's RSS grew by
// at least GrowthMinKiB and by at least GrowthMinBytesPerReq per request.
// Both must hold, so that allocator and GC steps on short or slow windows
// are not mistaken for a per-request leak: the Coraza module's Go heap moves
// RSS by up to ~8 MiB in garbage-collection steps (seen in the seed suite).
const (
	GrowthMinKiB         = 10240
	GrowthMinBytesPerReq = 64
)

// Growth is the memory check of one record: Envoy's RSS at the end of the
// measured window against right after its warmup.
type Growth struct {
	Trial, Repeat int
	Key
	Requests        int64
	BeforeKiB       int64
	AfterKiB        int64
	BytesPerRequest float64
	Flagged         bool
}

// checkGrowth flags a window whose RSS grew like a per-request leak. It
// caught libmodsecurity keeping ~670 bytes per phase-1 block (see
// internal/crs). Written by hand: no library has this rule.
func checkGrowth(r *result.Record) Growth {
	g := Growth{Trial: r.Trial, Repeat: r.Repeat, Key: Key{r.Mode, r.Workload, r.Conns}, Requests: r.Requests,
		BeforeKiB: r.Memory.RSSAfterWarmupKiB, AfterKiB: r.Memory.RSSEndKiB}
	if g.BeforeKiB == 0 || g.AfterKiB == 0 || r.Requests == 0 {
		return g
	}
	grew := g.AfterKiB - g.BeforeKiB
	g.BytesPerRequest = float64(grew) * 1024 / float64(r.Requests)
	g.Flagged = grew >= GrowthMinKiB && g.BytesPerRequest >= GrowthMinBytesPerReq
	return g
}

// String describes d in one line.
func (d drift) String() string {
	if d.TooShort {
		return fmt.Sprintf("trial %d %s %s: %d s, too short to check", d.Trial, d.Mode, d.WorkloadKey(), d.Seconds)
	}
	return fmt.Sprintf("trial %d %s %s: %.0f → %.0f req/s (%+.1f%%)", d.Trial, d.Mode, d.WorkloadKey(), d.FirstMean, d.SecondMean, 100*d.Change)
}
