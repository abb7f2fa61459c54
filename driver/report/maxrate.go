package report

import (
	"fmt"
	"math"
	"strings"

	"wafbench/driver/maxrate"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// writeMaxRate writes the "Max rate found" section of a run --max-rate-at:
// per record, each method's rate meeting the objective, its interval
// [rate, lowest failing rate), the windows probed and the wall time taken,
// the fewest requests a window's percentile was taken over, and, when a
// trial ran both, whether the two intervals overlap (both bracket the same
// limit) and the ratio of their wall times, with a line counting the
// trials that agree.
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
	how := "The search doubles the rate to the first failure, bisects to the tolerance, then repeats the rate found; its interval runs from the highest confirmed pass to the lowest failure (`–`: none failed up to the limit). A sweep steps a fixed grid to its first failure."
	if voted(rs) {
		how = "Each rate's verdict is the majority of its windows (probing it stops once one side holds the majority). The search doubles the rate to the first failing rate, then bisects to the tolerance; its interval runs from the highest passing rate to the lowest failing one (`–`: none failed up to the limit). A sweep steps a fixed grid to its first failing rate, with the same verdicts."
	}
	m.p("Objective `%s`. Each probe is a validated open-loop window: it passes when it held its rate, had no errors and met the objective. %s Search and sweep agree when their intervals overlap. *Fewest requests* is the smallest count a window's percentile was taken over (a p99 over fewer than 100 requests is its slowest one's latency; `–`: not recorded).", rs[0].MaxRate[0].Objective, how)
	m.nl()
	m.head("trial", "mode", "workload", "method", "ran", "rate req/s", "interval req/s", "windows", "fewest requests", "wall s", "search and sweep agree", "wall ÷ sweep's")
	var both, agree int
	var walls, rates []float64
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
				both++
				if lo < hi {
					agree++
				}
				if sweep.wall > 0 {
					ratio = f(search.wall/sweep.wall, 2) + "×"
					walls = append(walls, search.wall/sweep.wall)
				}
				if search.rate > 0 && sweep.rate > 0 {
					rates = append(rates, search.rate/sweep.rate)
				}
			}
			m.row(itoa(r.Trial), r.Mode, r.Workload+"@"+itoa(r.Conns), x.Method, ran(r.MaxRate, x), f(x.Rate, 0), iv, itoa(len(x.Steps)), fewest(x.Steps), f(x.WallS, 1), in, ratio)
		}
	}
	m.nl()
	if both > 0 {
		m.p("Search and sweep agree in %d of %d trials; the search's wall time ÷ the sweep's is %s (geometric mean over trials, paired-t 95%% CI).", agree, both, geoCI(walls))
		m.nl()
		if alternated(rs) {
			m.p("The method that ran first alternated by repeat (*ran*). The search's rate ÷ the sweep's is %s over the %d trials where both found one (geometric mean, paired-t 95%% CI): %s.", geoCI(rates), len(rates), rateVerdict(rates))
			m.nl()
		}
	}
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
	if split := splitVotes(rs); len(split) > 0 {
		m.p("Rates whose windows disagreed (the majority decided): %s.", strings.Join(split, "; "))
		m.nl()
	}
}

// rateVerdict says whether the rate ratios' interval shows the methods
// finding different rates.
func rateVerdict(rates []float64) string {
	if len(rates) < 2 {
		return "one trial, no interval"
	}
	_, lo, hi, _ := stats.PairedLogT(rates, stats.Confidence)
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return "no interval"
	case hi < 1:
		return "the search finds a lower rate (established)"
	case lo > 1:
		return "the search finds a higher rate (established)"
	}
	return fmt.Sprintf("no difference established; the interval spans %s%% to +%s%%", f(100*(lo-1), 1), f(100*(hi-1), 1))
}

// ran is "1st" or "2nd": x's place among the methods of its trial (no
// method marked first: the search ran first, as before the order
// alternated); empty when the trial ran one method.
func ran(all []*maxrate.Result, x *maxrate.Result) string {
	if len(all) < 2 {
		return ""
	}
	first := x.First
	if !all[0].First && !all[1].First {
		first = x.Method != "sweep"
	}
	if first {
		return "1st"
	}
	return "2nd"
}

// alternated reports whether some trial ran its sweep first.
func alternated(rs []*result.Record) bool {
	for _, r := range rs {
		for _, x := range r.MaxRate {
			if x.First && x.Method == "sweep" {
				return true
			}
		}
	}
	return false
}

// voted reports whether rs's rates were judged by votes (Step.Vote).
func voted(rs []*result.Record) bool {
	for _, r := range rs {
		for _, x := range r.MaxRate {
			for _, s := range x.Steps {
				if s.Vote > 0 {
					return true
				}
			}
		}
	}
	return false
}

// splitVotes lists, per record and method, each rate whose windows did not
// all agree: its verdict, the windows for it and the failing windows'
// reasons.
func splitVotes(rs []*result.Record) []string {
	var out []string
	for _, r := range rs {
		for _, x := range r.MaxRate {
			var pass, fail int
			var why []string
			for _, s := range x.Steps {
				if s.Vote == 0 {
					continue
				}
				if s.Vote == 1 {
					pass, fail, why = 0, 0, nil
				}
				if s.Pass {
					pass++
				} else {
					fail++
					why = append(why, s.Reason)
				}
				if s.Verdict != "" && pass > 0 && fail > 0 {
					out = append(out, r.Mode+" "+x.Method+" "+f(s.Rate, 0)+" req/s "+s.Verdict+"ed, "+itoa(pass)+" of "+itoa(pass+fail)+" windows passing ("+strings.Join(why, "; ")+")")
				}
			}
		}
	}
	return out
}

func orInf(v float64) float64 {
	if v == 0 {
		return 1e300
	}
	return v
}

// fewest is the smallest request count of steps' windows, "–" when a
// window did not record one (runs before the count was kept).
func fewest(steps []maxrate.Step) string {
	n := int64(-1)
	for _, s := range steps {
		if s.Requests == 0 && s.Errors == 0 {
			return "–"
		}
		if n < 0 || s.Requests < n {
			n = s.Requests
		}
	}
	if n < 0 {
		return "–"
	}
	return itoa(int(n))
}
