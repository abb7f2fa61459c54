package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ProtectionFile is a run's protection record: for each mode, the outcome
// of the CRS regression suite (wafbench crs-test) through the module the
// run measured, so the report states protection beside cost. It is an
// input of the report like raw.jsonl, written once beside the run's records
// (wafbench run --crs-test, or crs-test --attach for an earlier run) from a
// crs-test result; the report never looks outside the run directory, so a
// committed report rebuilds byte for byte whatever crs-test runs come later.
const ProtectionFile = "protection.json"

// Protection is protection.json.
type Protection struct {
	// Suite is the regression suite (CRS version), Tests its size.
	Suite string           `json:"suite"`
	Tests int              `json:"tests"`
	Modes []ModeProtection `json:"modes"`
}

// ModeProtection is the suite's outcome for one mode of the run.
type ModeProtection struct {
	Mode string `json:"mode"`
	// Source is the crs-test run the figures come from (results/<run> or
	// runs/<run>, repository-relative).
	Source string `json:"source,omitempty"`
	// Match says how the crs-test result was matched to the run's module:
	// "module sha256" (the very binary), "engine version" (a host with no
	// module file of its own: same engine version), or "" when the
	// crs-test run has no result for this mode (the counts are then zero).
	Match string `json:"match,omitempty"`
	// Unmatched says why no crs-test result may stand for this mode
	// although one tested its module: the mode runs a configuration whose
	// rules are not the ones crs-test ran (another CRS release, the
	// user's own); "" otherwise.
	Unmatched  string  `json:"unmatched,omitempty"`
	Passed     int     `json:"passed"`
	Failed     int     `json:"failed"`
	Overridden int     `json:"overridden"`
	NotRun     int     `json:"not_run"`
	PassRate   float64 `json:"pass_rate"`
	// VsDefault, for a build (coraza@re2), counts the tests whose verdict
	// (passed or not) differs from the engine's default build in the same
	// crs-test run; -1 when the default was not tested there.
	VsDefault int `json:"vs_default"`
	// Differs names those tests (at most 20).
	Differs []string `json:"differs,omitempty"`
	// Lost counts those of them the default passes and the build does
	// not: detections the build loses (0 when it only passes more); nil in
	// records written before it was counted.
	Lost *int `json:"lost,omitempty"`
}

// Mode returns the protection of mode, nil when p is nil or has no
// matched result for it.
func (p *Protection) Mode(mode string) *ModeProtection {
	if p == nil {
		return nil
	}
	for i := range p.Modes {
		if p.Modes[i].Mode == mode && p.Modes[i].Match != "" {
			return &p.Modes[i]
		}
	}
	return nil
}

// ReadProtection reads dir's protection.json; nil without error when the
// run has none.
func ReadProtection(dir string) (*Protection, error) {
	b, err := os.ReadFile(filepath.Join(dir, ProtectionFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p Protection
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", ProtectionFile, err)
	}
	return &p, nil
}
