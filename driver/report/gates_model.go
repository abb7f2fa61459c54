package report

import (
	"strings"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// gatesModel is the Qualification gates section's content: every gate per
// mode judged on the worst repeat, and per mode the gates it failed.
type gatesModel struct {
	modes  []string
	rows   []gateRow
	failed map[string][]string // mode → names of the gates it failed
}

// gateRow is one gate of one mode. measured is false when a repeat failed
// or completed no request (why says which); hasRatio is false without a
// passthrough figure to divide by.
type gateRow struct {
	mode     string
	g        gate
	measured bool
	worst    float64
	why      string
	ratio    float64
	hasRatio bool
	pass     bool
}

// buildGates judges the gates; nil unless the run is of the gates suite
// (its own workloads are named gate_*).
func buildGates(recs []result.Record) *gatesModel {
	byKey := map[[2]string][]*result.Record{} // mode, workload@conns
	gm := &gatesModel{failed: map[string][]string{}}
	seen := map[string]bool{}
	has := false
	for i := range recs {
		r := &recs[i]
		k := [2]string{r.Mode, r.Workload + "@" + itoa(r.Conns)}
		byKey[k] = append(byKey[k], r)
		if !seen[r.Mode] {
			seen[r.Mode] = true
			gm.modes = append(gm.modes, r.Mode)
		}
		has = has || strings.HasPrefix(r.Workload, "gate_")
	}
	if !has {
		return nil
	}
	modes.Sort(gm.modes)
	for _, md := range gm.modes {
		for _, g := range gates {
			rs := byKey[[2]string{md, g.Workload}]
			if len(rs) == 0 {
				continue
			}
			row := judgeGate(md, g, rs, byKey[[2]string{modes.Passthrough, g.Workload}])
			if !row.pass {
				gm.failed[md] = append(gm.failed[md], g.Name)
			}
			gm.rows = append(gm.rows, row)
		}
	}
	return gm
}

// judgeGate judges g on mode md's repeats rs, beside passthrough's base.
func judgeGate(md string, g gate, rs, base []*result.Record) gateRow {
	row := gateRow{mode: md, g: g, measured: true}
	for i, r := range rs {
		v, have := gateValue(r, g.Metric)
		if r.Error != "" || !have {
			row.measured, row.why = false, orNone(r.Error)
			if !have && r.Error == "" {
				row.why = "no request completed"
			}
			return row
		}
		if i == 0 || (g.Min > 0 && v < row.worst) || (g.Min == 0 && v > row.worst) {
			row.worst = v
		}
	}
	row.pass = !(g.Min > 0 && row.worst < g.Min || g.Min == 0 && row.worst > g.Max)
	if len(base) > 0 && md != modes.Passthrough {
		if bv, have := gateValue(base[0], g.Metric); have && bv != 0 {
			row.ratio, row.hasRatio = row.worst/bv, true
		}
	}
	return row
}
