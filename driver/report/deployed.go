package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"wafbench/driver/chart"
	"wafbench/driver/modes"
	"wafbench/driver/protection"
	"wafbench/driver/stats"
	"wafbench/internal/atomicfile"
)

// deployedFigures is the model of "Protection as deployed": one row per
// configuration-qualified WAF mode, its protection rates beside its CPU.
type deployedFigures struct {
	Report *protection.Report
	Rows   []deployedRow
	Charts []string // charts/frontier-*.svg drawn
}

// deployedRow is one mode's protection and cost.
type deployedRow struct {
	protection.ModeResult
	Engine string  // the mode without its configuration (coraza, modsecurity@3.0.14)
	CPUUs  float64 // geometric mean over the run's workloads of the median CPU µs/request; 0 = not measured
}

// analyseDeployed builds the model from the run's protection-deployed.json
// (rep, nil when the run has none) and its summary.
func analyseDeployed(rep *protection.Report, s *stats.Summary) *deployedFigures {
	if rep == nil || len(rep.Modes) == 0 {
		return nil
	}
	d := &deployedFigures{Report: rep}
	for _, mr := range rep.Modes {
		n, err := modes.Parse(mr.Mode)
		engine := mr.Mode
		if err == nil {
			engine = n.WithConfig("").String()
		}
		d.Rows = append(d.Rows, deployedRow{ModeResult: mr, Engine: engine, CPUUs: geoCPU(s, mr.Mode)})
	}
	return d
}

// geoCPU is the geometric mean over s's workloads of mode's median CPU
// µs per request; 0 when any workload lacks it.
func geoCPU(s *stats.Summary, mode string) float64 {
	if s == nil || len(s.Workloads) == 0 {
		return 0
	}
	sum := 0.0
	for _, w := range s.Workloads {
		g := s.Group(stats.Key{Mode: mode, Workload: w.Workload, Conns: w.Conns})
		if g == nil || !(g.CPUUsPerReq.Median > 0) {
			return 0
		}
		sum += math.Log(g.CPUUsPerReq.Median)
	}
	return math.Exp(sum / float64(len(s.Workloads)))
}

// drawDeployed writes one frontier chart per engine build into dir.
func drawDeployed(dir string, d *deployedFigures) error {
	if d == nil {
		return nil
	}
	by := map[string][]chart.FrontierPoint{}
	var engines []string
	for _, r := range d.Rows {
		if r.Error != "" {
			continue
		}
		if _, ok := by[r.Engine]; !ok {
			engines = append(engines, r.Engine)
		}
		by[r.Engine] = append(by[r.Engine], chart.FrontierPoint{Config: r.Configuration, CPUUs: r.CPUUs,
			Stopped: r.Stopped.Rate, StoppedLo: r.Stopped.Lo, StoppedHi: r.Stopped.Hi,
			Refused: r.Refused.Rate, RefusedLo: r.Refused.Lo, RefusedHi: r.Refused.Hi})
	}
	sort.Strings(engines)
	for _, e := range engines {
		var buf bytes.Buffer
		if err := chart.Frontier(&buf, e+": cost against protection, one point per configuration", by[e]); err != nil {
			continue // no configuration with a measured CPU: nothing to draw
		}
		name := "frontier-" + chart.FileSafe(e) + ".svg"
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, name), buf.Bytes()); err != nil {
			return err
		}
		d.Charts = append(d.Charts, name)
	}
	return nil
}

// rateCell prints a rate as "k / n = r% [lo, hi]".
func rateCell(r protection.Rate) string {
	if r.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%d / %d = %.1f%% [%.1f, %.1f]", r.K, r.N, 100*r.Rate, 100*r.Lo, 100*r.Hi)
}

