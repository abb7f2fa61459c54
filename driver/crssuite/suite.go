// Package crssuite reads the CRS 4.25.0 regression suite — the go-ftw test
// files shipped in github.com/corazawaf/coraza-coreruleset/v4's tests
// package, parsed with go-ftw's own test types — and builds each stage's
// request as go-ftw writes it (Build). wafbench crs-test (driver/conformance)
// runs the whole suite; a replay workload (driver/replay) sends a selection
// of its attacks as classes of a benchmark mix.
package crssuite

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	crstests "github.com/corazawaf/coraza-coreruleset/v4/tests"
	schema "github.com/coreruleset/ftw-tests-schema/v2/types"
	ftwtest "github.com/coreruleset/go-ftw/v2/test"
)

// The suite's size for CRS 4.25.0 (its tests/regression directory); Load
// refuses another.
const (
	WantFiles  = 318
	WantTests  = 4674
	WantStages = 4680
)

// Source names where the tests come from.
const Source = "github.com/corazawaf/coraza-coreruleset/v4@v4.25.0/tests (go-ftw v2.1.0 test types, ftw-tests-schema v2.3.0)"

// Test is one test of the suite.
type Test struct {
	ID       string // "920100-1", go-ftw's IdString
	RuleID   uint
	File     string // path inside the tests FS, e.g. REQUEST-920-PROTOCOL-ENFORCEMENT/920100.yaml
	RuleFile string // the rule file the test belongs to, e.g. REQUEST-920-PROTOCOL-ENFORCEMENT
	Title    string
	Stages   []schema.Stage
}

// Suite is the whole regression suite in file order.
type Suite struct {
	Tests  []Test
	Files  int
	Stages int
	byID   map[string]int
}

// Load reads the CRS 4.25.0 regression suite embedded in the
// coraza-coreruleset module and checks its size.
func Load() (*Suite, error) {
	s, err := LoadFS(crstests.FS)
	if err != nil {
		return nil, err
	}
	if s.Files != WantFiles || len(s.Tests) != WantTests || s.Stages != WantStages {
		return nil, fmt.Errorf("crs suite: want %d files, %d tests, %d stages, got %d, %d, %d", WantFiles, WantTests, WantStages, s.Files, len(s.Tests), s.Stages)
	}
	return s, nil
}

// LoadFS reads every */*.yaml test file of fsys with go-ftw's parser
// (which fills in test IDs, ordered headers and autocomplete defaults).
func LoadFS(fsys fs.FS) (*Suite, error) {
	names, err := fs.Glob(fsys, "*/*.yaml")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("crs suite: no test files (*/*.yaml)")
	}
	sort.Strings(names)
	s := &Suite{byID: map[string]int{}}
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("crs suite: %w", err)
		}
		ft, err := ftwtest.GetTestFromYaml(data, path.Base(n))
		if err != nil {
			return nil, fmt.Errorf("crs suite: %s: %w", n, err)
		}
		s.Files++
		for _, t := range ft.Tests {
			id := t.IdString()
			if _, dup := s.byID[id]; dup {
				return nil, fmt.Errorf("crs suite: %s: duplicate test %s", n, id)
			}
			s.byID[id] = len(s.Tests)
			s.Tests = append(s.Tests, Test{ID: id, RuleID: t.RuleId, File: n, RuleFile: strings.Split(n, "/")[0],
				Title: t.TestTitle, Stages: t.Stages})
			s.Stages += len(t.Stages)
		}
	}
	return s, nil
}

// Has reports whether the suite holds test id.
func (s *Suite) Has(id string) bool { _, ok := s.byID[id]; return ok }

// Test returns test id.
func (s *Suite) Test(id string) (Test, bool) {
	i, ok := s.byID[id]
	if !ok {
		return Test{}, false
	}
	return s.Tests[i], true
}
