package runner

import (
	"strings"
	"testing"

	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// TestCaseRate: a rate-sweep point runs at its fraction of the closed-loop
// throughput measured earlier in the same mode and repeat, and fails
// (naming the missing case) when there is none.
func TestCaseRate(t *testing.T) {
	set, err := profile.Parse("c.yaml", []byte(`
workloads:
  - {name: h, method: GET, path: /, conns: [16], expect: {default: 200}}
  - {name: c, method: GET, path: /, conns: [16], capacity_from: h, sweep: {load: [50%, 110%]}, expect: {default: 200}}
  - {name: f, method: GET, path: /, conns: [16], capacity: 1000, sweep: {load: [25%]}, expect: {default: 200}}
`))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := set.Cases([]string{"h@16", "c@16", "f@16"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &runner{Config: &Config{Rate: 7}}
	tr := plan.Trial{Mode: "coraza", Repeat: 2}
	if r, _, err := caseRate(cfg, tr, cases[0]); r != 7 || err != nil {
		t.Errorf("closed-loop case: got rate %v err %v, want the run's --rate 7", r, err)
	}
	if _, _, err := caseRate(cfg, tr, cases[1]); err == nil || !strings.Contains(err.Error(), "h@16 was not measured in coraza repeat 2") {
		t.Errorf("no capacity: got %v", err)
	}
	noteCapacity(cfg, tr, cases[0], &result.Record{Case: result.Case{Load: "closed"}, Window: result.Window{ReqPerS: 2000}})
	noteCapacity(cfg, plan.Trial{Mode: "coraza", Repeat: 3}, cases[0], &result.Record{Case: result.Case{Load: "closed"}, Window: result.Window{ReqPerS: 9999}})
	tests := []struct {
		c           profile.Case
		rate, capac float64
	}{
		{cases[1], 1000, 2000},
		{cases[2], 2200, 2000},
		{cases[3], 250, 1000},
	}
	for _, tt := range tests {
		r, c, err := caseRate(cfg, tr, tt.c)
		if err != nil || r != tt.rate || c != tt.capac {
			t.Errorf("%s: got rate %v capacity %v err %v, want %v of %v", tt.c.Key(), r, c, err, tt.rate, tt.capac)
		}
	}
}