// writeDeployed is "Protection as deployed": for every configuration of
// the run, attacks stopped and legitimate requests refused in blocking
// mode, per attack family, the rules refusing the most legitimate
// requests, and the cost–protection frontier charts.
func writeDeployed(m *md, fig *figures) {
	d := fig.Deployed
	if d == nil {
		return
	}
	m.p("## Protection as deployed")
	m.nl()
	m.p("%s", d.Report.Method)
	m.nl()
	m.p("Attacks: %s. Legitimate corpora: %s. CPU: geometric mean over the run's workloads of the median Envoy CPU µs per request.", d.Report.Suite, strings.Join(corporaNotes(d.Report), "; "))
	m.nl()
	m.head("mode", "configuration", "CPU µs/req", "attacks stopped (403)", "legitimate refused (403)", "other status (attacks / legitimate)")
	for _, r := range d.Rows {
		if r.Error != "" {
			m.row("`"+r.Mode+"`", r.Configuration, "", "not measured: "+r.Error, "", "")
			continue
		}
		m.row("`"+r.Mode+"`", r.Configuration, cpuCell(r.CPUUs), rateCell(r.Stopped), rateCell(r.Refused),
			fmt.Sprintf("%d / %d", r.AttacksOther, r.LegitOther))
	}
	m.nl()
	writeStoppedByFamily(m, d)
	writeRefusingRules(m, d)
	for _, c := range d.Charts {
		m.p("![%s](%s/%s)", strings.TrimSuffix(c, ".svg"), ChartsDir, c)
		m.nl()
	}
}

// corporaNotes is one phrase per legitimate corpus: its size, source and
// the values left out as attacks by design.
func corporaNotes(rep *protection.Report) []string {
	var corpora []string
	for _, c := range rep.Corpora {
		s := fmt.Sprintf("%s: %d values, %s", c.Name, c.Count, c.Source)
		var ex []string
		for k, v := range c.Excluded {
			ex = append(ex, fmt.Sprintf("%d of \"%s\"", v, k))
		}
		sort.Strings(ex)
		if len(ex) > 0 {
			s += "; left out as attacks by design: " + strings.Join(ex, ", ")
		}
		corpora = append(corpora, s)
	}
	return corpora
}

// families is every attack family any row stopped, sorted.
func (d *deployedFigures) families() []string {
	fams := map[string]bool{}
	for _, r := range d.Rows {
		for _, c := range r.StoppedByClass {
			fams[c.Class] = true
		}
	}
	var names []string
	for f := range fams {
		names = append(names, f)
	}
	sort.Strings(names)
	return names
}

// writeStoppedByFamily is the table of attacks stopped per family:
// families as rows, modes as columns.
func writeStoppedByFamily(m *md, d *deployedFigures) {
	names := d.families()
	if len(names) == 0 {
		return
	}
	cells := []string{"attack family"}
	for _, r := range d.Rows {
		cells = append(cells, "`"+r.Mode+"`")
	}
	m.p("Attacks stopped per family (rule file: SQLi 942, XSS 941, RCE 932, LFI 930, RFI 931, PHP 933, Java 944, protocol 920/921, …), %% [Wilson 95%%]:")
	m.nl()
	m.head(cells...)
	for _, f := range names {
		row := []string{f}
		for _, r := range d.Rows {
			cell := "–"
			for _, c := range r.StoppedByClass {
				if c.Class == f {
					cell = fmt.Sprintf("%d/%d %.0f%% [%.0f, %.0f]", c.K, c.N, 100*c.Rate.Rate, 100*c.Lo, 100*c.Hi)
				}
			}
			row = append(row, cell)
		}
		m.row(row...)
	}
	m.nl()
}

// writeRefusingRules is the table of the rules refusing the most
// legitimate requests per mode.
func writeRefusingRules(m *md, d *deployedFigures) {
	m.p("Rules that refused the most legitimate requests (requests in which the rule matched, of those the anomaly evaluation denied):")
	m.nl()
	m.head("mode", "refused by placement", "top rules (requests)")
	for _, r := range d.Rows {
		var pl, rules []string
		for _, c := range r.RefusedByClass {
			pl = append(pl, fmt.Sprintf("%s %d/%d", c.Class, c.K, c.N))
		}
		for _, t := range r.TopRules {
			rules = append(rules, fmt.Sprintf("%d (%d)", t.ID, t.Requests))
		}
		top := strings.Join(rules, ", ")
		if top == "" {
			top = r.TopRulesNote
		}
		m.row("`"+r.Mode+"`", strings.Join(pl, ", "), top)
	}
	m.nl()
}
