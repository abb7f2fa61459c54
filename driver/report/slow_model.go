package report

import (
	"slices"
	"sort"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// slowModel is the Slow clients section's content: the slow-client records
// in registry order of their modes, and per WAF mode the attack requests
// sent and those answered 200 (a bypass).
type slowModel struct {
	rows   []*result.Record
	order  []string // modes in the order of their first row
	bypass map[string]int64
	sent   map[string]int64
}

// buildSlow computes the section; nil without slow-client records.
func buildSlow(recs []result.Record) *slowModel {
	sm := &slowModel{bypass: map[string]int64{}, sent: map[string]int64{}}
	for i := range recs {
		if recs[i].Slow != nil {
			sm.rows = append(sm.rows, &recs[i])
		}
	}
	if len(sm.rows) == 0 {
		return nil
	}
	sort.SliceStable(sm.rows, func(i, j int) bool { return modes.Rank(sm.rows[i].Mode) < modes.Rank(sm.rows[j].Mode) })
	for _, r := range sm.rows {
		if !slices.Contains(sm.order, r.Mode) {
			sm.order = append(sm.order, r.Mode)
		}
		if modes.IsWAF(r.Mode) && r.Error == "" {
			sm.bypass[r.Mode] += r.Slow.Answers["200"]
			sm.sent[r.Mode] += int64(len(r.Slow.ElapsedMs))
		}
	}
	return sm
}
