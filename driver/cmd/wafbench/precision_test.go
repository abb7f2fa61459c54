package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrecisionBadInput: a bad --precision or --budget is one line, exit
// status 2, and no run directory.
func TestPrecisionBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"zero", []string{"--precision", "0", "--budget", "10m"}, `--precision: want a half-width in percent, > 0 and < 100, like 3%; got "0"`},
		{"negative", []string{"--precision", "-3%", "--budget", "10m"}, `got "-3%"`},
		{"unparsable", []string{"--precision", "three", "--budget", "10m"}, `got "three"`},
		{"hundred", []string{"--precision", "100%", "--budget", "10m"}, `got "100%"`},
		{"budget alone", []string{"--budget", "10m"}, "--budget needs --precision"},
		{"no budget", []string{"--precision", "3%"}, "--precision needs --budget > 0"},
		{"negative budget", []string{"--precision", "3%", "--budget", "-1m"}, "--precision needs --budget > 0"},
		{"unparsable budget", []string{"--precision", "3%", "--budget", "ten"}, `invalid value "ten" for flag -budget`},
		{"with shard", []string{"--precision", "3%", "--budget", "10m", "--shard", "0/2"}, "--precision cannot be combined with --shard"},
		{"no target applies", []string{"--precision", "3%", "--budget", "10m", "--modes", "coraza"}, "--precision: no precision target of suite seed applies to modes coraza on workloads headers@1"},
		{"target workload not run", []string{"--precision", "3%", "--budget", "10m", "--workloads", "json_4k@1"}, "no precision target of suite seed applies to modes passthrough,modsecurity,coraza on workloads json_4k@1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			args := append([]string{"run", "--results", results}, tt.args...)
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
