package stats

import (
	"testing"

	"wafbench/driver/result"
)

// TestComparePairs: a pair run --compare names is compared like the pairs
// the modes imply, in the family its engines decide; a pair the modes
// already imply is not compared twice.
func TestComparePairs(t *testing.T) {
	var recs []result.Record
	cpu := map[string]float64{"passthrough": 100, "modsecurity@3.0.14-pgo": 300, "coraza@3.7.0": 400, "coraza": 420}
	for rep := 1; rep <= 3; rep++ {
		for m, us := range cpu {
			r := result.Record{Case: result.Case{Trial: rep, Repeat: rep, Mode: m, Workload: "headers", Conns: 1, Load: "closed"},
				Window: result.Window{Requests: 1000, DurationS: 1, ReqPerS: 1000, ExpectStatus: 200, Statuses: map[string]int64{"200": 1000}}}
			r.Latency.P99Us = us
			r.CPU.UsPerRequest = us + float64(rep)
			recs = append(recs, r)
		}
	}
	pairs, err := ParsePairs("modsecurity@3.0.14-pgo/coraza@3.7.0,coraza@3.7.0/coraza")
	if err != nil {
		t.Fatal(err)
	}
	s := SummarizePairs(recs, pairs)
	got := map[string]Family{}
	n := 0
	for _, c := range s.Comparisons {
		if c.Metric == MetricCPU {
			got[c.Name()] = c.Family
			if c.Name() == "coraza@3.7.0/coraza" {
				n++
			}
		}
	}
	if f := got["modsecurity@3.0.14-pgo/coraza@3.7.0"]; f != FamilyEngines {
		t.Errorf("modsecurity@3.0.14-pgo/coraza@3.7.0 family %q, want %q (comparisons %v)", f, FamilyEngines, got)
	}
	if n != 1 {
		t.Errorf("coraza@3.7.0/coraza compared %d times on CPU, want once (the builds rule implies it)", n)
	}
	if _, err := ParsePairs("a/b,a/b"); err == nil {
		t.Error(`ParsePairs("a/b,a/b") accepted a pair listed twice`)
	}
}
