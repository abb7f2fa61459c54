package report

import (
	"strings"

	"wafbench/driver/result"
)

// writeMaxRate writes the "Max rate found" section of a run --max-rate-at:
// per record, each method's rate meeting the objective, its interval
// [rate, lowest failing rate), the windows probed and the wall time taken,
// and, when a trial ran both, whether the search's rate falls inside the
// sweep's interval and the ratio of their wall times.
func writeMaxRate(m *md, fig *figures) {
	recs := fig.Records
	var rs []*result.Record
	for i := range recs {
		if len(recs[i].MaxRate) > 0 {
			rs = append(rs, &recs[i])
		}
	}
	if len(rs) == 0 {
		return
	}
	m.p("## Max rate found")
	m.nl()
	m.p("Objective `%s`. Each probe is a validated open-loop window: it passes when it held its rate, had no errors and met the objective. The search doubles the rate to the first failure, bisects to the tolerance, then repeats the rate found; its interval runs from the highest confirmed pass to the lowest failure (`–`: none failed up to the limit). A sweep steps a fixed grid to its first failure.", rs[0].MaxRate[0].Objective)
	m.nl()
	m.head("trial", "mode", "workload", "method", "rate req/s", "interval req/s", "windows", "wall s", "search in sweep's interval", "wall ÷ sweep's")
	for _, r := range rs {
		var search, sweep *struct{ rate, above, wall float64 }
		for _, x := range r.MaxRate {
			v := &struct{ rate, above, wall float64 }{x.Rate, x.Above, x.WallS}
			if x.Method == "sweep" {
				sweep = v
			} else {
				search = v
			}
		}
		for _, x := range r.MaxRate {
			iv := "[" + f(x.Rate, 0) + ", " + f(x.Above, 0) + ")"
			if x.Above == 0 {
				iv = "[" + f(x.Rate, 0) + ", –)"
			}
			in, ratio := "", ""
			if x.Method != "sweep" && search != nil && sweep != nil {
				// Both intervals hold the true limit: they agree when they overlap.
				lo, hi := max(search.rate, sweep.rate), min(orInf(search.above), orInf(sweep.above))
				in = map[bool]string{true: "yes", false: "no"}[lo < hi]
				if sweep.wall > 0 {
					ratio = f(search.wall/sweep.wall, 2) + "×"
				}
			}
			m.row(itoa(r.Trial), r.Mode, r.Workload+"@"+itoa(r.Conns), x.Method, f(x.Rate, 0), iv, itoa(len(x.Steps)), f(x.WallS, 1), in, ratio)
		}
	}
	m.nl()
	var why []string
	for _, r := range rs {
		for _, x := range r.MaxRate {
			for _, s := range x.Steps {
				if !s.Pass && s.Phase == "confirm" {
					why = append(why, r.Mode+" "+f(s.Rate, 0)+" req/s: "+s.Reason)
				}
			}
		}
	}
	if len(why) > 0 {
		m.p("Confirmations that failed (the search then settled lower): %s.", strings.Join(why, "; "))
		m.nl()
	}
}

func orInf(v float64) float64 {
	if v == 0 {
		return 1e300
	}
	return v
}
