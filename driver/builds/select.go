package builds

import (
	"fmt"
	"strings"
)

// Pick resolves mode names (modsecurity, coraza@re2, …) to builds; an
// unknown name is an error listing the known builds.
func (s *Set) Pick(names []string) ([]*Build, error) {
	var out []*Build
	for _, n := range names {
		b, ok := s.Find(n)
		if !ok {
			return nil, fmt.Errorf("unknown build %q; known builds: %s", n, strings.Join(s.modes(), ", "))
		}
		out = append(out, b)
	}
	return out, nil
}

// Skipped is a build Buildable leaves out, and why.
type Skipped struct {
	Build *Build
	Err   error
}

// buildable returns the builds built when none is named: every build that
// is not instrumented (those are for training only) and, for a pgo build,
// whose profile exists and matches (CheckProfile); the pgo builds left out
// are in skipped.
func (s *Set) buildable(root string) (chosen []*Build, skipped []Skipped) {
	for i := range s.Builds {
		b := &s.Builds[i]
		if b.Instrument {
			continue
		}
		if b.PGO != nil {
			if _, err := s.checkProfile(root, b); err != nil {
				skipped = append(skipped, Skipped{b, err})
				continue
			}
		}
		chosen = append(chosen, b)
	}
	return chosen, skipped
}

// pgoBuilds returns every build with a pgo field, in file order.
func (s *Set) pgoBuilds() []*Build {
	var out []*Build
	for i := range s.Builds {
		if s.Builds[i].PGO != nil {
			out = append(out, &s.Builds[i])
		}
	}
	return out
}
