package flame

import (
	"wafbench/driver/internal/usage"
	"wafbench/driver/perf"
	"wafbench/driver/result"
)

// CheckRun checks what 'wafbench flamediff' needs before Diff: dir is a
// run directory and the flame-graph tool is installed. Every error is bad
// input (driver/internal/usage).
func CheckRun(dir string) error {
	if !result.HasRaw(dir) {
		return usage.Errorf("flamediff: %s is not a run directory (no raw.jsonl)", dir)
	}
	if err := perf.FlameAvailable(); err != nil {
		return usage.Errorf("flamediff: %v", err)
	}
	return nil
}
