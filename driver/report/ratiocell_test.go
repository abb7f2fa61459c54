package report

import (
	"bytes"
	"strings"
	"testing"

	"wafbench/driver/modes"
	"wafbench/driver/stats"
)

// reportSection is the text of the report section headed title, up to the next
// "## " heading.
func reportSection(t *testing.T, md, title string) string {
	t.Helper()
	i := strings.Index(md, "\n"+title+"\n")
	if i < 0 {
		t.Fatalf("report has no section %q", title)
	}
	rest := md[i+len(title)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// rowsWith are the cells of every table row of text whose cells include
// all of keys.
func rowsWith(text string, keys ...string) [][]string {
	var out [][]string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "| "), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		all := true
		for _, k := range keys {
			found := false
			for _, c := range cells {
				found = found || c == k
			}
			all = all && found
		}
		if all {
			out = append(out, cells)
		}
	}
	return out
}

// TestOneRatioOneFigure: the modsecurity ÷ coraza CPU ratio of a workload
// reads the same in every table that shows it — the report's opening, the
// paired ratios and the builds' best-against-best table — as the
// geometric mean of the per-repeat paired ratios (once the headline showed
// the median ratio and the builds table a ratio of medians).
func TestOneRatioOneFigure(t *testing.T) {
	recs := syntheticRecords()
	// A slower modsecurity build, so the Builds section is written and its
	// best modsecurity build is the default one.
	for _, r := range syntheticRecords() {
		if r.Mode == modes.ModSecurity {
			r.Mode, r.Build = modes.ModSecurity+"@3.0.14", "modsecurity@3.0.14"
			r.CPU.UsPerRequest *= 1.25
			r.ReqPerS /= 1.25
			recs = append(recs, r)
		}
	}
	meta := syntheticMeta("ratios", "", "")
	meta.Modes = append(meta.Modes, modes.ModSecurity+"@3.0.14")
	s := stats.Summarize(recs)
	var buf bytes.Buffer
	if err := writeReport(&buf, &figures{Meta: meta, Records: recs, Summary: s, Quality: &quality{}, Growth: &growthFigures{}, Brief: analyseBrief(s)}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	checked := 0
	for _, w := range s.Workloads {
		var c *stats.Comparison
		for i := range s.Comparisons {
			if x := &s.Comparisons[i]; x.WorkloadKey == w && x.Num == modes.ModSecurity && x.Den == modes.Coraza && x.Metric == stats.MetricCPU {
				c = x
			}
		}
		if c == nil {
			t.Fatalf("%s: no modsecurity/coraza CPU comparison", w)
		}
		want := ratioCell(c)
		geo := strings.Fields(want)[0]
		if c.MedianRatio == c.GeoRatio {
			t.Fatalf("%s: median and geometric mean coincide (%g); the test cannot tell them apart", w, c.GeoRatio)
		}
		for _, tc := range []struct {
			where string
			rows  [][]string
			cell  func(row []string) string
		}{
			{"in brief", rowsWith(reportSection(t, md, briefHeading), w.String(), want), func(r []string) string { return r[1] }},
			{"paired ratios", rowsWith(reportSection(t, md, "## Paired ratios"), "modsecurity/coraza", stats.MetricCPU.Label()), nil},
			{"builds, best against best", rowsWith(reportSection(t, md, "## Builds"), w.String(), "`modsecurity`", "`coraza`"), func(r []string) string { return r[len(r)-1] }},
		} {
			var got []string
			for _, r := range tc.rows {
				if tc.cell == nil { // the paired-ratios table holds every workload: find the one cell
					for _, x := range r {
						if strings.HasPrefix(x, geo+" [") {
							got = append(got, x)
						}
					}
					continue
				}
				got = append(got, tc.cell(r))
			}
			if tc.cell == nil && len(got) == 0 {
				got = []string{"(no cell)"}
			}
			if len(got) == 0 || !strings.HasPrefix(got[0], geo) || got[0] != want {
				t.Errorf("%s, %s: got %q, want %q", w, tc.where, got, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}
