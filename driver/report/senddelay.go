package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"wafbench/driver/cpu"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// sendDelayRow is one open-loop case (mode × workload × requested rate)
// over its windows: medians over windows of the latency from the intended
// time, the latency from the actual write, the send delay's part of each
// percentile (their difference) and the client's own send delay, and how
// many windows were client-bound.
type sendDelayRow struct {
	Mode, Workload string
	Rate           float64
	Windows        int
	Latency        [3]float64 // p50, p90, p99 from the intended time, µs
	FromSend       [3]float64 // p50, p90, p99 from the actual write, µs
	Own            [3]float64 // the client's own send delay p50, p90, p99, µs
	OwnShareP99    float64    // median over windows of own p99 ÷ latency p99
	ClientBound    int        // windows whose own p99 exceeds result.ClientBoundShare of the latency p99
}

// sendDelayModel is the open-loop send-delay section's figures.
type sendDelayModel struct {
	Rows []sendDelayRow
	// Shared lists the CPUs the client shared with the upstream (empty
	// when it had its own); OwnAll the client's own send delay p50, p90,
	// p99 over every open-loop window (medians), what that sharing and the
	// pacer cost.
	Shared   []int
	ClientCP []int
	OwnAll   [3]float64
	Stops    []string // max-rate methods stopped by a client-bound rate
}

// buildSendDelay computes the section's model; nil when no record carries
// a send delay.
func buildSendDelay(meta *result.Meta, recs []result.Record) *sendDelayModel {
	type key struct {
		mode, wl string
		rate     float64
	}
	groups := map[key][]*result.Record{}
	var order []key
	var all [3][]float64
	for i := range recs {
		r := &recs[i]
		if r.Send == nil || r.Error != "" || r.Requests == 0 {
			continue
		}
		k := key{r.Mode, stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}.String(), r.RateRequestedPerS}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
		for j, v := range []float64{r.Send.Own.P50Us, r.Send.Own.P90Us, r.Send.Own.P99Us} {
			all[j] = append(all[j], v)
		}
	}
	if len(order) == 0 {
		return nil
	}
	m := &sendDelayModel{ClientCP: meta.ClientCPUs}
	for _, c := range meta.ClientCPUs {
		if slices.Contains(meta.UpstreamCPUs, c) {
			m.Shared = append(m.Shared, c)
		}
	}
	for j := range all {
		m.OwnAll[j] = medianOf64(all[j])
	}
	for _, k := range order {
		rs := groups[k]
		row := sendDelayRow{Mode: k.mode, Workload: k.wl, Rate: k.rate, Windows: len(rs)}
		var lat, from, own [3][]float64
		var share []float64
		for _, r := range rs {
			l := [3]float64{r.Latency.P50Us, r.Latency.P90Us, r.Latency.P99Us}
			fs := [3]float64{r.Send.FromSend.P50Us, r.Send.FromSend.P90Us, r.Send.FromSend.P99Us}
			o := [3]float64{r.Send.Own.P50Us, r.Send.Own.P90Us, r.Send.Own.P99Us}
			for j := range 3 {
				lat[j], from[j], own[j] = append(lat[j], l[j]), append(from[j], fs[j]), append(own[j], o[j])
			}
			if l[2] > 0 {
				share = append(share, o[2]/l[2])
			}
			if r.Send.ClientBound(r.Latency.P99Us) {
				row.ClientBound++
			}
		}
		for j := range 3 {
			row.Latency[j], row.FromSend[j], row.Own[j] = medianOf64(lat[j]), medianOf64(from[j]), medianOf64(own[j])
		}
		row.OwnShareP99 = medianOf64(share)
		m.Rows = append(m.Rows, row)
	}
	slices.SortStableFunc(m.Rows, func(a, b sendDelayRow) int {
		return cmp.Or(strings.Compare(a.Workload, b.Workload), strings.Compare(a.Mode, b.Mode), cmp.Compare(a.Rate, b.Rate))
	})
	for i := range recs {
		for _, x := range recs[i].MaxRate {
			if x.ClientBound > 0 {
				m.Stops = append(m.Stops, fmt.Sprintf("trial %d %s %s: %s stopped at %s req/s (client-bound), last pass %s req/s",
					recs[i].Trial, recs[i].Mode, stats.WorkloadKey{Workload: recs[i].Workload, Conns: recs[i].Conns}, x.Method, f(x.ClientBound, 0), f(x.Rate, 0)))
			}
		}
	}
	return m
}

