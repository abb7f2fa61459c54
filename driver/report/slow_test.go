package report

import (
	"strings"
	"testing"

	"wafbench/driver/result"
)

// TestWriteSlow: each mode × plan row says how the attack was sent, what
// every connection got, which timeout ended it and the RSS held per
// connection; a WAF mode that answered an attack 200 is "bypassed", one
// that never did gets "no bypass", passthrough no verdict; a run without
// slow-client records has no section.
func TestWriteSlow(t *testing.T) {
	timeouts := func(header, idle int64) []result.SlowTimeout {
		return []result.SlowTimeout{{Name: "request_headers_timeout", AfterS: 10, Fired: header},
			{Name: "stream_idle_timeout", AfterS: 30, Fired: idle}, {Name: "request_timeout", AfterS: 60}}
	}
	recs := []result.Record{
		{
			Case:   result.Case{Mode: "coraza", Workload: "slow_head", Conns: 2},
			Window: result.Window{ExpectStatus: 403},
			Slow: &result.Slow{HeadChunk: 4, IntervalMs: 50, StopAfter: -1,
				Answers: map[string]int64{"403": 1, "200": 1}, ElapsedMs: []float64{1500, 1600}, RSSBeforeKiB: 1000, RSSHeldKiB: 1100, Timeouts: timeouts(0, 0)},
		},
		{
			Case:   result.Case{Mode: "modsecurity", Workload: "stalled_body", Conns: 4},
			Window: result.Window{ExpectStatus: 408},
			Slow: &result.Slow{BodyChunk: 4096, IntervalMs: 1, StopAfter: 16384, BodyBytes: 65536,
				Answers: map[string]int64{"408": 4}, ElapsedMs: []float64{30000, 30100, 30002, 30001}, RSSBeforeKiB: 1000, RSSHeldKiB: 1400, Timeouts: timeouts(0, 4)},
		},
		{
			Case:   result.Case{Mode: "modsecurity", Workload: "slow_head_timeout", Conns: 1},
			Window: result.Window{ExpectStatus: 408},
			Slow: &result.Slow{HeadChunk: 1, IntervalMs: 200, StopAfter: -1, MaxWaitS: 5,
				Answers: map[string]int64{"timeout": 1}, ElapsedMs: []float64{5000}, Timeouts: timeouts(0, 0)},
		},
		{
			Case:   result.Case{Mode: "passthrough", Workload: "slow_head", Conns: 2},
			Window: result.Window{ExpectStatus: 200},
			Slow: &result.Slow{HeadChunk: 4, IntervalMs: 50, StopAfter: -1,
				Answers: map[string]int64{"200": 2}, ElapsedMs: []float64{1500, 1500}, Timeouts: timeouts(0, 0)},
		},
		{Case: result.Case{Mode: "passthrough", Workload: "headers", Conns: 16}},
	}
	m := &md{}
	writeSlow(m, &figures{Records: recs})
	got := m.b.String()
	for _, want := range []string{
		"## Slow clients",
		"Client timeouts of the proxy in these trials: `request_headers_timeout` 10 s, `stream_idle_timeout` 30 s, `request_timeout` 60 s.",
		"| `passthrough` | `slow_head` | head 4 B / 50 ms | 2 | 2: 200×2 | 200 | – | 1.5 [1.5, 1.5] | – | no WAF |",
		"| `modsecurity` | `stalled_body` | body 16384 of 65536 B in 4096 B / 1 ms, then held | 4 | 4: 408×4 | 408 | `stream_idle_timeout` (30 s) ×4 | 30.0 [30.0, 30.1] | 100 | held |",
		"| `modsecurity` | `slow_head_timeout` | head 1 B / 200 ms | 1 | 1: timeout×1 | 408 | client bound (5 s) ×1 |",
		"| `coraza` | `slow_head` | head 4 B / 50 ms | 2 | 2: 200×1 403×1 | 403 | – | 1.6 [1.5, 1.6] | 50 | **BYPASS**: 1 answered 200 |",
		"- `modsecurity`: no bypass: none of 5 slow attack requests was answered 200.",
		"- `coraza`: **bypassed**: 1 of 2 slow attack requests answered 200.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "`headers`") || strings.Contains(got, "- `passthrough`") {
		t.Errorf("a load record or a passthrough verdict in the section:\n%s", got)
	}
	m = &md{}
	writeSlow(m, &figures{Records: recs[4:]})
	if m.b.Len() != 0 {
		t.Errorf("no slow records: want no section, got\n%s", m.b.String())
	}
}
