//go:build integration

package runner

import (
	"context"
	"testing"
	"time"

	"wafbench/driver/load"
	"wafbench/driver/modes"
)

// TestSoakSeries runs the soak suite's workloads through the real stack
// (real Envoy, real module, real CRS) with the over-time threshold and the
// latency slot scaled down (4-s windows, 1-s slots): the soak window's
// record carries Envoy's RSS, run-queue wait and the machine's steal once a
// second, its allocator statistics at both edges, its latencies by slot (every
// valid response in exactly one) and the attack stream's answers, none 200.
func TestSoakSeries(t *testing.T) {
	cfg := setup(t, []string{modes.ModSecurity}, []string{"soak_capacity@16", "soak@16"}, 1, 0)
	cfg.Duration, cfg.MaxRequests, cfg.Timeout = 4*time.Second, 0, 5*time.Second
	hooks := testHooks{seriesFrom: 3 * time.Second, slotEvery: time.Second}
	recs, err := runAll(context.Background(), &runner{Config: cfg, testHooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.LoadFraction == 0 { // soak_capacity
			continue
		}
		n++
		if len(r.RSSSeriesKiB) < 4 || len(r.WaitSeriesUs) != len(r.RSSSeriesKiB) || len(r.StealSeriesUs) != len(r.RSSSeriesKiB) {
			t.Errorf("%d RSS, %d wait, %d steal readings over 4 s, want ≥ 4 of each", len(r.RSSSeriesKiB), len(r.WaitSeriesUs), len(r.StealSeriesUs))
		}
		if r.AllocatorStart["allocated"] <= 0 || r.AllocatorEnd["heap_size"] <= 0 {
			t.Errorf("Envoy's allocator at the window's edges %v → %v: want its live allocations and heap", r.AllocatorStart, r.AllocatorEnd)
		}
		ls := r.LatencySlots
		if ls == nil || ls.EveryS != 1 || len(ls.HistBase64) != 4 {
			t.Fatalf("latency slots %+v: want 4 of 1 s", ls)
		}
		var total int64
		for i, s := range ls.HistBase64 {
			h, err := load.DecodeHist(s)
			if err != nil {
				t.Fatalf("slot %d: %v", i, err)
			}
			if h.TotalCount() == 0 {
				t.Errorf("slot %d: no responses at 75%% of capacity", i)
			}
			total += h.TotalCount()
		}
		if total != r.Requests {
			t.Errorf("slots hold %d responses, the window %d", total, r.Requests)
		}
		if r.Attacks["200"] > 0 || len(r.Attacks) == 0 {
			t.Errorf("attack answers %v: want some, none 200", r.Attacks)
		}
	}
	if n != 1 {
		t.Errorf("%d soak records, want 1", n)
	}
}
