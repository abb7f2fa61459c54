package report

import (
	"fmt"
	"math"
	"sort"

	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// soakMinPoints is the shortest RSS series the soak section fits: half a
// minute of once-a-second samples.
const soakMinPoints = 30

// soakVerdict words a slope of resident memory (MiB per minute).
func soakVerdict(s stats.Slope) string {
	switch {
	case math.IsNaN(s.PerX):
		return "too few samples"
	case s.Lo > 0:
		return "**growing**: the interval excludes 0"
	case s.Hi < 0:
		return "shrinking: the interval excludes 0"
	}
	return "no slope established (the interval includes 0)"
}

// writeSoak states, for each window whose proxy RSS was sampled every
// second (windows of a minute or more: the soak suite), the least-squares
// slope of RSS over the window with its 95% interval, and the window's
// errors.
func writeSoak(m *md, fig *figures) {
	var rows []*result.Record
	for i := range fig.Records {
		if len(fig.Records[i].RSSSeriesKiB) >= soakMinPoints {
			rows = append(rows, &fig.Records[i])
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool { return modes.Rank(rows[i].Mode) < modes.Rank(rows[j].Mode) })
	m.p("## Soak: resident memory over the window")
	m.nl()
	m.p("The proxy's VmRSS read once a second through each measured window of a minute or more, and its least-squares slope in MiB per minute with a 95%% t interval. Successive readings are autocorrelated, so the interval is narrower than an independent-samples one would be: a **growing** verdict is a lead to follow with a longer soak, not proof of a leak. Latency drift between the first and last minute is not recorded yet (the load engine keeps one histogram per window).")
	m.nl()
	m.head("mode", "workload", "repeat", "minutes", "RSS first → last MiB", "slope MiB/min [95% CI]", "errors", "verdict")
	for _, r := range rows {
		y := make([]float64, len(r.RSSSeriesKiB))
		for i, v := range r.RSSSeriesKiB {
			y[i] = float64(v) / 1024
		}
		s := stats.LinearSlope(y, 1.0/60) // one sample a second: x in minutes
		var errs int64
		for _, n := range r.Errors {
			errs += n
		}
		m.row("`"+r.Mode+"`", "`"+r.Workload+"`", fmt.Sprint(r.Repeat), fmt.Sprintf("%.1f", float64(len(y)-1)/60),
			fmt.Sprintf("%.1f → %.1f", y[0], y[len(y)-1]), fmt.Sprintf("%.3f [%.3f, %.3f]", s.PerX, s.Lo, s.Hi),
			fmt.Sprint(errs), soakVerdict(s))
	}
	m.nl()
}
