package report

import (
	"fmt"
	"sort"
	"strings"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// writeOverload answers "does a WAF keep blocking when it is overloaded?":
// per mode and offered load, what the open-loop window achieved, Envoy's
// RSS growth over it, and every answer the concurrent attack stream got. A
// WAF mode fails open when any attack was answered 200. Nothing is written
// without attack-stream records.
func writeOverload(m *md, fig *figures) {
	recs := fig.Records
	var rows []*result.Record
	for i := range recs {
		if recs[i].AttackWorkload != "" {
			rows = append(rows, &recs[i])
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if modes.Rank(rows[i].Mode) != modes.Rank(rows[j].Mode) {
			return modes.Rank(rows[i].Mode) < modes.Rank(rows[j].Mode)
		}
		return rows[i].LoadFraction < rows[j].LoadFraction
	})
	m.p("## Overload and attacks")
	m.nl()
	m.p("Open loop at a multiple of each mode's closed-loop capacity measured earlier in the same trial, with a second generator sending an attack on a new connection at a fixed rate and recording every answer. A WAF mode fails open if any attack was answered 200; 403, a refused or reset connection, or a timeout are not passes. RSS growth is Envoy's resident memory at the end of the window minus after the warm-up.")
	m.nl()
	m.head("mode", "load", "capacity req/s", "offered req/s", "achieved req/s", "errors", "attacks", "answers", "RSS growth MiB", "result")
	open := map[string]int64{}
	seen := map[string]bool{}
	var order []string
	for _, r := range rows {
		var total int64
		var labels []string
		for k, v := range r.Attacks {
			total += v
			labels = append(labels, fmt.Sprintf("%s×%d", k, v))
		}
		sort.Strings(labels)
		res := "held"
		if modes.IsWAF(r.Mode) {
			if n := r.Attacks["200"]; n > 0 {
				open[r.Mode] += n
				res = fmt.Sprintf("**FAILED OPEN** (%d attacks answered 200)", n)
			}
		} else {
			res = "no WAF (attacks reach the upstream)"
		}
		if total == 0 {
			res = "no attack answered in the window"
		}
		var errs int64
		for _, v := range r.Errors {
			errs += v
		}
		if !seen[r.Mode] {
			seen[r.Mode] = true
			order = append(order, r.Mode)
		}
		growth := noValue
		if r.Memory.RSSEndKiB > 0 {
			growth = f(float64(r.Memory.RSSEndKiB-r.Memory.RSSAfterWarmupKiB)/1024, 1)
		}
		m.row("`"+r.Mode+"`", f(r.LoadFraction*100, 0)+"%", f(r.CapacityPerS, 0), f(r.RateRequestedPerS, 0),
			f(r.RateAchievedPerS, 0), fmt.Sprint(errs), fmt.Sprint(total), strings.Join(labels, " "), growth, res)
	}
	m.nl()
	for _, md := range order {
		switch {
		case !modes.IsWAF(md):
		case open[md] > 0:
			m.p("- `%s`: **failed open** under overload: %d attacks answered 200.", md, open[md])
		default:
			m.p("- `%s`: never failed open: no attack was answered 200 at any load.", md)
		}
	}
	m.nl()
}
