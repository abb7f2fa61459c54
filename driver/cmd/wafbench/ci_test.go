package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShardBadInput: a malformed --shard, i ≥ N, N < 1, or more shards
// than repeats is one line and exit status 2, before anything runs.
func TestShardBadInput(t *testing.T) {
	tests := []struct{ shard, want string }{
		{"4/4", "0 ≤ i < N"},
		{"0/0", "N ≥ 1"},
		{"-1/3", "0 ≤ i < N"},
		{"x", "want i/N"},
		{"1/2/3", "whole numbers"},
		{"1/3", "1 repeats cannot fill 3 shards"},
	}
	for _, tt := range tests {
		t.Run(tt.shard, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"run", "--suite", "quick", "--modes", "passthrough", "--repeats", "1",
				"--shard", tt.shard, "--results", results}, &stdout, &stderr)
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
