package report

import (
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// instrModel is the Instructions per request section's content: the tool,
// the warm-up and counted requests of every record, and one row per
// workload and mode.
type instrModel struct {
	tool             string
	warmup, requests []int64
	rows             []instrRow
}

// instrRow is one mode on one workload: Envoy's whole-process count and,
// when split (a WAF mode measured with the meter), inside and outside the
// hooks; hasOver is false without passthrough's count to subtract.
type instrRow struct {
	w              stats.WorkloadKey
	mode           string
	n              int
	envoy          stats.Estimate
	split          bool
	hooks, outside stats.Estimate
	over           float64 // outside − passthrough's whole-process count
	hasOver        bool
	sharePct       float64 // inside hooks, % of Envoy's count
}

// buildInstructions computes the section; nil when no record carries
// instruction counts.
func buildInstructions(recs []result.Record, s *stats.Summary) *instrModel {
	type key struct {
		mode string
		wl   stats.WorkloadKey
	}
	counts := map[key][]*result.Instructions{}
	im := &instrModel{}
	for i := range recs {
		r := &recs[i]
		if !stats.Valid(r) || r.Instructions == nil || r.Instructions.Requests <= 0 {
			continue
		}
		k := key{r.Mode, stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}}
		counts[k] = append(counts[k], r.Instructions)
		im.tool = r.Instructions.Tool
		im.warmup = append(im.warmup, r.Instructions.WarmupRequests)
		im.requests = append(im.requests, r.Instructions.Requests)
	}
	if len(counts) == 0 {
		return nil
	}
	for _, w := range s.Workloads {
		pass := instrMedian(counts[key{modes.Passthrough, w}], (*result.Instructions).EnvoyPerRequest)
		for _, mode := range s.Modes {
			in := counts[key{mode, w}]
			if len(in) == 0 {
				continue
			}
			row := instrRow{w: w, mode: mode, n: len(in), envoy: instrMedian(in, (*result.Instructions).EnvoyPerRequest)}
			if mode != modes.Passthrough && in[0].OutsideHooks != 0 {
				row.split = true
				row.hooks = instrMedian(in, (*result.Instructions).HooksPerRequest)
				row.outside = instrMedian(in, (*result.Instructions).OutsidePerRequest)
				row.over, row.hasOver = row.outside.Median-pass.Median, pass.N > 0
				row.sharePct = 100 * row.hooks.Median / row.envoy.Median
			}
			im.rows = append(im.rows, row)
		}
	}
	return im
}
