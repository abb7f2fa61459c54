package report

import (
	"sort"
	"strconv"

	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// writeMix writes the "Weighted mixes" section: for each mix workload@conns
// the trial's throughput and Envoy CPU per request (over every class; the
// CPU of one process cannot be split by class) per mode, as medians over
// repeats, the CPU against passthrough's, then each class's share of the
// responses, validity against its own expected status, and latency
// percentiles from its histograms merged over repeats.
func writeMix(m *md, fig *figures) {
	recs := fig.Records
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
	if len(order) == 0 {
		return
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].workload != order[j].workload {
			return order[i].workload < order[j].workload
		}
		return order[i].conns < order[j].conns
	})
	m.p("## Weighted mixes")
	m.nl()
	m.p("Each trial of a mix sends its classes interleaved at their weights, and judges every response by its own class's expected status. CPU is Envoy's over the whole window divided by the valid responses of every class (medians over repeats); latency is per class, from the class's histograms merged over repeats.")
	m.nl()
	for _, k := range order {
		byMode := byMix[k]
		m.p("### %s@%d", k.workload, k.conns)
		m.nl()
		base := medianOf(byMode[modes.Passthrough], func(r *result.Record) float64 { return r.CPU.UsPerRequest })
		m.head("mode", "repeats", "req/s", "Envoy CPU µs/req", "CPU ÷ passthrough", "errors")
		for _, mode := range modeOrder {
			rs := byMode[mode]
			if len(rs) == 0 {
				continue
			}
			cpu := medianOf(rs, func(r *result.Record) float64 { return r.CPU.UsPerRequest })
			ratio := noValue
			if base > 0 && mode != modes.Passthrough {
				ratio = f(cpu/base, 2) + "×"
			}
			var errs int64
			for _, r := range rs {
				for _, n := range r.Errors {
					errs += n
				}
			}
			m.row(mode, itoa(len(rs)), f(medianOf(rs, func(r *result.Record) float64 { return r.ReqPerS }), 0), f(cpu, 1), ratio, strconv.FormatInt(errs, 10))
		}
		m.nl()
		m.head("mode", "class", "weight", "share of responses", "expect", "valid", "errors", "p50 µs", "p99 µs")
		for _, mode := range modeOrder {
			rs := byMode[mode]
			if len(rs) == 0 {
				continue
			}
			for ci, c := range rs[0].Classes {
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
				share := noValue
				if all > 0 {
					share = f(100*float64(responses)/float64(all), 1) + "%"
				}
				p50, p99 := "–", "–"
				if h.TotalCount() > 0 {
					p50, p99 = f(float64(h.ValueAtQuantile(50)), 0), f(float64(h.ValueAtQuantile(99)), 0)
				}
				m.row(mode, c.Workload, f(100*float64(c.Weight)/float64(wsum), 1)+"%", share, itoa(c.ExpectStatus),
					strconv.FormatInt(valid, 10), strconv.FormatInt(errs, 10), p50, p99)
			}
		}
		m.nl()
	}
}
