package report

import (
	"wafbench/driver/maxrate"
	"wafbench/driver/result"
)

// maxRateModel is the Max rate section's content: one row per trial and
// method, and where a trial ran both methods, how search and sweep agree.
type maxRateModel struct {
	rs         []*result.Record // records with a max-rate result
	rows       []maxRateRow
	both       int       // trials that ran both methods
	agree      int       // of those, where the sweep's rate lies in the search's interval
	rates      []float64 // search's rate ÷ sweep's, where both gave one
	walls      []float64 // search's wall time ÷ sweep's
	alternated bool      // the method that ran first alternated by repeat
}

// maxRateRow is one method of one trial: its fitted rate (ok false when
// the fit gave none) and, on the search's row of a trial that ran both,
// whether the sweep's rate lies in its interval ("yes", "no", "no rate")
// and the wall-time ratio (hasWall false without a sweep wall time).
type maxRateRow struct {
	r         *result.Record
	x         *maxrate.Result
	est       maxrate.Estimate
	ok        bool
	in        string
	wallRatio float64
	hasWall   bool
}

// buildMaxRate computes the section; nil when no record has a max-rate
// result.
func buildMaxRate(recs []result.Record) *maxRateModel {
	mr := &maxRateModel{}
	for i := range recs {
		if len(recs[i].MaxRate) > 0 {
			mr.rs = append(mr.rs, &recs[i])
		}
	}
	if len(mr.rs) == 0 {
		return nil
	}
	for _, r := range mr.rs {
		var search, sweep *maxrate.Result
		for _, x := range r.MaxRate {
			if x.Method == "sweep" {
				sweep = x
			} else {
				search = x
			}
		}
		for _, x := range r.MaxRate {
			row := maxRateRow{r: r, x: x}
			row.est, row.ok = maxrate.Fit(x.Steps)
			if x == search && sweep != nil {
				mr.compare(&row, search, sweep)
			}
			mr.rows = append(mr.rows, row)
		}
	}
	mr.alternated = alternated(mr.rs)
	return mr
}

// compare fills the search row of a trial that ran both methods.
func (mr *maxRateModel) compare(row *maxRateRow, search, sweep *maxrate.Result) {
	mr.both++
	se, okSe := maxrate.Fit(search.Steps)
	sw, okSw := maxrate.Fit(sweep.Steps)
	switch {
	case okSe && okSw && se.Contains(sw.Rate):
		row.in = "yes"
		mr.agree++
	case okSe && okSw:
		row.in = "no"
	default:
		row.in = "no rate"
	}
	if okSe && okSw {
		mr.rates = append(mr.rates, se.Rate/sw.Rate)
	}
	if sweep.WallS > 0 {
		row.wallRatio, row.hasWall = search.WallS/sweep.WallS, true
		mr.walls = append(mr.walls, search.WallS/sweep.WallS)
	}
}
