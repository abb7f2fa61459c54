package profile

import (
	"strings"

	"wafbench/driver/builds"
	"wafbench/driver/internal/usage"
)

// TrainingCases are the case keys of a pgo build's training suite in s,
// which was loaded from dir (named in errors): builds.TrainOptions.Cases
// for 'wafbench pgo'. Every error is bad input (driver/internal/usage).
func (s *Set) TrainingCases(dir string) func(b *builds.Build) ([]string, error) {
	return func(b *builds.Build) ([]string, error) {
		suite, ok := s.Suites[b.PGO.Training]
		if !ok {
			return nil, usage.Errorf("pgo: build %s: training suite %q not in %s (suites: %s)", b.Mode(), b.PGO.Training, dir, strings.Join(s.SuiteNames(), ", "))
		}
		cs, err := s.Cases(suite.Workloads)
		if err != nil {
			return nil, usage.Errorf("pgo: suite %s: %v", b.PGO.Training, err)
		}
		keys := make([]string, len(cs))
		for i, c := range cs {
			keys[i] = c.Key()
		}
		return keys, nil
	}
}
