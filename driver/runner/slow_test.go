//go:build integration

package runner

import (
	"context"
	"slices"
	"testing"
	"time"

	"wafbench/driver/modes"
)

// TestSlowSuite runs three of the slow suite's plans through the real stack
// (real Envoy, real modules, real CRS): an XSS head sent 4 bytes at a time
// and an SQL injection at the end of a body sent in 8-byte pieces are
// denied by every WAF mode and answered 200 by passthrough; the head sent
// a byte every 200 ms is ended by Envoy's request_headers_timeout (its
// counter moves once per connection, each answer a 408 no sooner than the
// timeout). Every record carries the host's timeouts and RSS readings.
func TestSlowSuite(t *testing.T) {
	all := []string{modes.Passthrough, modes.ModSecurity, modes.Coraza}
	cfg := setup(t, all, []string{"slow_head@4", "slow_body_pieces@4", "slow_head_timeout@4"}, 1, 0)
	cfg.TrialWarmup = 0
	recs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3*3 {
		t.Fatalf("%d records, want 9 (3 modes × 3 plans)", len(recs))
	}
	for _, r := range recs {
		s := r.Slow
		if s == nil || r.Error != "" {
			t.Fatalf("%s %s: slow outcome %v, error %q", r.Mode, r.Workload, s, r.Error)
		}
		var n int64
		for _, v := range s.Answers {
			n += v
		}
		if n != 4 || len(s.ElapsedMs) != 4 {
			t.Errorf("%s %s: %d answers, %d times, want 4 each", r.Mode, r.Workload, n, len(s.ElapsedMs))
		}
		if s.RSSBeforeKiB <= 0 || s.RSSHeldKiB <= 0 || len(s.Timeouts) != 3 {
			t.Errorf("%s %s: RSS %d/%d KiB, timeouts %v: want RSS read and Envoy's 3 timeouts", r.Mode, r.Workload, s.RSSBeforeKiB, s.RSSHeldKiB, s.Timeouts)
		}
		fired := map[string]int64{}
		for _, to := range s.Timeouts {
			fired[to.Name] = to.Fired
		}
		if modes.IsWAF(r.Mode) && s.Answers["200"] > 0 {
			t.Errorf("%s %s: slow attack answered 200 (answers %v)", r.Mode, r.Workload, s.Answers)
		}
		switch r.Workload {
		case "slow_head", "slow_body_pieces":
			want := "200"
			if modes.IsWAF(r.Mode) {
				want = "403"
			}
			if s.Answers[want] != 4 {
				t.Errorf("%s %s: answers %v, want 4 × %s", r.Mode, r.Workload, s.Answers, want)
			}
			if fired["request_headers_timeout"] != 0 || fired["stream_idle_timeout"] != 0 || fired["request_timeout"] != 0 {
				t.Errorf("%s %s: timeouts fired %v, want none", r.Mode, r.Workload, fired)
			}
		case "slow_head_timeout":
			after := 10 * time.Second
			for _, to := range s.Timeouts {
				if to.Name == "request_headers_timeout" {
					after = time.Duration(to.AfterS * float64(time.Second))
				}
			}
			if s.Answers["408"] != 4 || fired["request_headers_timeout"] != 4 {
				t.Errorf("%s %s: answers %v, timeouts fired %v: want 4 × 408 by request_headers_timeout", r.Mode, r.Workload, s.Answers, fired)
			}
			if first := slices.Min(s.ElapsedMs); first < ms(after)-50 {
				t.Errorf("%s %s: answered after %.0f ms, before the %v timeout", r.Mode, r.Workload, first, after)
			}
		}
		t.Logf("%s %s: answers %v, elapsed %v ms, RSS %d → %d KiB, fired %v", r.Mode, r.Workload, s.Answers, s.ElapsedMs, s.RSSBeforeKiB, s.RSSHeldKiB, fired)
	}
}
