package report

import (
	"bytes"
	"strings"
	"testing"

	"wafbench/driver/modes"
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
	if head := reportSection(t, render(), "## Headline"); !strings.Contains(head, "`modsecurity` 4574 (97.9%), `coraza` not tested") {
		t.Errorf("the headline does not give each mode's CRS pass rate:\n%s", head)
	}
}

// TestBestBuildKeepsProtection: the best-against-best table picks a
// cheaper build that passes more CRS tests than its default (and says so),
// and sets aside, naming it on the row, a cheaper build that fails a test
// its default passes.
func TestBestBuildKeepsProtection(t *testing.T) {
	recs := syntheticRecords()
	for _, r := range syntheticRecords() {
		switch r.Mode {
		case modes.ModSecurity: // 3.0.14 passes nine tests 3.0.9 fails
			r.Mode, r.Build = modes.ModSecurity+"@more", modes.ModSecurity+"@more"
			r.CPU.UsPerRequest *= 0.8
			r.ReqPerS /= 0.8
			recs = append(recs, r)
		case modes.Coraza: // cheaper, but fails three tests coraza passes
			r.Mode, r.Build = modes.Coraza+"@lossy", modes.Coraza+"@lossy"
			r.CPU.UsPerRequest *= 0.5
			r.ReqPerS /= 0.5
			recs = append(recs, r)
		}
	}
	meta := syntheticMeta("best", "", "")
	meta.Modes = append(meta.Modes, modes.ModSecurity+"@more", modes.Coraza+"@lossy")
	ok := func(mode string, passed, vs, lost int) result.ModeProtection {
		return result.ModeProtection{Mode: mode, Match: "module sha256", Source: "results/x-crs-test", Passed: passed,
			Overridden: 4674 - passed, PassRate: float64(passed) / 4674, VsDefault: vs, Lost: &lost}
	}
	meta.Protection = &result.Protection{Suite: "CRS 4.25.0", Tests: 4674, Modes: []result.ModeProtection{
		ok("modsecurity", 4574, 0, 0), ok("modsecurity@more", 4583, 9, 0), ok("coraza", 4615, 0, 0), ok("coraza@lossy", 4612, 3, 3),
	}}
	var buf bytes.Buffer
	if err := writeReport(&buf, &figures{Meta: meta, Records: recs, Summary: stats.Summarize(recs), Quality: &quality{}, Growth: &growthFigures{}}); err != nil {
		t.Fatal(err)
	}
	sec := reportSection(t, buf.String(), "## Builds")
	var rows [][]string
	for _, r := range rowsWith(sec, "json_4k/c1", "`modsecurity@more`") {
		if r[0] == "json_4k/c1" {
			rows = append(rows, r)
		}
	}
	if len(rows) != 1 {
		t.Fatalf("got rows %q, want modsecurity@more as the best modsecurity build", rowsWith(sec, "json_4k/c1"))
	}
	r := rows[0]
	if r[3] != "`coraza`" || !strings.Contains(r[len(r)-1], "`coraza@lossy`") || !strings.Contains(r[len(r)-1], "fails 3 its default passes") {
		t.Errorf("got row %q, want coraza best and coraza@lossy named as cheaper but losing 3 tests", r)
	}
	if !strings.Contains(r[len(r)-2], "passes 9 its default fails") {
		t.Errorf("got row %q, want the pass-rate cell to say modsecurity@more passes 9 more", r)
	}
}
