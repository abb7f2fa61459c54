package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrowthBadInput: a sweep with an empty or non-increasing range, a
// rate sweep without a capacity figure and an SLO ≤ 0 are bad input: one
// line naming it, exit status 2, no run directory.
func TestGrowthBadInput(t *testing.T) {
	profiles := func(body string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "g.yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const head = "workloads:\n- {name: h, method: GET, path: /, conns: [16], expect: {default: 200}}\n"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"slo zero", []string{"run", "--slo", "0s"}, "--slo: want a latency > 0"},
		{"slo negative", []string{"run", "--slo", "-1ms"}, "--slo: want a latency > 0"},
		{"rate sweep without capacity", []string{"run", "--suite", "growth", "--workloads", "headers_curve@16"},
			"workload headers_curve@load=10%@16: rate sweep without a capacity figure: its capacity_from headers_conns@16 must run earlier"},
		{"load sweep without capacity figure", []string{"run", "--profiles", profiles(head +
			"- {name: c, method: GET, path: /, conns: [16], sweep: {load: [10%, 50%]}, expect: {default: 200}}\n")},
			"workload c: sweep load: range [10%, 50%] needs a capacity figure"},
		{"empty range", []string{"run", "--profiles", profiles(head +
			"- {name: j, method: POST, path: /, conns: [1], body: {shape: json_real}, sweep: {body.size: []}, expect: {default: 200}}\n")},
			"workload j: sweep body.size: range [] is empty"},
		{"non-monotonic range", []string{"run", "--profiles", profiles(head +
			"- {name: f, method: POST, path: /, conns: [1], body: {shape: form}, sweep: {args: [1, 100, 10]}, expect: {default: 200}}\n")},
			"workload f: sweep args: range [1, 100, 10] is not increasing (10 after 100)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			args := append(tt.args, "--results", results)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, &stdout, &stderr)
			var msg bytes.Buffer
			if got := exitCode(err, &msg); got != 2 {
				t.Fatalf("exit status: got %d, want 2 (err %v)", got, err)
			}
			if line := msg.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, tt.want) {
				t.Errorf("message: got %q, want one line containing %q", line, tt.want)
			}
			if _, err := os.Stat(results); !os.IsNotExist(err) {
				t.Errorf("results directory %s was created on bad input", results)
			}
		})
	}
}
