package report

import (
	"fmt"
	"math"
	"strconv"

	"wafbench/driver/result"
)

// quality is what Build set aside or flagged before summarizing: a torn
// last line of raw.jsonl, records whose values cannot be measurements, and
// open-loop windows that fell behind their rate.
type quality struct {
	PartialDropped int             // torn last lines of raw.jsonl, not records
	Impossible     int             // records marked failed by check
	Behind         []result.Record // open-loop windows that did not hold their rate
}

// check marks records holding an impossible value (negative, or beyond any
// machine's reach) as failed, naming the field, so statistics and charts
// exclude them, and collects the windows that fell behind their rate.
func (q *quality) check(recs []result.Record) []result.Record {
	for i := range recs {
		r := &recs[i]
		if why := impossible(r); why != "" && r.Error == "" {
			r.Error = "impossible value in raw.jsonl: " + why
			q.Impossible++
		}
		if r.BehindRate && r.Error == "" && !r.Interrupted {
			q.Behind = append(q.Behind, *r)
		}
	}
	return recs
}

// Bounds beyond which a recorded value is not a measurement.
const (
	maxPlausible      = 1e12 // µs (11.6 days), req/s, CPU µs per request, KiB
	maxPlausibleConns = 1 << 20
)

// impossible names the first field of r that no run can have measured, or
// returns "".
func impossible(r *result.Record) string {
	bad := func(v float64) bool { return math.IsNaN(v) || v < 0 || v > maxPlausible }
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"req_per_s", r.ReqPerS},
		{"rate_requested_per_s", r.RateRequestedPerS},
		{"rate_achieved_per_s", r.RateAchievedPerS},
		{"duration_s", r.DurationS},
		{"warmup_s", r.WarmupS},
		{"requests", float64(r.Requests)},
		{"latency.p50_us", r.Latency.P50Us},
		{"latency.p90_us", r.Latency.P90Us},
		{"latency.p95_us", r.Latency.P95Us},
		{"latency.p99_us", r.Latency.P99Us},
		{"latency.p999_us", r.Latency.P999Us},
		{"latency.max_us", r.Latency.MaxUs},
		{"latency.mean_us", r.Latency.MeanUs},
		{"envoy_cpu.us_per_request", r.CPU.UsPerRequest},
		{"envoy_cpu.utilization", r.CPU.Utilization},
		{"envoy_cpu.schedstat_ns", float64(r.CPU.SchedstatNs) / 1e9},
		{"envoy_memory.rss_after_warmup_kib", float64(r.Memory.RSSAfterWarmupKiB)},
		{"envoy_memory.rss_end_kib", float64(r.Memory.RSSEndKiB)},
		{"envoy_memory.peak_kib", float64(r.Memory.PeakKiB)},
	} {
		if bad(f.v) {
			return f.name + " = " + strconv.FormatFloat(f.v, 'g', -1, 64)
		}
	}
	if r.Conns < 0 || r.Conns > maxPlausibleConns {
		return "conns = " + strconv.Itoa(r.Conns)
	}
	for i, v := range r.PerSecond {
		if v < 0 || float64(v) > maxPlausible {
			return fmt.Sprintf("per_second[%d] = %d", i, v)
		}
	}
	for k, v := range r.Errors {
		if v < 0 {
			return fmt.Sprintf("errors[%q] = %d", k, v)
		}
	}
	for k, v := range r.Statuses {
		if v < 0 {
			return fmt.Sprintf("statuses[%q] = %d", k, v)
		}
	}
	return ""
}

// lines states what quality set aside, one sentence each, for the terminal
// and the report's limitations.
func (q *quality) lines() []string {
	var out []string
	if q.PartialDropped > 0 {
		out = append(out, fmt.Sprintf("%d partial records dropped (a torn last line of %s: the run was cut off or the disk filled mid-write)", q.PartialDropped, result.RawFile))
	}
	if q.Impossible > 0 {
		out = append(out, fmt.Sprintf("%d records hold impossible values and are excluded (listed under failed trials)", q.Impossible))
	}
	if n := len(q.Behind); n > 0 {
		out = append(out, fmt.Sprintf("%d open-loop windows fell behind their requested rate (listed under open-loop rate)", n))
	}
	return out
}
