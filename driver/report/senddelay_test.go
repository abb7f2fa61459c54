package report

import (
	"strings"
	"testing"

	"wafbench/driver/maxrate"
	"wafbench/driver/result"
)

// TestSendDelaySection: open-loop records with a send delay make one row
// per case, medians over its windows; the send delay's part of each
// percentile is latency less latency from the write; a window whose own
// p99 is over the share is counted client-bound; a client sharing the
// upstream's CPU is said so; closed-loop records make no row.
func TestSendDelaySection(t *testing.T) {
	open := func(repeat int, p50, p99, from50, from99, own99 float64) result.Record {
		return result.Record{
			Case: result.Case{Repeat: repeat, Mode: "passthrough", Workload: "headers", Conns: 16, Load: "open"},
			OpenLoop: result.OpenLoop{
				RateRequestedPerS: 15000,
				Send: &result.SendDelay{LagThresholdUs: 33.3,
					FromSend: result.Latency{P50Us: from50, P90Us: from50 * 2, P99Us: from99},
					Own:      result.Latency{P50Us: 20, P90Us: 50, P99Us: own99}},
			},
			Window: result.Window{
				Requests: 1000, Latency: result.Latency{P50Us: p50, P90Us: p50 * 2, P99Us: p99},
			},
		}
	}
	recs := []result.Record{
		open(1, 235, 1200, 170, 700, 551), // client-bound: 551 > 0.25 × 1200
		open(2, 240, 1000, 175, 900, 100),
		open(3, 230, 1100, 165, 800, 120),
		{Case: result.Case{Repeat: 1, Mode: "passthrough", Workload: "headers", Conns: 16, Load: "closed"}, Window: result.Window{Requests: 5000, Latency: result.Latency{P50Us: 400}}},
		{
			Case:     result.Case{Repeat: 1, Mode: "passthrough", Workload: "headers", Conns: 16, Load: "open"},
			OpenLoop: result.OpenLoop{RateRequestedPerS: 20000}, Window: result.Window{Requests: 10},
			MaxRate: []*maxrate.Result{{Method: "search", Rate: 12000, ClientBound: 24000}},
		},
	}
	meta := &result.Meta{ClientCPUs: []int{1}, UpstreamCPUs: []int{1}, EnvoyCPUs: []int{0}}
	s := buildSendDelay(meta, recs)
	if s == nil || len(s.Rows) != 1 {
		t.Fatalf("got %+v, want one row", s)
	}
	r := s.Rows[0]
	if r.Windows != 3 || r.Latency != [3]float64{235, 470, 1100} || r.FromSend != [3]float64{170, 340, 800} || r.Own[2] != 120 || r.ClientBound != 1 {
		t.Errorf("row %+v", r)
	}
	m := &md{}
	writeSendDelay(m, &figures{Meta: meta, Records: recs})
	out := m.b.String()
	for _, want := range []string{
		"## Open-loop send delay",
		"| headers/c16 | passthrough | 15000 | 3 | 235 / 470 / 1100 | 170 / 340 / 800 | 65 / 130 / 300 | 20 / 50 / 120 | 0.11 | 1 of 3 |",
		"shared CPU 1 with the upstream",
		"search stopped at 24000 req/s (client-bound), last pass 12000 req/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	if buildSendDelay(meta, recs[3:4]) != nil {
		t.Error("a closed-loop run got a send-delay section")
	}
}
