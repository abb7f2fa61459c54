package merge

import (
	"os"

	"wafbench/driver/internal/usage"
	"wafbench/driver/result"
)

// CheckArgs checks the arguments of 'wafbench merge': an output directory
// out that does not exist yet, and at least two run directories (one when
// it is a shard). Every error is bad input (driver/internal/usage).
func CheckArgs(dirs []string, out string) error {
	if out == "" {
		return usage.Errorf("merge: --out is required")
	}
	if len(dirs) < 2 && !(len(dirs) == 1 && isShard(dirs[0])) {
		return usage.Errorf("merge: want at least two run directories, got %d", len(dirs))
	}
	if _, err := os.Stat(out); err == nil {
		return usage.Errorf("merge: --out %s already exists", out)
	}
	for _, d := range dirs {
		if !result.HasRaw(d) {
			return usage.Errorf("merge: %s is not a run directory (no raw.jsonl)", d)
		}
	}
	return nil
}
