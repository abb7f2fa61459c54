package report

import (
	"math"
	"sort"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// overloadModel is the Overload and attacks section's content: one row per
// attack-stream record (modes in registry order, then by load), and per
// WAF mode the attacks answered 200 over every load.
type overloadModel struct {
	rows  []overloadRow
	order []string         // modes in the order of their first row
	open  map[string]int64 // WAF mode → attacks answered 200
}

// overloadOutcome is what the attack stream got in one window.
type overloadOutcome int

const (
	overloadHeld       overloadOutcome = iota // no attack answered 200
	overloadFailedOpen                        // a WAF mode answered an attack 200
	overloadNoWAF                             // no WAF: attacks reach the upstream
	overloadNoAnswer                          // no attack answered in the window
)

// overloadRow is one window: its attack answers (total over statuses),
// errors, RSS growth (NaN without an end RSS) and outcome; passed counts
// the attacks answered 200 when the outcome is overloadFailedOpen.
type overloadRow struct {
	r         *result.Record
	total     int64
	errors    int64
	growthMiB float64
	outcome   overloadOutcome
	passed    int64
}

// buildOverload computes the section; nil without attack-stream records.
func buildOverload(recs []result.Record) *overloadModel {
	var rs []*result.Record
	for i := range recs {
		if recs[i].AttackWorkload != "" {
			rs = append(rs, &recs[i])
		}
	}
	if len(rs) == 0 {
		return nil
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if modes.Rank(rs[i].Mode) != modes.Rank(rs[j].Mode) {
			return modes.Rank(rs[i].Mode) < modes.Rank(rs[j].Mode)
		}
		return rs[i].LoadFraction < rs[j].LoadFraction
	})
	o := &overloadModel{open: map[string]int64{}}
	seen := map[string]bool{}
	for _, r := range rs {
		row := overloadRow{r: r, growthMiB: math.NaN()}
		for _, v := range r.Attacks {
			row.total += v
		}
		if !modes.IsWAF(r.Mode) {
			row.outcome = overloadNoWAF
		} else if n := r.Attacks["200"]; n > 0 {
			o.open[r.Mode] += n
			row.outcome, row.passed = overloadFailedOpen, n
		}
		if row.total == 0 {
			row.outcome = overloadNoAnswer
		}
		for _, v := range r.Errors {
			row.errors += v
		}
		if !seen[r.Mode] {
			seen[r.Mode] = true
			o.order = append(o.order, r.Mode)
		}
		if r.Memory.RSSEndKiB > 0 {
			row.growthMiB = float64(r.Memory.RSSEndKiB-r.Memory.RSSAfterWarmupKiB) / 1024
		}
		o.rows = append(o.rows, row)
	}
	return o
}
