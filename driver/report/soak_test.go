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

// TestWriteSoak: a window whose RSS climbs 1 MiB a minute is "growing", in
// its second half too, one that grows by pages for five minutes then stays
// is growing over the window only, a flat one has no slope established, a short window is left out, and a run
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
	// early grows a page at a time for its first five minutes, then stays.
	early := series(601, 0)
	for i := range early {
		early[i] += 4 * int64(min(i, 300)/20)
	}
	flat := func(int) int64 { return 1000 }
	recs := []result.Record{
		{
			Case:   result.Case{Mode: "coraza", Workload: "soak", Repeat: 1},
			Window: result.Window{DurationS: 600, Errors: map[string]int64{"timeout": 2, "status_503": 1}},
			Soak: result.Soak{
				RSSSeriesKiB: series(601, per),
				LatencySlots: slots(t, 60, func(i int) int64 { return 1000 + int64(max(i-53, 0))*1000/6 }),
			},
			AttackStream: result.AttackStream{
				AttackWorkload: "blocked_sqli", Attacks: map[string]int64{"403": 3000},
			},
		},
		{
			Case:   result.Case{Mode: "modsecurity", Workload: "soak", Repeat: 1},
			Window: result.Window{DurationS: 600},
			Soak:   result.Soak{RSSSeriesKiB: series(601, 0), LatencySlots: slots(t, 60, flat)},
			AttackStream: result.AttackStream{
				AttackWorkload: "blocked_sqli", Attacks: map[string]int64{"403": 2990, "200": 1},
			},
		},
		{Case: result.Case{Mode: "passthrough", Workload: "soak", Repeat: 1}, Window: result.Window{DurationS: 90}, Soak: result.Soak{RSSSeriesKiB: series(91, 0), LatencySlots: slots(t, 9, flat)}},
		{Case: result.Case{Mode: "passthrough", Workload: "soak", Repeat: 2}, Soak: result.Soak{RSSSeriesKiB: series(10, 0)}},
		{Case: result.Case{Mode: "passthrough", Workload: "soak", Repeat: 3}, Window: result.Window{DurationS: 600}, Soak: result.Soak{RSSSeriesKiB: early}},
	}
	m := &md{}
	writeSoak(m, &figures{Records: recs})
	got := m.b.String()
	for _, want := range []string{
		"## Soak: resident memory, errors and latency over the window",
		"| `modsecurity` | `soak` | 1 | 10.0 | 100.0 → 100.0 |",
		"| `coraza` | `soak` | 1 | 10.0 | 100.0 → 110.0 | 0.996 [",
		"| 3: status_503×1 timeout×2 | 3000: 403×3000 | **growing**: the interval excludes 0, in the second half too |",
		"| 0 | 2991: 200×1 403×2990 (**1 answered 200**) | no slope established (the interval includes 0) |",
		"| `coraza` | `soak` | 1 | 6 / 6 | 1.00 → 1.56 | 1.563 [",
		"| p50 and p99: **slower** at the end |",
		"| `modsecurity` | `soak` | 1 | 6 / 6 | 1.00 → 1.00 | 1.003 [",
		"| p50 and p99: no drift established |",
		"| `passthrough` | `soak` | 3 | 10.0 | 100.0 → 100.1 |",
		"| **growing** over the window, no slope established in its second half |",
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
	writeSoak(m, &figures{Records: []result.Record{{Case: result.Case{Mode: "coraza", Workload: "soak"}, Soak: result.Soak{RSSSeriesKiB: series(61, 0)}}}})
	if !strings.Contains(m.b.String(), "not in these records") {
		t.Errorf("no slots: want the section to say drift is not recorded, got\n%s", m.b.String())
	}
	m = &md{}
	writeSoak(m, &figures{Records: []result.Record{{Case: result.Case{Mode: "coraza", Workload: "headers"}}}})
	if m.b.Len() != 0 {
		t.Errorf("no RSS series: want no section, got\n%s", m.b.String())
	}
}