// writeSendDelay writes the "Open-loop send delay" section: for each
// open-loop case, the latency percentiles from the intended time beside
// those from the actual write (the difference is what the send delay
// accounts for), the client's own send delay, and the client-bound
// windows; then where the client ran, and what that cost.
func writeSendDelay(m *md, fig *figures) {
	s := buildSendDelay(fig.Meta, fig.Records)
	if s == nil {
		return
	}
	m.p("## Open-loop send delay")
	m.nl()
	m.p("Open-loop latency runs from each request's intended send time (corrected for coordinated omission), so it holds the *send delay*, from the intended time to the actual write, besides the proxy's answer. "+
		"Part of the send delay is the proxy's (an arrival waits for its busy connection); the rest is the client's own (from the later of the intended time and the connection falling free, to the write: its pacer, its wait for a CPU). "+
		"Per case, medians over windows: latency from the intended time, from the actual write (what an uncorrected generator reports), the difference at each percentile (what the send delay accounts for), and the client's own send delay. "+
		"A window is *client-bound* when its client's own send-delay p99 exceeds %.0f%% of its latency p99; the max-rate search does not count a failing client-bound window as the proxy's failure (it stops raising the rate there). "+
		"Late sends count from half the mean inter-arrival time.", 100*result.ClientBoundShare)
	m.nl()
	m.head("workload", "mode", "rate req/s", "windows", "latency p50 / p90 / p99 µs", "from send p50 / p90 / p99 µs", "send delay's part p50 / p90 / p99 µs", "client's own p50 / p90 / p99 µs", "own p99 ÷ latency p99", "client-bound")
	for _, r := range s.Rows {
		var part [3]float64
		for j := range 3 {
			part[j] = math.Max(r.Latency[j]-r.FromSend[j], 0)
		}
		m.row(r.Workload, r.Mode, f(r.Rate, 0), itoa(r.Windows), triple(r.Latency), triple(r.FromSend), triple(part), triple(r.Own),
			f(r.OwnShareP99, 2), fmt.Sprintf("%d of %d", r.ClientBound, r.Windows))
	}
	m.nl()
	if len(s.Shared) > 0 {
		m.p("The client shared CPU %s with the upstream (the default on two CPUs: Envoy has the other). The client's own send delay over every open-loop window, median p50 %s µs, p90 %s µs, p99 %s µs, is what sharing it (and the pacer) cost.",
			cpu.Format(s.Shared), f(s.OwnAll[0], 0), f(s.OwnAll[1], 0), f(s.OwnAll[2], 0))
	} else {
		m.p("The client had CPU %s to itself. Its own send delay over every open-loop window, median p50 %s µs, p90 %s µs, p99 %s µs, is its pacer's and scheduling's cost.",
			cpu.Format(s.ClientCP), f(s.OwnAll[0], 0), f(s.OwnAll[1], 0), f(s.OwnAll[2], 0))
	}
	m.nl()
	if len(s.Stops) > 0 {
		m.p("Max-rate methods stopped by a client-bound rate (the proxy's limit lies above what this client measured):")
		m.nl()
		for _, x := range s.Stops {
			m.p("- %s", x)
		}
		m.nl()
	}
}

// triple is "a / b / c" with no decimals.
func triple(v [3]float64) string {
	return f(v[0], 0) + " / " + f(v[1], 0) + " / " + f(v[2], 0)
}
