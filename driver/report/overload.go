package report

import (
	"fmt"
	"sort"
	"strings"

	"wafbench/driver/modes"
)

// writeOverload answers "does a WAF keep blocking when it is overloaded?":
// per mode and offered load, what the open-loop window achieved, Envoy's
// RSS growth over it, and every answer the concurrent attack stream got. A
// WAF mode fails open when any attack was answered 200. Nothing is written
// without attack-stream records.
func writeOverload(m *md, fig *figures) {
	o := buildOverload(fig.Records)
	if o == nil {
		return
	}
	m.p("## Overload and attacks")
	m.nl()
	m.p("Open loop at a multiple of each mode's closed-loop capacity measured earlier in the same trial, with a second generator sending an attack on a new connection at a fixed rate and recording every answer. A WAF mode fails open if any attack was answered 200; 403, a refused or reset connection, or a timeout are not passes. RSS growth is Envoy's resident memory at the end of the window minus after the warm-up.")
	m.nl()
	m.head("mode", "load", "capacity req/s", "offered req/s", "achieved req/s", "errors", "attacks", "answers", "RSS growth MiB", "result")
	for _, row := range o.rows {
		r := row.r
		var labels []string
		for k, v := range r.Attacks {
			labels = append(labels, fmt.Sprintf("%s×%d", k, v))
		}
		sort.Strings(labels)
		res := map[overloadOutcome]string{overloadHeld: "held", overloadNoWAF: "no WAF (attacks reach the upstream)",
			overloadNoAnswer:   "no attack answered in the window",
			overloadFailedOpen: fmt.Sprintf("**FAILED OPEN** (%d attacks answered 200)", row.passed)}[row.outcome]
		m.row("`"+r.Mode+"`", f(r.LoadFraction*100, 0)+"%", f(r.CapacityPerS, 0), f(r.RateRequestedPerS, 0),
			f(r.RateAchievedPerS, 0), fmt.Sprint(row.errors), fmt.Sprint(row.total), strings.Join(labels, " "), f(row.growthMiB, 1), res)
	}
	m.nl()
	for _, md := range o.order {
		switch {
		case !modes.IsWAF(md):
		case o.open[md] > 0:
			m.p("- `%s`: **failed open** under overload: %d attacks answered 200.", md, o.open[md])
		default:
			m.p("- `%s`: never failed open: no attack was answered 200 at any load.", md)
		}
	}
	m.nl()
}
