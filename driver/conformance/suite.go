// Package conformance runs the CRS 4.25.0 regression suite — the go-ftw test
// files shipped in github.com/corazawaf/coraza-coreruleset/v4's tests
// package, parsed with go-ftw's own test types — through a running host in
// the crs-test configuration (internal/crs), judges every stage as go-ftw
// does (rule IDs logged between two marker requests, status, response and
// log regexes, retry_once), applies the reasoned overrides of
// overrides.yaml and writes per-mode and cross-mode results.
//
// It drives the host itself instead of calling go-ftw's runner: the runner
// reads one log file through a fixed client (its own HTTP writer and
// header normalisation), while wafbench sends every request with its one
// serializer (internal/http1) exactly as the test writes it, and reads
// each host's own log format (the modules' wafbench-match lines, nginx's
// ModSecurity lines).
package conformance

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

// The suite's size for CRS 4.25.0 (design.md §10); Load refuses another.
const (
	wantFiles  = 318
	wantTests  = 4674
	wantStages = 4680
)

// suiteSource names where the tests come from.
const suiteSource = "github.com/corazawaf/coraza-coreruleset/v4@v4.25.0/tests (go-ftw v2.1.0 test types, ftw-tests-schema v2.3.0)"

// test is one test of the suite.
type test struct {
	ID       string // "920100-1", go-ftw's IdString
	RuleID   uint
	File     string // path inside the tests FS, e.g. REQUEST-920-PROTOCOL-ENFORCEMENT/920100.yaml
	RuleFile string // the rule file the test belongs to, e.g. REQUEST-920-PROTOCOL-ENFORCEMENT
	Title    string
	Stages   []schema.Stage
}

// suite is the whole regression suite in file order.
type suite struct {
	Tests  []test
	Files  int
	Stages int
	byID   map[string]int
}

// load reads the CRS 4.25.0 regression suite embedded in the
// coraza-coreruleset module and checks its size.
func load() (*suite, error) {
	s, err := loadFS(crstests.FS)
	if err != nil {
		return nil, err
	}
	if s.Files != wantFiles || len(s.Tests) != wantTests || s.Stages != wantStages {
		return nil, fmt.Errorf("crs suite: want %d files, %d tests, %d stages, got %d, %d, %d", wantFiles, wantTests, wantStages, s.Files, len(s.Tests), s.Stages)
	}
	return s, nil
}

// loadFS reads every */*.yaml test file of fsys with go-ftw's parser
// (which fills in test IDs, ordered headers and autocomplete defaults).
func loadFS(fsys fs.FS) (*suite, error) {
	names, err := fs.Glob(fsys, "*/*.yaml")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("crs suite: no test files (*/*.yaml)")
	}
	sort.Strings(names)
	s := &suite{byID: map[string]int{}}
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
			s.Tests = append(s.Tests, test{ID: id, RuleID: t.RuleId, File: n, RuleFile: strings.Split(n, "/")[0],
				Title: t.TestTitle, Stages: t.Stages})
			s.Stages += len(t.Stages)
		}
	}
	return s, nil
}

// has reports whether the suite holds test id.
func (s *suite) has(id string) bool { _, ok := s.byID[id]; return ok }

// test returns test id.
func (s *suite) test(id string) (test, bool) {
	i, ok := s.byID[id]
	if !ok {
		return test{}, false
	}
	return s.Tests[i], true
}
