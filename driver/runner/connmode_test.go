//go:build integration

package runner

import (
	"context"
	"path/filepath"
	"testing"

	"wafbench/driver/load"
)

// TestRunConnMode runs passthrough with one connection in both connection
// modes and counts Envoy's downstream connections: one for the whole
// window with keep-alive, one per request with per-request (no warmup, so
// Envoy sees only the capped window). The record says which mode ran.
func TestRunConnMode(t *testing.T) {
	const n = 200
	for _, tc := range []struct {
		mode      load.ConnMode
		wantConns int64
		wantField string
	}{
		{load.ConnKeepAlive, 1, ""},
		{load.ConnPerRequest, n, "per-request"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			cfg := setup(t, []string{"passthrough"}, []string{"headers@1"}, 1, n)
			cfg.ConnMode = string(tc.mode)
			recs, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			r := recs[0]
			checkRecord(t, r, n)
			if r.ConnMode != tc.wantField {
				t.Errorf("record conn_mode %q, want %q", r.ConnMode, tc.wantField)
			}
			st := envoyStats(t, filepath.Join(cfg.Dir, r.StatsFile))
			if got := st["http.ingress.downstream_cx_total"]; got != tc.wantConns {
				t.Errorf("Envoy downstream connections: got %d for %d requests, want %d", got, n, tc.wantConns)
			}
			if got := st["http.ingress.downstream_rq_total"]; got != n {
				t.Errorf("Envoy downstream requests: got %d, want %d", got, n)
			}
		})
	}
}
