//go:build integration

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"wafbench/driver/result"
)

// TestRunRelativeResults: a relative --results works like an absolute one.
// Envoy reads its configuration from the run directory with a working
// directory of its own, so the run directory is made absolute first (a
// relative one failed every trial with Envoy's "Invalid path").
func TestRunRelativeResults(t *testing.T) {
	t.Setenv("WAFBENCH_AS_MAIN", "1") // the upstream the run starts is this test binary
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// Under the checkout's build/: a path relative to the working directory
	// that does not also resolve from the run directory by chance.
	parent, err := os.MkdirTemp(filepath.Join(wd, "..", "..", "..", "build"), "results-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	rel, err := filepath.Rel(wd, filepath.Join(parent, "results"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr, msg bytes.Buffer
	err = run(context.Background(), []string{"run", "--suite", "quick", "--modes", "passthrough", "--workloads", "headers@1",
		"--repeats", "1", "--duration", "300ms", "--warmup", "0s", "--trial-warmup", "0s", "--matrix", "none", "--crs-test", "none",
		"--no-report", "--progress", "never", "--results", rel}, &stdout, &stderr)
	if got := exitCode(err, &msg); got != 0 {
		t.Fatalf("run --results %s: exit status %d, want 0: %s\n%s", rel, got, msg.String(), stderr.String())
	}
	runs, err := filepath.Glob(filepath.Join(rel, "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("want one run directory under %s, got %v (%v)", rel, runs, err)
	}
	recs, _, err := result.ReadRecords(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Error != "" || recs[0].Requests == 0 {
		t.Fatalf("records %+v, want one measured window", recs)
	}
}
