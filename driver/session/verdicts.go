package session

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"wafbench/driver/modes"
	"wafbench/driver/report"
	"wafbench/driver/stats"
)

// cpuVerdict is one WAF mode's Envoy CPU per request over passthrough's on
// one workload, as the report's summary.json states it: the geometric mean
// of the per-repeat paired ratios, its paired-t 95% interval (NaN when
// the summary gives none) and the verdict.
type cpuVerdict struct {
	Mode, Workload string
	Ratio, Lo, Hi  float64
	Verdict        string
	Reason         string // why not established
}

// summaryComparison is the part of a summary.json comparison the verdicts
// read; a null number (no interval) stays nil.
type summaryComparison struct {
	Workload string   `json:"workload"`
	Conns    int      `json:"conns"`
	Num      string   `json:"numerator"`
	Den      string   `json:"denominator"`
	Metric   string   `json:"metric"`
	Geo      *float64 `json:"geomean_ratio"`
	Lo       *float64 `json:"paired_t_ci_lo"`
	Hi       *float64 `json:"paired_t_ci_hi"`
	Verdict  string   `json:"verdict"`
	Reason   string   `json:"reason"`
}

// readVerdicts reads, from the summary.json the report wrote into dir,
// every comparison of a mode against passthrough on Envoy CPU per
// request, in the summary's order.
func readVerdicts(dir string) ([]cpuVerdict, error) {
	b, err := os.ReadFile(filepath.Join(dir, report.SummaryFile))
	if err != nil {
		return nil, err
	}
	var s struct {
		Comparisons []summaryComparison `json:"comparisons"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", report.SummaryFile, err)
	}
	num := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	var out []cpuVerdict
	for _, c := range s.Comparisons {
		if c.Den != modes.Baseline || c.Metric != string(stats.MetricCPU) || c.Geo == nil {
			continue
		}
		out = append(out, cpuVerdict{Mode: c.Num, Workload: fmt.Sprintf("%s@%d", c.Workload, c.Conns),
			Ratio: *c.Geo, Lo: num(c.Lo), Hi: num(c.Hi), Verdict: c.Verdict, Reason: c.Reason})
	}
	return out, nil
}

// printVerdicts prints the verdicts of the report just built in dir; a
// run whose one repeat gives no interval says so.
func (p *Plan) printVerdicts(stdout, stderr io.Writer, dir string) {
	vs, err := readVerdicts(dir)
	if err != nil {
		fmt.Fprintf(stderr, "wafbench: verdicts: %v\n", err)
		return
	}
	if len(vs) == 0 && p.Design.Repeats < 2 && slices.Contains(p.Modes, modes.Baseline) && len(p.Modes) > 1 {
		fmt.Fprintf(stdout, "\nNo verdicts: %d repeat gives no paired interval against %s; a verdict needs --repeats ≥ %d\n",
			p.Design.Repeats, modes.Baseline, stats.MinSamples)
	}
	writeVerdicts(stdout, vs)
}

// writeVerdicts prints the verdicts as benchstat prints its table: one row
// per workload, one column per WAF mode, each cell the ratio, its
// interval and the verdict in words. Nothing when there is none.
func writeVerdicts(w io.Writer, vs []cpuVerdict) {
	if len(vs) == 0 {
		return
	}
	var ms, wls []string
	cell := map[[2]string]string{}
	for _, v := range vs {
		if !slices.Contains(ms, v.Mode) {
			ms = append(ms, v.Mode)
		}
		if !slices.Contains(wls, v.Workload) {
			wls = append(wls, v.Workload)
		}
		cell[[2]string{v.Workload, v.Mode}] = verdictCell(v)
	}
	fmt.Fprintf(w, "\nEnvoy CPU per request ÷ %s: geo-mean of paired ratios [95%% CI, paired t], verdict by Holm-adjusted paired t at α %g\n",
		modes.Baseline, stats.Alpha)
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintf(tw, "workload\t%s\n", strings.Join(ms, "\t"))
	for _, wl := range wls {
		row := []string{wl}
		for _, m := range ms {
			row = append(row, cell[[2]string{wl, m}])
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// verdictCell is "9.32 [8.45, 10.28] established: higher" or
// "1.04 [0.97, 1.11] not established (Holm p=0.2 ≥ 0.05)".
func verdictCell(v cpuVerdict) string {
	ci := "[no interval]"
	if !math.IsNaN(v.Lo) && !math.IsNaN(v.Hi) {
		ci = fmt.Sprintf("[%.2f, %.2f]", v.Lo, v.Hi)
	}
	verdict := v.Verdict
	switch {
	case verdict != stats.NotEstablished:
		verdict = "established: " + verdict
	case v.Reason != "":
		verdict += " (" + v.Reason + ")"
	}
	return fmt.Sprintf("%.2f %s %s", v.Ratio, ci, verdict)
}
