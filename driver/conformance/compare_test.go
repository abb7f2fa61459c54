package conformance

import (
	"strings"
	"testing"
)

// TestCompareRuns: a test whose outcome or override changed is listed, a
// test that only saw other statuses or IDs is counted, a test one run did
// not reach is a change, and modes or tests only one run holds are left
// out of the comparison.
func TestCompareRuns(t *testing.T) {
	stage := func(status int, ids ...uint) []stageResult { return []stageResult{{Status: status, IDs: ids}} }
	was := &run{Modes: []modeResult{
		{Mode: "coraza-wasm", Tests: []testResult{
			{ID: "920100-4", Outcome: overridden, Override: "envoy-connect-held", Stages: stage(0)},
			{ID: "920390-1", Outcome: passed, Stages: stage(504, 920390, 950100)},
			{ID: "942100-1", Outcome: passed, Stages: stage(200, 942100)},
			{ID: "942100-2", Outcome: passed, Stages: stage(200, 942100)},
			{ID: "944100-1", Outcome: passed, Stages: stage(200, 944100)},
		}},
		{Mode: "coraza", Tests: []testResult{{ID: "942100-1", Outcome: passed}}},
	}}
	now := &run{Modes: []modeResult{
		{Mode: "coraza-wasm", Tests: []testResult{
			{ID: "920100-4", Outcome: overridden, Override: "envoy-connect-held", Stages: stage(0)},
			{ID: "920390-1", Outcome: passed, Stages: stage(200, 920390)},
			{ID: "942100-1", Outcome: overridden, Override: "other", Stages: stage(200)},
			{ID: "942100-2", Outcome: notRun},
		}},
		{Mode: "modsecurity", Tests: []testResult{{ID: "942100-1", Outcome: passed}}},
	}}
	c := compareRuns(was, now)
	if len(c.Modes) != 1 || c.Modes[0] != "coraza-wasm" || c.Tests != 4 || c.Observed != 1 {
		t.Errorf("modes %v, tests %d, observed %d; want [coraza-wasm], 4, 1", c.Modes, c.Tests, c.Observed)
	}
	if got := strings.Join(c.Only, ","); got != "modsecurity,coraza" {
		t.Errorf("only %q, want modsecurity,coraza", got)
	}
	want := []outcomeChange{
		{Mode: "coraza-wasm", Test: "942100-1", Was: "passed", Now: "overridden (other)"},
		{Mode: "coraza-wasm", Test: "942100-2", Was: "passed", Now: notRun},
	}
	if len(c.Changes) != len(want) {
		t.Fatalf("changes %+v, want %+v", c.Changes, want)
	}
	for i := range want {
		if c.Changes[i] != want[i] {
			t.Errorf("change %d: got %+v, want %+v", i, c.Changes[i], want[i])
		}
	}
}

// TestMarkdownTimes: a run recorded with stage times says where its time
// went and lists its slowest tests, slowest first; a run recorded before
// them renders without either section.
func TestMarkdownTimes(t *testing.T) {
	tests := []testResult{
		{ID: "942100-1", Outcome: passed, Stages: []stageResult{{Status: 200, Seconds: 0.02, HostCPU: 0.02, MarkerSeconds: 0.004}}},
		{ID: "920100-4", Outcome: overridden, Override: "envoy-connect-held",
			Stages: []stageResult{{Error: "host idle: no answer within 2s", Seconds: 2, MarkerSeconds: 0.004}}},
		{ID: "920390-1", Outcome: passed, Stages: []stageResult{{Status: 200, Seconds: 4.1, HostCPU: 4, MarkerSeconds: 0.005}}},
	}
	r := &run{Modes: []modeResult{{Mode: "coraza-wasm", WallSeconds: 40, StartSeconds: 30, HostCPU: 35, Tests: tests}}}
	md := r.Markdown()
	for _, want := range []string{
		"| coraza-wasm | 40 s | 35.0 s | 30.0 s | 6.1 s (4.0 s) | 1 (2.0 s) | 0.0 s | 3.9 s |",
		"| coraza-wasm | 920390-1 | 4.10 s (4.00 s) | 0.01 s | 200 | passed |",
		"| coraza-wasm | 920100-4 | 2.00 s (0.00 s) | 0.00 s | none: host idle: no answer within 2s | overridden (envoy-connect-held) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("crs-test.md lacks %q:\n%s", want, md)
		}
	}
	if i, j := strings.Index(md, "| 920390-1 |"), strings.Index(md, "| 942100-1 |"); i < 0 || j < i {
		t.Errorf("slowest tests not slowest first:\n%s", md)
	}
	r.Modes[0].StartSeconds = 0
	for i := range r.Modes[0].Tests {
		for j := range r.Modes[0].Tests[i].Stages {
			s := &r.Modes[0].Tests[i].Stages[j]
			s.Seconds, s.HostCPU, s.MarkerSeconds = 0, 0, 0
		}
	}
	if md := r.Markdown(); strings.Contains(md, "Where the time went") || strings.Contains(md, "Slowest tests") {
		t.Errorf("a run without stage times got time sections:\n%s", md)
	}
}
