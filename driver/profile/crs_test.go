//go:build integration

package profile_test

import (
	"context"
	"path/filepath"
	"testing"

	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/replay"
)

// TestCRSCandidatesThroughCRS sends every CRS regression-suite test a crs
// replay may select (replay.CRSCandidates: any seed draws from these),
// once each, through the real Envoy in passthrough and with each WAF
// module over the shared CRS 4.25 configuration at paranoia level 1 in
// blocking mode, and requires the status a crs replay expects: 403 from
// each WAF, 200 without one. A test whose real verdict differs belongs
// under an exclusion rule of driver/replay/crs.go, not in a list.
func TestCRSCandidatesThroughCRS(t *testing.T) {
	ms := []string{modes.Passthrough, modes.ModSecurity, modes.Coraza}
	sess, root := realStack(t, ms...)
	set, err := profile.LoadDir(filepath.Join(root, "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	w := set.Workloads["crs_attacks"]
	if w == nil || w.Replay == nil || w.Replay.Format != replay.CRS {
		t.Fatal("profiles/realistic.yaml: want the crs replay workload crs_attacks")
	}
	c, err := replay.CRSCandidates()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Entries) < w.Replay.Select.Count {
		t.Fatalf("%d eligible tests, fewer than crs_attacks selects (%d)", len(c.Entries), w.Replay.Select.Count)
	}
	for _, mode := range ms {
		h, err := sess.Start(context.Background(), mode, "crs-"+mode)
		if err != nil {
			t.Fatal(err)
		}
		wrong := 0
		for _, e := range c.Entries {
			r := load.Build(e.Method, e.Target, e.Headers, e.Body, e.Host)
			r.Name = e.Name
			r.ExpectStatus = w.Expected(mode)
			if res := send(t, h.Addr, r, 1); res.Requests != 1 {
				wrong++
				t.Errorf("%s %s %s %s: want %d, got statuses %v, errors %v", mode, e.Name, e.Method, e.Target, r.ExpectStatus, res.Statuses, res.Errors)
			}
		}
		t.Logf("%s: %d of %d eligible CRS tests answered %d", mode, len(c.Entries)-wrong, len(c.Entries), w.Expected(mode))
		h.Stop()
	}
}
