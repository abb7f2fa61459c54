package conformance

import (
	"fmt"
	"io"
	"strings"

	"wafbench/driver/internal/usage"
)

// outcomeChange is a test whose outcome differs between two runs of a mode.
type outcomeChange struct {
	Mode, Test string
	Was, Now   string // outcome, with the override's name when one applied
}

// comparison is two crs-test runs set side by side, mode by mode and test
// by test.
type comparison struct {
	Modes    []string // modes both runs tested
	Tests    int      // tests both hold in those modes (a subset run holds fewer)
	Observed int      // of the unchanged, tests whose stages got other statuses or rule IDs
	Changes  []outcomeChange
	Only     []string // modes only one run tested
}

// outcomeOf is a test's outcome as a comparison sees it.
func outcomeOf(t testResult) string {
	if t.Override != "" {
		return t.Outcome + " (" + t.Override + ")"
	}
	return t.Outcome
}

// compareRuns sets now beside was: for every mode both tested, every test
// both hold, the outcome (with its override; not-run too) of each. A
// changed observation whose outcome stands (coraza-wasm answers 920390-1
// 504, and logs 950100 for it, when V8 takes longer than Envoy's 15 s
// route timeout) is counted, not listed.
func compareRuns(was, now *run) comparison {
	var c comparison
	byMode := map[string]*modeResult{}
	for i := range was.Modes {
		byMode[was.Modes[i].Mode] = &was.Modes[i]
	}
	seen := map[string]bool{}
	for _, nm := range now.Modes {
		wm := byMode[nm.Mode]
		if wm == nil {
			c.Only = append(c.Only, nm.Mode)
			continue
		}
		seen[nm.Mode] = true
		c.Modes = append(c.Modes, nm.Mode)
		wt := map[string]testResult{}
		for _, t := range wm.Tests {
			wt[t.ID] = t
		}
		for _, t := range nm.Tests {
			o, ok := wt[t.ID]
			if !ok {
				continue
			}
			c.Tests++
			if a, b := outcomeOf(o), outcomeOf(t); a != b {
				c.Changes = append(c.Changes, outcomeChange{Mode: nm.Mode, Test: t.ID, Was: a, Now: b})
			} else if observed(o) != observed(t) {
				c.Observed++
			}
		}
	}
	for _, m := range was.Modes {
		if !seen[m.Mode] {
			c.Only = append(c.Only, m.Mode)
		}
	}
	return c
}

// observed is what a test's stages saw: their statuses and rule IDs.
func observed(t testResult) string {
	var b strings.Builder
	for _, s := range t.Stages {
		fmt.Fprintf(&b, "%d %s|", s.Status, joinIDs(s.IDs))
	}
	return b.String()
}

// CompareDirs is crs-test --compare: the runs in wasDir and nowDir set
// side by side (compareRuns), printed on stdout; the error lists the tests
// whose outcome changed.
func CompareDirs(wasDir, nowDir string, stdout io.Writer) error {
	was, err := ReadRunDir(wasDir)
	if err != nil {
		return usage.Wrap(err)
	}
	now, err := ReadRunDir(nowDir)
	if err != nil {
		return usage.Wrap(err)
	}
	c := compareRuns(was, now)
	if len(c.Modes) == 0 {
		return usage.Errorf("--compare: %s and %s tested no mode in common", wasDir, nowDir)
	}
	fmt.Fprintf(stdout, "%d tests in %s: %d with the same outcome, %d changed (%d of the unchanged saw other statuses or rule IDs)\n",
		c.Tests, strings.Join(c.Modes, ", "), c.Tests-len(c.Changes), len(c.Changes), c.Observed)
	if len(c.Only) > 0 {
		fmt.Fprintf(stdout, "tested by one run only: %s\n", strings.Join(c.Only, ", "))
	}
	for _, ch := range c.Changes {
		fmt.Fprintf(stdout, "%s %s: %s → %s\n", ch.Mode, ch.Test, ch.Was, ch.Now)
	}
	if len(c.Changes) > 0 {
		return fmt.Errorf("crs-test --compare: %d tests changed outcome", len(c.Changes))
	}
	return nil
}