// TestWriteCPUDrift: a proxy whose CPU per request rises by half over a
// 10-minute window (1000 responses a second, CPU read once a second) is
// "costlier" at the end, a flat one shows no drift, and a window without
// CPU readings (records before they were kept) has no row.
func TestWriteCPUDrift(t *testing.T) {
	window := func(usPerReq func(s int) float64) ([]int64, []int64) {
		perSecond := make([]int64, 600)
		cpu := make([]int64, 601)
		for s := range perSecond {
			perSecond[s] = 1000
			noise := 1 + 0.02*float64((s*7)%5-2) // ±4%
			cpu[s+1] = cpu[s] + int64(usPerReq(s)*noise*1000)
		}
		return perSecond, cpu
	}
	rising := func(s int) float64 { return 100 + 50*float64(s)/600 }
	flat := func(int) float64 { return 100 }
	ps1, cpu1 := window(rising)
	ps2, cpu2 := window(flat)
	recs := []result.Record{
		{Case: result.Case{Mode: "modsecurity", Workload: "soak", Repeat: 1}, Window: result.Window{DurationS: 600, PerSecond: ps1}, Soak: result.Soak{RSSSeriesKiB: make([]int64, 601), CPUSeriesUs: cpu1}},
		{Case: result.Case{Mode: "coraza", Workload: "soak", Repeat: 1}, Window: result.Window{DurationS: 600, PerSecond: ps2}, Soak: result.Soak{RSSSeriesKiB: make([]int64, 601), CPUSeriesUs: cpu2}},
		{Case: result.Case{Mode: "passthrough", Workload: "soak", Repeat: 1}, Window: result.Window{DurationS: 600, PerSecond: ps2}, Soak: result.Soak{RSSSeriesKiB: make([]int64, 601)}},
	}
	m := &md{}
	writeCPUDrift(m, []*result.Record{&recs[0], &recs[1], &recs[2]})
	checkSoakSection(t, m.b.String(), "`passthrough`",
		"**CPU per request drift, first minute → last minute.**",
		"| `modsecurity` | `soak` | 1 | 6 / 6 | 102.4 → 147.5 | 1.439 [",
		"| **costlier** at the end |",
		"| `coraza` | `soak` | 1 | 6 / 6 | 100.0 → 100.0 | 1.000 [",
		"| no drift established |")
}

// checkSoakSection fails t unless got holds every want and not absent
// (the mode of a window the section must leave out).
func checkSoakSection(t *testing.T, got, absent string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, absent) {
		t.Errorf("a window without the figures has a row (%s):\n%s", absent, got)
	}
}

// TestWriteWaitDrift: a window whose run-queue wait and steal grow in its
// last minute shows both, per request and per second; a window without
// the series (records before they were kept) has no row.
func TestWriteWaitDrift(t *testing.T) {
	perSecond := make([]int64, 600)
	wait, steal := make([]int64, 601), make([]int64, 601)
	for s := range perSecond {
		perSecond[s] = 1000
		w, st := int64(2000), int64(0) // 2 µs a request, no steal
		if s >= 540 {
			w, st = 50000, 30000 // 50 µs a request, 30 ms/s of steal
		}
		wait[s+1], steal[s+1] = wait[s]+w, steal[s]+st
	}
	recs := []result.Record{
		{Case: result.Case{Mode: "modsecurity", Workload: "soak", Repeat: 1}, Window: result.Window{DurationS: 600, PerSecond: perSecond},
			Soak: result.Soak{RSSSeriesKiB: make([]int64, 601), WaitSeriesUs: wait, StealSeriesUs: steal}},
		{Case: result.Case{Mode: "coraza", Workload: "soak", Repeat: 1}, Window: result.Window{DurationS: 600, PerSecond: perSecond},
			Soak: result.Soak{RSSSeriesKiB: make([]int64, 601)}},
	}
	m := &md{}
	writeWaitDrift(m, []*result.Record{&recs[0], &recs[1]})
	checkSoakSection(t, m.b.String(), "`coraza`",
		"**What else took the CPU, first minute → last minute.**",
		"| `modsecurity` | `soak` | 1 | 2.0 → 50.0 (50.0) | 0.0 → 30.0 (30.0) |")
}

// TestWriteAllocator: a window with allocator statistics at both edges
// shows them in MiB; one without has no row.
func TestWriteAllocator(t *testing.T) {
	recs := []result.Record{
		{Case: result.Case{Mode: "modsecurity", Workload: "soak", Repeat: 1}, Soak: result.Soak{
			AllocatorStart: map[string]int64{"allocated": 10 << 20, "heap_size": 16 << 20, "pageheap_free": 1 << 20, "pageheap_unmapped": 0, "total_thread_cache": 2 << 20},
			AllocatorEnd:   map[string]int64{"allocated": 11 << 20, "heap_size": 24 << 20, "pageheap_free": 3 << 20, "pageheap_unmapped": 1 << 20, "total_thread_cache": 2 << 20}}},
		{Case: result.Case{Mode: "ref-nginx-modsecurity", Workload: "soak", Repeat: 1}},
	}
	m := &md{}
	writeAllocator(m, []*result.Record{&recs[0], &recs[1]})
	checkSoakSection(t, m.b.String(), "ref-nginx",
		"| `modsecurity` | `soak` | 1 | 10.0 → 11.0 | 16.0 → 24.0 | 1.0 → 3.0 | 0.0 → 1.0 | 2.0 → 2.0 |")
}
