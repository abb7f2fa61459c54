package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"wafbench/driver/maxrate"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// writeMaxRate writes the "Max rate found" section of a run --max-rate-at:
// per record and method, the rate at which a window meets the objective
// with probability one half, fitted to every window the method probed
// (maxrate.Fit), with its 95% interval; the bracket its verdicts gave; the
// windows probed, the fewest requests a window's percentile was taken over
// and the wall time; and, where a trial ran both methods, whether the
// sweep's rate lies in the search's interval and the ratio of their wall
// times, with lines pooling the trials.
func writeMaxRate(m *md, fig *figures) {
	mr := buildMaxRate(fig.Records)
	if mr == nil {
		return
	}
	rs := mr.rs
	m.p("## Max rate found")
	m.nl()
	stop := "until two rates have failed"
	if !sweptPast(rs) {
		stop = "to its first failing rate"
	}
	if anchored(rs) {
		stop += "; each method then probes an anchor a quarter above the highest rate it saw fail (its failing windows bound how gently the pass curve falls)"
	}
	m.p(maxRateMethod, rs[0].MaxRate[0].Objective, stop)
	m.nl()
	m.p(maxRateFit)
	m.nl()
	m.head("trial", "mode", "workload", "method", "ran", "rate req/s", "95% interval req/s", "bracket req/s", "windows passed / failed", "fewest requests", "wall s", "sweep's rate in search's interval", "wall ÷ sweep's")
	for _, row := range mr.rows {
		r, x, est := row.r, row.x, row.est
		rate, iv := "–", "–"
		if row.ok {
			rate, iv = f(est.Rate, 0), "["+openEnd(est.Low)+", "+openEnd(est.High)+"]"
		}
		ratio := ""
		if row.hasWall {
			ratio = f(row.wallRatio, 2) + "×"
		}
		m.row(itoa(r.Trial), r.Mode, r.Workload+"@"+itoa(r.Conns), x.Method, ran(r.MaxRate, x), rate, iv, bracket(x),
			itoa(est.Passed)+" / "+itoa(est.Failed), fewest(x.Steps), f(x.WallS, 1), row.in, ratio)
	}
	m.nl()
	if mr.both > 0 {
		m.p("The sweep's rate lies in the search's interval in %d of %d trials; the search's rate ÷ the sweep's is %s over the %d trials where both gave one (geometric mean, paired-t 95%% CI): %s. The search's wall time ÷ the sweep's is %s.", mr.agree, mr.both, geoCI(mr.rates), len(mr.rates), rateVerdict(mr.rates), geoCI(mr.walls))
		m.nl()
		if mr.alternated {
			m.p("The method that ran first alternated by repeat (*ran*).")
			m.nl()
		}
	}
	writeMaxRateNotes(m, rs)
}

// writeMaxRateNotes names the searches' starting rates and the rates
// whose windows disagreed.
func writeMaxRateNotes(m *md, rs []*result.Record) {
	var caps []string
	for _, r := range rs {
		if x := r.MaxRate[0]; x.Capacity > 0 && len(x.Steps) > 0 {
			caps = append(caps, "trial "+itoa(r.Trial)+" "+r.Mode+" "+f(x.Capacity, 0)+" → "+f(x.Steps[0].Rate, 0))
		}
	}
	if len(caps) > 0 {
		m.p("Searches given no start began at half the throughput of a closed-loop window measured first (within the limit), req/s: %s.", strings.Join(caps, "; "))
		m.nl()
	}
	if split := splitVotes(rs); len(split) > 0 {
		m.p("Rates whose windows disagreed (the majority decided): %s.", strings.Join(split, "; "))
		m.nl()
	}
}

// maxRateMethod says how a max rate is searched; its verbs are the
// objective and how far a sweep goes.
const maxRateMethod = "Objective `%s`. Each probe is a validated open-loop window: it passes when it held its rate, had no errors and met the objective. Each rate's verdict is the majority of its windows (probing it stops once one side holds the majority). The search doubles the rate to the first failing rate, then bisects to the tolerance; a sweep steps a fixed grid upward %s. The *bracket* runs from the highest rate that passed before the first failing rate to that rate (`–`: none failed up to the limit)."

// maxRateFit says what the fitted rate is.
const maxRateFit = "Near the limit one rate passes some windows and fails others, so a bracket depends on how many chances to fail its method took (a sweep walks up every rate below the limit). *Rate* is where a window meets the objective with probability ½: a logistic curve in ln rate fitted to all of the method's windows (Firth's penalized likelihood), with its 95%% profile-likelihood interval (`–`: open beyond the rates probed; no rate where the windows all passed or all failed). Search and sweep agree when the sweep's rate lies in the search's interval. *Fewest requests* is the smallest count a window's percentile was taken over (a p99 over fewer than 100 requests is its slowest one's latency)."

// bracket is x's [Rate, Above), "–" for an end it lacks.
func bracket(x *maxrate.Result) string {
	if x.Above == 0 {
		return "[" + f(x.Rate, 0) + ", –)"
	}
	return "[" + f(x.Rate, 0) + ", " + f(x.Above, 0) + ")"
}

// openEnd is an interval end, "–" when open (0).
func openEnd(v float64) string {
	if v == 0 {
		return noValue
	}
	return f(v, 0)
}

// anchored reports whether some method of rs ended with an anchor rate.
func anchored(rs []*result.Record) bool {
	for _, r := range rs {
		for _, x := range r.MaxRate {
			if n := len(x.Steps); n > 0 && x.Steps[n-1].Phase == "anchor" {
				return true
			}
		}
	}
	return false
}

// sweptPast reports whether some sweep of rs probed a rate after its first
// failing one (maxrate.SweepPast; sweeps before it stopped there).
func sweptPast(rs []*result.Record) bool {
	for _, r := range rs {
		for _, x := range r.MaxRate {
			if x.Method == "sweep" && x.Above > 0 && slices.ContainsFunc(x.Steps, func(s maxrate.Step) bool { return s.Phase == "sweep" && s.Rate > x.Above }) {
				return true
			}
		}
	}
	return false
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

// fewest is the smallest request count of steps' windows, "–" when a
// window did not record one (runs before the count was kept).
func fewest(steps []maxrate.Step) string {
	n := int64(-1)
	for _, s := range steps {
		if s.Requests == 0 && s.Errors == 0 {
			return noValue
		}
		if n < 0 || s.Requests < n {
			n = s.Requests
		}
	}
	if n < 0 {
		return noValue
	}
	return itoa(int(n))
}
