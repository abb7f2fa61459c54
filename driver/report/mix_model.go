package report

import (
	"math"
	"sort"

	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// mixModel is one weighted mix at one connection count: per mode the
// trial's figures over every class, then per mode and class its share of
// the responses, validity and latency.
type mixModel struct {
	workload string
	conns    int
	modes    []mixMode
	classes  []mixClass
}

// mixMode is one mode's medians over repeats; hasRatio is false for
// passthrough or without a passthrough baseline.
type mixMode struct {
	mode         string
	repeats      int
	reqPerS, cpu float64
	ratio        float64
	hasRatio     bool
	errors       int64
}

// mixClass is one class of a mix in one mode, summed over repeats; share is
// NaN when the mode has no responses; p50 and p99 are NaN without a
// histogram.
type mixClass struct {
	mode, workload string
	weightPct      float64
	sharePct       float64
	expect         int
	valid, errors  int64
	p50, p99       float64
}

// buildMixes computes every weighted mix of the run, ordered by workload
// and connections.
func buildMixes(recs []result.Record) []mixModel {
	type key struct {
		workload string
		conns    int
	}
	byMix := map[key]map[string][]*result.Record{}
	var order []key
	var modeOrder []string
	seenMode := map[string]bool{}
	for i := range recs {
		r := &recs[i]
		if len(r.Classes) == 0 || r.Error != "" || r.Interrupted {
			continue
		}
		k := key{r.Workload, r.Conns}
		if byMix[k] == nil {
			byMix[k] = map[string][]*result.Record{}
			order = append(order, k)
		}
		byMix[k][r.Mode] = append(byMix[k][r.Mode], r)
		if !seenMode[r.Mode] {
			seenMode[r.Mode] = true
			modeOrder = append(modeOrder, r.Mode)
		}
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].workload != order[j].workload {
			return order[i].workload < order[j].workload
		}
		return order[i].conns < order[j].conns
	})
	var out []mixModel
	for _, k := range order {
		out = append(out, buildMix(k.workload, k.conns, byMix[k], modeOrder))
	}
	return out
}

func buildMix(workload string, conns int, byMode map[string][]*result.Record, modeOrder []string) mixModel {
	mx := mixModel{workload: workload, conns: conns}
	base := medianOf(byMode[modes.Passthrough], func(r *result.Record) float64 { return r.CPU.UsPerRequest })
	for _, mode := range modeOrder {
		rs := byMode[mode]
		if len(rs) == 0 {
			continue
		}
		mm := mixMode{mode: mode, repeats: len(rs),
			reqPerS: medianOf(rs, func(r *result.Record) float64 { return r.ReqPerS }),
			cpu:     medianOf(rs, func(r *result.Record) float64 { return r.CPU.UsPerRequest })}
		if base > 0 && mode != modes.Passthrough {
			mm.ratio, mm.hasRatio = mm.cpu/base, true
		}
		for _, r := range rs {
			for _, n := range r.Errors {
				mm.errors += n
			}
		}
		mx.modes = append(mx.modes, mm)
	}
	for _, mode := range modeOrder {
		rs := byMode[mode]
		if len(rs) == 0 {
			continue
		}
		for ci := range rs[0].Classes {
			mx.classes = append(mx.classes, mixClassOf(mode, rs, ci))
		}
	}
	return mx
}

// mixClassOf sums class ci over the mode's repeats rs.
func mixClassOf(mode string, rs []*result.Record, ci int) mixClass {
	c := rs[0].Classes[ci]
	var valid, errs, responses, all, wsum int64
	h := load.NewHistogram()
	for _, r := range rs {
		if ci >= len(r.Classes) {
			continue
		}
		rc := r.Classes[ci]
		valid += rc.Requests
		for _, n := range rc.Errors {
			errs += n
		}
		for _, n := range rc.Statuses {
			responses += n
		}
		for _, oc := range r.Classes {
			for _, n := range oc.Statuses {
				all += n
			}
		}
		if rc.HistBase64 != "" {
			if hh, err := load.DecodeHist(rc.HistBase64); err == nil {
				h.Merge(hh)
			}
		}
	}
	for _, oc := range rs[0].Classes {
		wsum += int64(oc.Weight)
	}
	mc := mixClass{mode: mode, workload: c.Workload, weightPct: 100 * float64(c.Weight) / float64(wsum), sharePct: math.NaN(),
		expect: c.ExpectStatus, valid: valid, errors: errs, p50: math.NaN(), p99: math.NaN()}
	if all > 0 {
		mc.sharePct = 100 * float64(responses) / float64(all)
	}
	if h.TotalCount() > 0 {
		mc.p50, mc.p99 = float64(h.ValueAtQuantile(50)), float64(h.ValueAtQuantile(99))
	}
	return mc
}
