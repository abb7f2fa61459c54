package conformance

import "wafbench/driver/modes"

// OverriddenTests lists the tests that the override file at path (whose
// entries are checked against the CRS suite) expects to fail in mode m
// running engine version version: a protection measurement leaves them
// out, since the host changes or answers those requests before the engine
// sees them, or the engine is known to differ there.
func OverriddenTests(path string, m modes.Mode, version string) (map[string]bool, error) {
	s, err := load()
	if err != nil {
		return nil, err
	}
	ov, err := loadOverrides(path, s)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for i := range ov.Entries {
		e := &ov.Entries[i]
		if !e.appliesTo(m, version) {
			continue
		}
		for _, id := range e.Tests {
			out[id] = true
		}
	}
	return out, nil
}
