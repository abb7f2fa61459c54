package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/result"
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

// TestCIWorkflowLocally runs bench.yml's job scripts end to end, in small:
// plan fans two shards of the quick suite out, each shard runs on the real
// Envoy, modules and CRS into its own results directory (a runner of its
// own), their run directories are "uploaded" and "downloaded" into one
// directory, merged with machines as blocks, and the job summary written.
// Windows are capped at 200 requests so the test is short on a busy
// machine. WAFBENCH_CI_OUT keeps the work directory there (the merged run
// is its merged/ folder).
func TestCIWorkflowLocally(t *testing.T) {
	work := os.Getenv("WAFBENCH_CI_OUT")
	if work == "" {
		work = t.TempDir()
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	work, _ = filepath.Abs(work)
	const modes = "passthrough,modsecurity,coraza"
	plan := ciScript(t, work, "plan.sh", "SUITE=quick", "MODES="+modes, "SHARDS=2", "REPEATS=1")
	if plan["shards"] != "[0,1]" || plan["count"] != "2" || plan["repeats"] != "1" {
		t.Fatalf("plan outputs: got %v, want shards [0,1], count 2, repeats 1", plan)
	}
	shards := filepath.Join(work, "shards")
	for _, i := range []string{"0", "1"} {
		out := ciScript(t, work, "shard.sh", "SUITE=quick", "MODES="+modes, "SHARD="+i, "SHARDS=2", "REPEATS=1",
			"RESULTS="+filepath.Join(work, "runner"+i),
			"RUN_FLAGS=--duration 1m --max-requests 200 --timeout 10m --warmup 100ms --trial-warmup 100ms --matrix none")
		if out["dir"] == "" {
			t.Fatalf("shard %s: no dir output: %v", i, out)
		}
		// upload-artifact / download-artifact: one directory per artifact.
		cp := exec.Command("cp", "-r", out["dir"], filepath.Join(shards, "wafbench-shard-"+i))
		if err := os.MkdirAll(shards, 0o755); err != nil {
			t.Fatal(err)
		}
		if b, err := cp.CombinedOutput(); err != nil {
			t.Fatalf("copy shard %s: %v %s", i, err, b)
		}
	}
	merged := filepath.Join(work, "merged")
	os.RemoveAll(merged)
	out := ciScript(t, work, "merge.sh", "IN="+shards, "OUT="+merged)
	if out["dir"] != merged || out["report"] != filepath.Join(merged, "report.md") {
		t.Fatalf("merge outputs: got %v", out)
	}
	summary := filepath.Join(work, "summary.md")
	os.Remove(summary)
	ciScript(t, work, "summary.sh", "REPORT="+out["report"], "GITHUB_STEP_SUMMARY="+summary)

	meta, err := result.ReadMeta(merged)
	if err != nil {
		t.Fatal(err)
	}
	if s := meta.Shards; s == nil || s.Count != 2 || len(s.Present) != 2 || meta.Repeats != 2 || meta.Status != "complete" {
		t.Errorf("merged meta: shards %+v, repeats %d, status %s; want 2 of 2 shards, 2 repeats, complete", meta.Shards, meta.Repeats, meta.Status)
	}
	if len(meta.Blocks) != 1 || len(meta.Blocks[0].Repeats) != 2 {
		t.Errorf("blocks: got %+v, want one machine (both shards ran here) with both repeats", meta.Blocks)
	}
	recs, _, err := result.ReadRecords(merged)
	if err != nil {
		t.Fatal(err)
	}
	perShard := map[string]map[int]bool{}
	for _, r := range recs {
		if r.Error != "" || r.Interrupted {
			t.Errorf("record %s/%s trial %d: error %q interrupted %v", r.Mode, r.Workload, r.Trial, r.Error, r.Interrupted)
		}
		if perShard[r.Shard] == nil {
			perShard[r.Shard] = map[int]bool{}
		}
		perShard[r.Shard][r.Repeat] = true
	}
	if len(recs) != 2*3*4 || len(perShard["0/2"]) != 1 || !perShard["0/2"][1] || len(perShard["1/2"]) != 1 || !perShard["1/2"][2] {
		t.Errorf("records: got %d, repeats by shard %v; want 24, shard 0/2 repeat 1, shard 1/2 repeat 2", len(recs), perShard)
	}
	sum := string(readAll(t, summary))
	for _, want := range []string{"## In brief", "## Headline", "**2 of 2 shards**", "## Machines as blocks", "One machine:", "modsecurity/passthrough"} {
		if !strings.Contains(sum, want) {
			t.Errorf("job summary lacks %q:\n%s", want, sum)
		}
	}
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
