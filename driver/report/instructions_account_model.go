package report

import (
	"slices"

	"wafbench/driver/callgrind"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// accountModel is the cost account's content: one table per workload of
// instructions inside the hooks by category, and our glue's share of what
// each WAF mode adds, per workload and over all workloads.
type accountModel struct {
	waf      []string // WAF modes with an account, in summary order
	tables   []irAccountTable
	glue     []glueRow
	verdicts []glueVerdict
}

// irAccountCell is one mode's median Ir/request in a category; ok is false
// when the mode has no account on the workload.
type irAccountCell struct {
	ok     bool
	v, pct float64 // pct: percent of the mode's inside-hooks count
}

// irAccountTable is one workload's instructions inside the hooks by
// category (categories that are zero for every mode left out).
type irAccountTable struct {
	w      stats.WorkloadKey
	rows   []irAccountRow
	inside []irAccountCell // per mode in waf: the inside-hooks total
}

// irAccountRow is one category across the WAF modes.
type irAccountRow struct {
	cat   string
	cells []irAccountCell // per mode in waf
}

// glueRow is our glue against what the WAF adds for one mode and workload:
// medians over the repeats paired with passthrough, and the share's range.
type glueRow struct {
	mode               string
	w                  stats.WorkloadKey
	n                  int
	glue, added, share float64
	shareLo, shareHi   float64
	verdict            string    // "yes", "no", "not established"
	shares             []float64 // per paired repeat
}

// glueVerdict is one mode's verdict over every workload counted; hi is the
// largest share of any repeat.
type glueVerdict struct {
	mode    string
	verdict string
	hi      float64
}

type accountKey struct {
	mode string
	wl   stats.WorkloadKey
}

// accountInputs gathers per mode and workload the records' accounts, and
// passthrough's whole-Envoy Ir/request per repeat.
type accountInputs struct {
	accounts map[accountKey][]*result.Instructions
	pass     map[stats.WorkloadKey]map[int]float64
	repeats  map[*result.Instructions]int
}

// collectAccounts reads the valid records that carry instruction counts.
func collectAccounts(recs []result.Record) accountInputs {
	in := accountInputs{map[accountKey][]*result.Instructions{}, map[stats.WorkloadKey]map[int]float64{}, map[*result.Instructions]int{}}
	for i := range recs {
		r := &recs[i]
		ins := r.Instructions
		if !stats.Valid(r) || ins == nil || ins.Requests <= 0 {
			continue
		}
		w := stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}
		if r.Mode == modes.Passthrough {
			if in.pass[w] == nil {
				in.pass[w] = map[int]float64{}
			}
			in.pass[w][r.Repeat] = ins.EnvoyPerRequest()
			continue
		}
		if ins.Account != nil {
			in.repeats[ins] = r.Repeat
			k := accountKey{r.Mode, w}
			in.accounts[k] = append(in.accounts[k], ins)
		}
	}
	return in
}

// buildAccount computes the cost account; nil when no record carries one.
func buildAccount(recs []result.Record, s *stats.Summary) *accountModel {
	in := collectAccounts(recs)
	if len(in.accounts) == 0 {
		return nil
	}
	m := &accountModel{}
	for _, mode := range s.Modes {
		if mode != modes.Passthrough && slices.ContainsFunc(s.Workloads, func(w stats.WorkloadKey) bool { return len(in.accounts[accountKey{mode, w}]) > 0 }) {
			m.waf = append(m.waf, mode)
		}
	}
	for _, w := range s.Workloads {
		if slices.ContainsFunc(m.waf, func(mode string) bool { return len(in.accounts[accountKey{mode, w}]) > 0 }) {
			m.tables = append(m.tables, irAccountTableFor(in, m.waf, w))
		}
	}
	for _, mode := range m.waf {
		var all []float64
		for _, w := range s.Workloads {
			if row, ok := glueRowFor(in, mode, w); ok {
				m.glue = append(m.glue, row)
				all = append(all, row.shares...)
			}
		}
		if len(all) > 0 {
			m.verdicts = append(m.verdicts, glueVerdict{mode, glueVerdictOf(all), slices.Max(all)})
		}
	}
	return m
}

func irAccountTableFor(in accountInputs, waf []string, w stats.WorkloadKey) irAccountTable {
	t := irAccountTable{w: w}
	for _, mode := range waf {
		acc := in.accounts[accountKey{mode, w}]
		t.inside = append(t.inside, irAccountCell{ok: len(acc) > 0, v: instrMedian(acc, (*result.Instructions).HooksPerRequest).Median})
	}
	for _, cat := range callgrind.Categories {
		row, show := irAccountRow{cat: cat}, cat == callgrind.CatOther
		for i, mode := range waf {
			acc := in.accounts[accountKey{mode, w}]
			if len(acc) == 0 {
				row.cells = append(row.cells, irAccountCell{})
				continue
			}
			v := instrMedian(acc, func(x *result.Instructions) float64 { return x.AccountPerRequest(cat) }).Median
			show = show || v != 0
			row.cells = append(row.cells, irAccountCell{ok: true, v: v, pct: 100 * v / t.inside[i].v})
		}
		if show {
			t.rows = append(t.rows, row)
		}
	}
	return t
}

func glueRowFor(in accountInputs, mode string, w stats.WorkloadKey) (glueRow, bool) {
	var glue, added, share []float64
	for _, ins := range in.accounts[accountKey{mode, w}] {
		p, ok := in.pass[w][in.repeats[ins]]
		if !ok {
			continue
		}
		var gl float64
		for _, c := range callgrind.Glue {
			gl += ins.AccountPerRequest(c)
		}
		ad := ins.EnvoyPerRequest() - p
		glue, added, share = append(glue, gl), append(added, ad), append(share, gl/ad)
	}
	if len(share) == 0 {
		return glueRow{}, false
	}
	return glueRow{mode: mode, w: w, n: len(share), glue: stats.Median(glue).Median, added: stats.Median(added).Median,
		share: stats.Median(share).Median, shareLo: slices.Min(share), shareHi: slices.Max(share),
		verdict: glueVerdictOf(share), shares: share}, true
}

// glueVerdictOf is "yes" when every share is within glueLimit, "no" when
// every one is above, "not established" otherwise.
func glueVerdictOf(share []float64) string {
	switch {
	case slices.Max(share) <= glueLimit:
		return "yes"
	case slices.Min(share) > glueLimit:
		return "no"
	}
	return "not established"
}
