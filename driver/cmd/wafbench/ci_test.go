package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ciScript runs scripts/ci/<name> from the repository root with env added
// to this process's environment (this test binary stands in for wafbench:
// WAFBENCH_AS_MAIN). It returns the step outputs the script wrote to
// $GITHUB_OUTPUT.
func ciScript(t *testing.T, work, name string, env ...string) map[string]string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(work, name+".outputs")
	os.Remove(outFile)
	cmd := exec.Command("bash", filepath.Join("scripts", "ci", name))
	cmd.Dir = "../../.."
	cmd.Env = append(os.Environ(), "WAFBENCH_AS_MAIN=1", "WAFBENCH="+self, "GITHUB_OUTPUT="+outFile,
		// A test run is not a measurement: it need not wait for, or
		// hold off, a measured run of this machine.
		"WAFBENCH_LOCK="+filepath.Join(work, "run.lock"))
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/ci/%s %v: %v\n%s", name, env, err, stderr.String())
	}
	out := map[string]string{}
	b, _ := os.ReadFile(outFile)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			out[k] = v
		}
	}
	return out
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

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
