//go:build integration

package runner

import (
	"context"
	"testing"

	"wafbench/driver/modes"
)

// TestGateWorkloads runs the gates suite's own workloads through the real
// stack, capped at a few requests: the pathological-regex input is denied
// by both engines and passed by passthrough, and the 16 KiB soak records
// RSS for its gate.
func TestGateWorkloads(t *testing.T) {
	cfg := setup(t, []string{modes.Passthrough, modes.ModSecurity, modes.Coraza}, []string{"gate_regex@1", "gate_soak_16k@4"}, 1, 4)
	recs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	for _, r := range recs {
		checkRecord(t, r, 4)
		if r.Workload == "gate_regex" && modes.IsWAF(r.Mode) != (r.ExpectStatus == 403) {
			t.Errorf("%s gate_regex: expect %d", r.Mode, r.ExpectStatus)
		}
		if r.Memory.RSSEndKiB == 0 || r.CPU.UsPerRequest == 0 {
			t.Errorf("%s %s: RSS %d KiB, CPU %v µs/req: want both measured", r.Mode, r.Workload, r.Memory.RSSEndKiB, r.CPU.UsPerRequest)
		}
	}
}
