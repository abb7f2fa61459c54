package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// MaxRepeats caps every repeats estimate and every run --precision: beyond it
// a target is reported as out of reach rather than as a number of repeats.
const MaxRepeats = 200

// targetMetrics are the metrics a precision target covers when it names
// none: throughput and Envoy CPU per request.
var targetMetrics = []metric{MetricReqPerS, MetricCPU}

// HalfWidthPct is the half-width of the paired-t 95 % interval of the
// geometric-mean ratio, in percent of the ratio, on its wider (upper) side:
// 100·(exp(t·se) − 1). It is what run --precision stops on. +Inf when the
// interval is undefined (n < 2).
func (c *Comparison) HalfWidthPct() float64 {
	if math.IsNaN(c.TLo) || math.IsNaN(c.THi) || c.GeoRatio <= 0 {
		return math.Inf(1)
	}
	return 100 * math.Max(c.THi/c.GeoRatio-1, 1-c.TLo/c.GeoRatio)
}

// sdLog is the sample standard deviation of c's per-repeat log-ratios (NaN
// below 2 repeats).
func (c *Comparison) sdLog() float64 {
	if len(c.Ratios) < 2 {
		return math.NaN()
	}
	logs := make([]float64, len(c.Ratios))
	for i, r := range c.Ratios {
		logs[i] = math.Log(r)
	}
	_, sd := stat.MeanStdDev(logs, nil)
	return sd
}

// tQuantile is the two-sided (1 − a) quantile of Student's t with df degrees
// of freedom.
func tQuantile(a float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - a/2)
}

// repeatsForHalfWidth is the smallest n ≥ MinSamples at which the paired-t
// interval of a ratio whose per-repeat log-ratios have standard deviation
// sdLog reaches a half-width of pct percent (100·(exp(t·sd/√n) − 1) ≤ pct).
// It returns MaxRepeats+1 when even MaxRepeats would not, and MinSamples
// when sdLog is 0.
func repeatsForHalfWidth(sdLog, pct float64) int {
	h := math.Log1p(pct / 100)
	for n := MinSamples; n <= MaxRepeats; n++ {
		if tQuantile(1-Confidence, n-1)*sdLog/math.Sqrt(float64(n)) <= h {
			return n
		}
	}
	return MaxRepeats + 1
}

// RepeatsToEstablish estimates how many paired repeats c needs for a
// verdict if its geometric-mean ratio and spread stayed as observed: the
// smallest n ≥ MinSamples whose paired-t interval at level 1 − Alpha/m
// (Bonferroni over the m comparisons of its family — Holm never demands
// more) excludes 1. MaxRepeats+1 means out of reach (a ratio this close to
// 1 at this spread); 0 means it cannot be estimated (n < 2).
func (c *Comparison) RepeatsToEstablish(m int) int {
	sd := c.sdLog()
	if math.IsNaN(sd) || c.GeoRatio <= 0 {
		return 0
	}
	m = max(m, 1)
	effect := math.Abs(math.Log(c.GeoRatio))
	for n := MinSamples; n <= MaxRepeats; n++ {
		if tQuantile(Alpha/float64(m), n-1)*sd/math.Sqrt(float64(n)) < effect {
			return n
		}
	}
	return MaxRepeats + 1
}

// Target is one comparison a run aims to measure to a precision.
type Target struct {
	Num, Den string
	Metric   metric
	WorkloadKey
}

// String is e.g. "modsecurity/coraza CPU µs/req on headers/c16".
func (t Target) String() string {
	return t.Num + "/" + t.Den + " " + t.Metric.Label() + " on " + t.WorkloadKey.String()
}

// ParseTarget reads a target as meta.json records it.
func ParseTarget(p result.PrecisionTarget) (Target, error) {
	num, den, ok := strings.Cut(p.Ratio, "/")
	if !ok || num == "" || den == "" {
		return Target{}, fmt.Errorf("precision target ratio: want <mode>/<mode>, got %q", p.Ratio)
	}
	w, err := parseWorkloadKey(p.Workload)
	if err != nil {
		return Target{}, fmt.Errorf("precision target %s: %v", p.Ratio, err)
	}
	return Target{Num: num, Den: den, Metric: metric(p.Metric), WorkloadKey: w}, nil
}

