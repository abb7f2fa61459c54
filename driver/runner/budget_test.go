package runner

import (
	"context"
	"testing"
	"time"

	"wafbench/driver/plan"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// budgetRecs are n repeats of passthrough and coraza on headers@16 whose
// req/s ratio is 0.5 with the given per-repeat relative spread.
func budgetRecs(n int, spread float64) []result.Record {
	var out []result.Record
	for r := 1; r <= n; r++ {
		sign := float64(r%2*2 - 1)
		for _, m := range []struct {
			mode string
			v    float64
		}{{"passthrough", 1000}, {"coraza", 500 * (1 + sign*spread)}} {
			out = append(out, result.Record{
				Case:   result.Case{Trial: len(out) + 1, Repeat: r, Mode: m.mode, Workload: "headers", Conns: 16},
				Window: result.Window{ReqPerS: m.v, Requests: int64(m.v * 4), DurationS: 4},
				CPU:    result.CPU{UsPerRequest: 1e6 / m.v},
			})
		}
	}
	return out
}

func TestBudgetExtend(t *testing.T) {
	target := []stats.Target{{Num: "coraza", Den: "passthrough", Metric: stats.MetricReqPerS, WorkloadKey: stats.WorkloadKey{Workload: "headers", Conns: 16}}}
	popts := plan.Options{Modes: []string{"passthrough", "coraza"}, Cases: 1, Repeats: 4, Order: plan.Latin, Seed: 1, Scope: plan.PerModeRepeat}
	tests := []struct {
		name      string
		spread    float64
		limit     time.Duration
		wantAdded bool
		wantStop  string
	}{
		{"met", 0.001, time.Hour, false, stopMet},
		{"wide, time left", 0.10, time.Hour, true, ""},
		{"wide, budget spent", 0.10, time.Nanosecond, false, stopBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trials, err := plan.Build(popts)
			if err != nil {
				t.Fatal(err)
			}
			b := &Budget{Targets: target, TargetPct: 3, Limit: tt.limit, Start: time.Now(), Plan: popts}
			cfg := &Config{Trials: trials, Budget: b}
			got := cfg.extend(context.Background(), budgetRecs(4, tt.spread))
			if got != tt.wantAdded || b.Stop != tt.wantStop {
				t.Fatalf("extend = %v, stop %q; want %v, %q (status %+v)", got, b.Stop, tt.wantAdded, tt.wantStop, b.Status)
			}
			if !got {
				return
			}
			// One whole block in the design's next rotation, indexes continuing.
			all, _ := plan.Build(plan.Options{Modes: popts.Modes, Cases: 1, Repeats: 5, Order: plan.Latin, Seed: 1, Scope: plan.PerModeRepeat})
			if len(cfg.Trials) != len(all) || b.Added != 1 || b.Plan.Repeats != 5 {
				t.Fatalf("%d trials after extend, want %d; added %d, repeats %d", len(cfg.Trials), len(all), b.Added, b.Plan.Repeats)
			}
			for i, tr := range cfg.Trials {
				if tr.Index != all[i].Index || tr.Mode != all[i].Mode || tr.Repeat != all[i].Repeat {
					t.Errorf("trial %d = %+v, want %+v", i, tr, all[i])
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := &Budget{Targets: target, TargetPct: 3, Limit: time.Hour, Start: time.Now(), Plan: popts}
	if (&Config{Budget: b}).extend(ctx, budgetRecs(4, 0.1)) || b.Stop != stopInterrupted {
		t.Errorf("interrupted: stop %q, want %q", b.Stop, stopInterrupted)
	}
}
