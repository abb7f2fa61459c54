//go:build integration

package runner

import (
	"context"
	"testing"
	"time"

	"wafbench/driver/modes"
)

// TestOverloadAttackStream runs the overload suite's workloads through the
// real stack for short windows: capacity first, then open loop at 150% and
// 300% of it with the concurrent attack stream. Every record carries the
// stream's answers; no WAF mode answers an attack 200, passthrough does.
func TestOverloadAttackStream(t *testing.T) {
	cfg := setup(t, []string{modes.Passthrough, modes.ModSecurity, modes.Coraza}, []string{"overload_capacity@64", "overload@64"}, 1, 0)
	cfg.Duration, cfg.MaxRequests, cfg.Timeout = 2*time.Second, 0, 5*time.Second
	recs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.AttackWorkload == "" {
			continue
		}
		n++
		var total int64
		for _, v := range r.Attacks {
			total += v
		}
		if total == 0 {
			t.Errorf("%s %s: no attack answer recorded", r.Mode, r.Workload)
		}
		if modes.IsWAF(r.Mode) && r.Attacks["200"] > 0 {
			t.Errorf("%s %s: %d attacks answered 200 (answers %v)", r.Mode, r.Workload, r.Attacks["200"], r.Attacks)
		}
		if !modes.IsWAF(r.Mode) && r.Attacks["200"] == 0 {
			t.Errorf("%s %s: passthrough answers %v, want 200s", r.Mode, r.Workload, r.Attacks)
		}
		if r.CapacityPerS <= 0 || r.Memory.RSSEndKiB <= 0 {
			t.Errorf("%s %s: capacity %v, RSS %d KiB: want both measured", r.Mode, r.Workload, r.CapacityPerS, r.Memory.RSSEndKiB)
		}
	}
	if n != 3*2 {
		t.Errorf("%d attack-stream records, want 6 (3 modes × 2 loads)", n)
	}
}
