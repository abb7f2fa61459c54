package report

import (
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"wafbench/driver/load"
	"wafbench/driver/result"
)

// slots is 10-s latency slots over n·10 s: each slot holds 200 latencies
// around us(i) µs (±5%, varying from slot to slot), its 99th percentile
// about twice that.
func slots(t *testing.T, n int, us func(i int) int64) *result.LatencySlots {
	t.Helper()
	ls := &result.LatencySlots{EveryS: 10}
	for i := 0; i < n; i++ {
		h := hdrhistogram.New(1, 60_000_000, 2)
		base := us(i) * int64(95+(i*7)%11) / 100
		for k := 0; k < 200; k++ {
			v := base
			if k >= 196 {
				v = 2 * base
			}
			h.RecordValue(v)
		}
		s, err := load.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		ls.HistBase64 = append(ls.HistBase64, s)
	}
	return ls
}

// TestWriteSoak: a window whose RSS climbs 1 MiB a minute is "growing", a
// flat one has no slope established, a short window is left out, and a run
// without RSS series has no section. A window whose latency doubles over
// its last minute is "slower" on p50 and p99, a flat one shows no drift, a
// window under 2 min is not compared, and records without slots say so.
func TestWriteSoak(t *testing.T) {
	series := func(n int, kibPerS int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = 100<<10 + int64(i)*kibPerS + int64(i%2)*64 // ±64 KiB of noise
		}
		return out
	}
	per := int64(1024 / 60) // ≈ 1 MiB a minute, in KiB a second
	flat := func(int) int64 { return 1000 }
	recs := []result.Record{
		{Mode: "coraza", Workload: "soak", Repeat: 1, DurationS: 600, RSSSeriesKiB: series(601, per), Errors: map[string]int64{"timeout": 2, "status_503": 1},
			AttackWorkload: "blocked_sqli", Attacks: map[string]int64{"403": 3000},
			LatencySlots: slots(t, 60, func(i int) int64 { return 1000 + int64(max(i-53, 0))*1000/6 })},
		{Mode: "modsecurity", Workload: "soak", Repeat: 1, DurationS: 600, RSSSeriesKiB: series(601, 0),
			AttackWorkload: "blocked_sqli", Attacks: map[string]int64{"403": 2990, "200": 1}, LatencySlots: slots(t, 60, flat)},
		{Mode: "passthrough", Workload: "soak", Repeat: 1, DurationS: 90, RSSSeriesKiB: series(91, 0), LatencySlots: slots(t, 9, flat)},
		{Mode: "passthrough", Workload: "soak", Repeat: 2, RSSSeriesKiB: series(10, 0)},
	}
	m := &md{}
	writeSoak(m, &figures{Records: recs})
	got := m.b.String()
	for _, want := range []string{
		"## Soak: resident memory, errors and latency over the window",
		"| `modsecurity` | `soak` | 1 | 10.0 | 100.0 → 100.0 |",
		"| `coraza` | `soak` | 1 | 10.0 | 100.0 → 110.0 | 0.996 [",
		"| 3: status_503×1 timeout×2 | 3000: 403×3000 | **growing**: the interval excludes 0 |",
		"| 0 | 2991: 200×1 403×2990 (**1 answered 200**) | no slope established (the interval includes 0) |",
		"| `coraza` | `soak` | 1 | 6 / 6 | 1.00 → 1.56 | 1.563 [",
		"| p50 and p99: **slower** at the end |",
		"| `modsecurity` | `soak` | 1 | 6 / 6 | 1.00 → 1.00 | 1.003 [",
		"| p50 and p99: no drift established |",
		"| `passthrough` | `soak` | 1 | – | – | – | – | – | window 90 s: the first and last minute overlap |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "| `passthrough` | `soak` | 2 |") {
		t.Errorf("a 10-second series was fitted:\n%s", got)
	}
	m = &md{}
	writeSoak(m, &figures{Records: []result.Record{{Mode: "coraza", Workload: "soak", RSSSeriesKiB: series(61, 0)}}})
	if !strings.Contains(m.b.String(), "not in these records") {
		t.Errorf("no slots: want the section to say drift is not recorded, got\n%s", m.b.String())
	}
	m = &md{}
	writeSoak(m, &figures{Records: []result.Record{{Mode: "coraza", Workload: "headers"}}})
	if m.b.Len() != 0 {
		t.Errorf("no RSS series: want no section, got\n%s", m.b.String())
	}
}
