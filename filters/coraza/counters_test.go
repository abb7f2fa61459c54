package main

import "testing"

// TestCounterNames pins the counter names of the shared contract (the C++
// module defines the same suffixes).
func TestCounterNames(t *testing.T) {
	want := []string{"requests", "blocked_phase1", "blocked_phase2", "body_too_large", "engine_errors",
		"phase1_ns", "body_ns", "phase2_ns", "logging_ns"}
	for i, w := range want {
		if got := counterNames[i]; got != "wafbench_coraza_"+w {
			t.Errorf("counter %d: got %q, want %q", i, got, "wafbench_coraza_"+w)
		}
	}
	if counterNames[firstTimer] != "wafbench_coraza_phase1_ns" {
		t.Errorf("first timer: got %q", counterNames[firstTimer])
	}
}
