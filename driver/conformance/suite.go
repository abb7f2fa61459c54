// Package conformance runs the CRS 4.25.0 regression suite (read by
// driver/crssuite: the go-ftw test files shipped in
// github.com/corazawaf/coraza-coreruleset/v4's tests package, parsed with
// go-ftw's own test types) through a running host in the crs-test
// configuration (internal/crs), judges every stage as go-ftw does (rule IDs
// logged between two marker requests, status, response and log regexes,
// retry_once), applies the reasoned overrides of overrides.yaml and writes
// per-mode and cross-mode results.
//
// It drives the host itself instead of calling go-ftw's runner: the runner
// reads one log file through a fixed client (its own HTTP writer and
// header normalisation), while wafbench sends every request with its one
// serializer (internal/http1) exactly as the test writes it, and reads
// each host's own log format (the modules' wafbench-match lines, nginx's
// ModSecurity lines).
package conformance

import "wafbench/driver/crssuite"

// The regression suite and its tests, as driver/crssuite reads them.
type (
	suite = crssuite.Suite
	test  = crssuite.Test
)

// load reads the CRS 4.25.0 regression suite (crssuite.Load).
func load() (*suite, error) { return crssuite.Load() }

// suiteSource names where the tests come from.
const suiteSource = crssuite.Source
