package report

import (
	"strings"
	"testing"

	"wafbench/driver/result"
)

// TestWriteSoak: a window whose RSS climbs 1 MiB a minute is "growing", a
// flat one has no slope established, a short window is left out, and a run
// without RSS series has no section.
func TestWriteSoak(t *testing.T) {
	series := func(n int, kibPerS int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = 100<<10 + int64(i)*kibPerS + int64(i%2)*64 // ±64 KiB of noise
		}
		return out
	}
	per := int64(1024 / 60) // ≈ 1 MiB a minute, in KiB a second
	recs := []result.Record{
		{Mode: "coraza", Workload: "soak", Repeat: 1, RSSSeriesKiB: series(601, per), Errors: map[string]int64{"timeout": 2}},
		{Mode: "modsecurity", Workload: "soak", Repeat: 1, RSSSeriesKiB: series(601, 0)},
		{Mode: "passthrough", Workload: "soak", Repeat: 1, RSSSeriesKiB: series(10, 0)},
	}
	m := &md{}
	writeSoak(m, &figures{Records: recs})
	got := m.b.String()
	for _, want := range []string{
		"## Soak: resident memory over the window",
		"| `modsecurity` | `soak` | 1 | 10.0 | 100.0 → 100.0 |",
		"| `coraza` | `soak` | 1 | 10.0 | 100.0 → 110.0 | 0.996 [",
		"| 2 | **growing**: the interval excludes 0 |",
		"| 0 | no slope established (the interval includes 0) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "`passthrough`") {
		t.Errorf("a 10-second series was fitted:\n%s", got)
	}
	m = &md{}
	writeSoak(m, &figures{Records: []result.Record{{Mode: "coraza", Workload: "headers"}}})
	if m.b.Len() != 0 {
		t.Errorf("no RSS series: want no section, got\n%s", m.b.String())
	}
}
