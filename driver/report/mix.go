package report

import (
	"math"
	"strconv"
)

// writeMix writes the "Weighted mixes" section: for each mix workload@conns
// the trial's throughput and Envoy CPU per request (over every class; the
// CPU of one process cannot be split by class) per mode, as medians over
// repeats, the CPU against passthrough's, then each class's share of the
// responses, validity against its own expected status, and latency
// percentiles from its histograms merged over repeats.
func writeMix(m *md, fig *figures) {
	mixes := buildMixes(fig.Records)
	if len(mixes) == 0 {
		return
	}
	m.p("## Weighted mixes")
	m.nl()
	m.p("Each trial of a mix sends its classes interleaved at their weights, and judges every response by its own class's expected status. CPU is Envoy's over the whole window divided by the valid responses of every class (medians over repeats); latency is per class, from the class's histograms merged over repeats.")
	m.nl()
	for _, mx := range mixes {
		m.p("### %s@%d", mx.workload, mx.conns)
		m.nl()
		m.head("mode", "repeats", "req/s", "Envoy CPU µs/req", "CPU ÷ passthrough", "errors")
		for _, mm := range mx.modes {
			ratio := noValue
			if mm.hasRatio {
				ratio = f(mm.ratio, 2) + "×"
			}
			m.row(mm.mode, itoa(mm.repeats), f(mm.reqPerS, 0), f(mm.cpu, 1), ratio, strconv.FormatInt(mm.errors, 10))
		}
		m.nl()
		m.head("mode", "class", "weight", "share of responses", "expect", "valid", "errors", "p50 µs", "p99 µs")
		for _, c := range mx.classes {
			share := noValue
			if !math.IsNaN(c.sharePct) {
				share = f(c.sharePct, 1) + "%"
			}
			m.row(c.mode, c.workload, f(c.weightPct, 1)+"%", share, itoa(c.expect),
				strconv.FormatInt(c.valid, 10), strconv.FormatInt(c.errors, 10), f(c.p50, 0), f(c.p99, 0))
		}
		m.nl()
	}
}
