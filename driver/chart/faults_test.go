package chart

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"wafbench/driver/stats"
	"wafbench/internal/diskfull"
)

// TestWriteAllDiskFullLeavesNoEmptySVG fills the disk under the throughput
// chart (its temporary file is /dev/full: ENOSPC from the kernel) and checks
// that no empty or partial SVG is left behind.
func TestWriteAllDiskFullLeavesNoEmptySVG(t *testing.T) {
	dir := t.TempDir()
	diskfull.At(t, filepath.Join(dir, throughputFile+".tmp"))
	_, err := WriteAll(dir, stats.Summarize(records()), records())
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v, want ENOSPC", err)
	}
	diskfull.NothingLeft(t, dir)
}

// TestWriteAllSkipsEmptyCharts measures no CPU (as a ref-direct-only run):
// the report still gets its other charts instead of failing.
func TestWriteAllSkipsEmptyCharts(t *testing.T) {
	recs := records()
	for i := range recs {
		recs[i].CPU.UsPerRequest = 0
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, cpuFile), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := WriteAll(dir, stats.Summarize(recs), recs)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(files, cpuFile) || !slices.Contains(files, throughputFile) {
		t.Errorf("got files %v, want throughput and no CPU chart", files)
	}
	if _, err := os.Stat(filepath.Join(dir, cpuFile)); !os.IsNotExist(err) {
		t.Errorf("stale %s kept (stat: %v)", cpuFile, err)
	}
}
