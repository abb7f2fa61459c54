package report

import (
	"fmt"
	"strings"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// writeProtection is "protection beside cost": for every WAF mode of the
// run, the CRS regression suite's outcome through the very module the run
// measured (protection.json, written by wafbench run --crs-test or
// crs-test --attach) next to the headline's CPU per request. Nothing when
// the run has no protection record.
func writeProtection(m *md, fig *figures) {
	meta, s := fig.Meta, fig.Summary
	p := meta.Protection
	if p == nil || len(p.Modes) == 0 {
		return
	}
	m.p("## Protection beside cost")
	m.nl()
	m.p("The CRS regression suite (%s, %d tests; wafbench crs-test: DetectionOnly, paranoia level 4, the CRS test settings) through each mode's module, beside the headline's median Envoy CPU µs per request. Pass rate = passed ÷ tests run; an overridden test (a reasoned expected failure: driver/conformance/overrides.yaml) is not a pass. \"vs default\": tests on which a build's verdict differs from its engine's default build in the same crs-test run, and which way.", orNone(p.Suite), p.Tests)
	m.nl()
	cells := []string{"mode", "CRS passed / failed / overridden", "pass rate", "vs default", "crs-test run (matched by)"}
	for _, w := range s.Workloads {
		cells = append(cells, w.String()+" CPU µs/req")
	}
	m.head(cells...)
	for _, mp := range p.Modes {
		row := []string{"`" + mp.Mode + "`"}
		if mp.Match == "" {
			why := "no crs-test run tested this module"
			if mp.Unmatched != "" {
				why = mp.Unmatched
			}
			row = append(row, "not tested", "", "", why)
		} else {
			row = append(row, fmt.Sprintf("%d / %d / %d", mp.Passed, mp.Failed, mp.Overridden),
				fmt.Sprintf("%.1f%%", 100*mp.PassRate), vsDefault(&mp), "`"+mp.Source+"` ("+mp.Match+")")
		}
		for _, w := range s.Workloads {
			if g := s.Group(stats.Key{Mode: mp.Mode, Workload: w.Workload, Conns: w.Conns}); g != nil {
				row = append(row, cpuCell(g.CPUUsPerReq.Median))
			} else {
				row = append(row, "")
			}
		}
		m.row(row...)
	}
	m.nl()
}

// writeHeadlineProtection is the headline's line on protection: each WAF
// mode's CRS pass rate, so no cost is read without it; nothing when the
// run has no protection record.
func writeHeadlineProtection(m *md, fig *figures) {
	p := fig.Meta.Protection
	if p == nil || len(p.Modes) == 0 {
		return
	}
	var rates []string
	for _, mp := range p.Modes {
		if mp.Match == "" {
			rates = append(rates, "`"+mp.Mode+"` not tested")
			continue
		}
		rates = append(rates, fmt.Sprintf("`%s` %d (%.1f%%)", mp.Mode, mp.Passed, 100*mp.PassRate))
	}
	m.p("Protection beside these costs — CRS regression suite tests passed of %d (through each mode's very module; the next section has the overrides and how each build differs from its default): %s.", p.Tests, strings.Join(rates, ", "))
	m.nl()
}

// vsDefault is the "vs default" cell: "same tests" for a build that
// passes exactly what its engine's default passes, the differing count
// and the first tests otherwise.
func vsDefault(mp *result.ModeProtection) string {
	switch {
	case !strings.Contains(mp.Mode, "@"):
		return "(default)"
	case mp.VsDefault < 0:
		return "default not tested"
	case mp.VsDefault == 0:
		return "same tests"
	}
	s := differsOn(mp) + ": " + strings.Join(mp.Differs, ", ")
	if mp.VsDefault > len(mp.Differs) {
		s += ", …"
	}
	return s
}

// differsOn is "differs on N" and which way: the tests the build fails
// that its default passes, and those it passes that the default does not
// (left out for a record that did not count them).
func differsOn(mp *result.ModeProtection) string {
	s := fmt.Sprintf("differs on %d", mp.VsDefault)
	if mp.Lost == nil {
		return s
	}
	lost := *mp.Lost
	gained := mp.VsDefault - lost
	switch {
	case lost == 0:
		return s + fmt.Sprintf(", passes %d its default fails", gained)
	case gained == 0:
		return s + fmt.Sprintf(", fails %d its default passes", lost)
	}
	return s + fmt.Sprintf(", fails %d its default passes and passes %d it fails", lost, gained)
}

// protectionCell is the CRS pass rate of mode for the Builds section, ""
// when the run has no protection record for it: the rate and how the
// build differs from its default, without the test IDs (the Protection
// beside cost section lists them).
func protectionCell(meta *result.Meta, mode string) string {
	mp := meta.Protection.Mode(mode)
	if mp == nil {
		return ""
	}
	how := vsDefault(mp)
	if mp.VsDefault > 0 {
		how = differsOn(mp)
	}
	return fmt.Sprintf("%.1f%% (%s)", 100*mp.PassRate, how)
}

// keepsProtection reports whether mode passes every test its engine's
// default passes (it may pass more), as far as the run's protection record
// knows (true when the mode was not tested or its default was not; false
// for a difference of unknown direction).
func keepsProtection(meta *result.Meta, mode string) bool {
	mp := meta.Protection.Mode(mode)
	return mp == nil || mp.VsDefault <= 0 || (mp.Lost != nil && *mp.Lost == 0)
}