// parseWorkloadKey reads the suite notation "name@conns".
func parseWorkloadKey(s string) (WorkloadKey, error) {
	name, cs, ok := strings.Cut(s, "@")
	c, err := strconv.Atoi(cs)
	if !ok || name == "" || err != nil || c < 1 {
		return WorkloadKey{}, fmt.Errorf("workload: want name@conns, got %q", s)
	}
	return WorkloadKey{name, c}, nil
}

// ExpandTargets turns a suite's precision targets (ratio "num/den", metric
// names — none means TargetMetrics — and workloads "name@conns" — none means
// every workload of the run) into the list meta.json records, keeping only
// those whose two modes are in runModes and whose workload is in
// runWorkloads. A ratio that names no known mode, or a metric that is not
// req_per_s, cpu_us_per_req or p99_us, is an error.
func ExpandTargets(ratio string, metrics, workloads, runModes, runWorkloads []string) ([]result.PrecisionTarget, error) {
	num, den, ok := strings.Cut(ratio, "/")
	if !ok {
		return nil, fmt.Errorf("precision target %q: want <mode>/<mode>", ratio)
	}
	for _, m := range []string{num, den} {
		if _, err := modes.Parse(m); err != nil {
			return nil, fmt.Errorf("precision target %s: %v", ratio, err)
		}
	}
	var ms []metric
	for _, m := range metrics {
		switch metric(m) {
		case MetricReqPerS, MetricCPU, metricP99:
			ms = append(ms, metric(m))
		default:
			return nil, fmt.Errorf("precision target %s: metric: want %s, %s or %s, got %q", ratio, MetricReqPerS, MetricCPU, metricP99, m)
		}
	}
	if len(ms) == 0 {
		ms = targetMetrics
	}
	if len(workloads) == 0 {
		workloads = runWorkloads
	}
	if !slices.Contains(runModes, num) || !slices.Contains(runModes, den) {
		return nil, nil
	}
	var out []result.PrecisionTarget
	for _, w := range workloads {
		if !slices.Contains(runWorkloads, w) {
			continue
		}
		for _, m := range ms {
			out = append(out, result.PrecisionTarget{Ratio: ratio, Metric: string(m), Workload: w})
		}
	}
	return out, nil
}

// TargetStatus is where a run stands against one target.
type TargetStatus struct {
	Target
	Comparison   *Comparison // nil when the run has no such comparison
	HalfWidthPct float64     // +Inf without an interval
	Met          bool
	// Needed is the estimated number of repeats for the target at the
	// observed spread (RepeatsForHalfWidth); 0 when it cannot be estimated.
	Needed int
}

// CheckTargets measures each target against pct.
func CheckTargets(s *Summary, targets []Target, pct float64) []TargetStatus {
	out := make([]TargetStatus, len(targets))
	for i, t := range targets {
		st := TargetStatus{Target: t, HalfWidthPct: math.Inf(1)}
		if c := s.Comparison(t.Num, t.Den, t.Metric, t.WorkloadKey); c != nil {
			st.Comparison = c
			st.HalfWidthPct = c.HalfWidthPct()
			st.Met = st.HalfWidthPct <= pct
			if sd := c.sdLog(); !math.IsNaN(sd) {
				st.Needed = repeatsForHalfWidth(sd, pct)
			}
		}
		out[i] = st
	}
	return out
}

// AllMet reports whether every status is met (false for none).
func AllMet(sts []TargetStatus) bool {
	for _, s := range sts {
		if !s.Met {
			return false
		}
	}
	return len(sts) > 0
}

// Comparison returns the comparison num/den of metric on w, or nil.
func (s *Summary) Comparison(num, den string, m metric, w WorkloadKey) *Comparison {
	for i := range s.Comparisons {
		c := &s.Comparisons[i]
		if c.Num == num && c.Den == den && c.Metric == m && c.WorkloadKey == w {
			return c
		}
	}
	return nil
}
