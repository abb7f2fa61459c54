package report

import (
	"bytes"
	"strings"
	"testing"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// TestProtectionBesideCost: with a protection record the report states
// each WAF mode's CRS outcome next to its CPU figures, and says so for a
// mode no crs-test run tested; without one it has no such section.
func TestProtectionBesideCost(t *testing.T) {
	meta := syntheticMeta("protection", "AMD EPYC", fakeHash("envoy"))
	recs := syntheticRecords()
	render := func() string {
		var buf bytes.Buffer
		if err := writeReport(&buf, &figures{Meta: meta, Records: recs, Summary: stats.Summarize(recs), Quality: &quality{}, Growth: &growthFigures{}}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if md := render(); strings.Contains(md, "## Protection beside cost") {
		t.Fatal("a run without protection.json has a protection section")
	}
	meta.Protection = &result.Protection{Suite: "CRS 4.25.0", Tests: 4674, Modes: []result.ModeProtection{
		{Mode: "modsecurity", Match: "module sha256", Source: "results/x-crs-test", Passed: 4574, Overridden: 100, PassRate: 4574.0 / 4674, VsDefault: 0},
		{Mode: "coraza", VsDefault: -1},
	}}
	sec := reportSection(t, render(), "## Protection beside cost")
	if rows := rowsWith(sec, "`modsecurity`"); len(rows) != 1 || rows[0][1] != "4574 / 0 / 100" || rows[0][2] != "97.9%" ||
		!strings.Contains(rows[0][4], "results/x-crs-test") || rows[0][5] == "" {
		t.Errorf("modsecurity: got rows %q, want its counts, pass rate, source and a CPU figure", rows)
	}
	if rows := rowsWith(sec, "`coraza`"); len(rows) != 1 || rows[0][1] != "not tested" {
		t.Errorf("coraza: got rows %q, want it named as not tested", rows)
	}
}
