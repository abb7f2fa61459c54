//go:build integration

package keep_test

import (
	"path/filepath"
	"testing"

	"wafbench/driver/perf"
)

// TestCommittedFlameRunsRebuild is TestCommittedRunsRebuild for the runs
// recorded with run --perf, whose reports draw flame graphs with inferno.
func TestCommittedFlameRunsRebuild(t *testing.T) {
	if err := perf.FlameAvailable(); err != nil {
		t.Fatalf("the flame graphs of run --perf runs: %v", err)
	}
	for _, dir := range committedRuns(t) {
		if !drawsFlameGraphs(t, dir) {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			checkRebuilds(t, dir)
		})
	}
}
