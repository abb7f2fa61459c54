package report

import (
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// startupRow is one mode's start-up time (ms, median with its interval
// over trials) and RSS in MiB: medians after the warm-up and at the end,
// and the largest peak.
type startupRow struct {
	mode            string
	startup         stats.Estimate
	warm, end, peak float64
}

// buildStartup computes a row per mode of s; nil when no record carries a
// start-up time (a run whose summary has no mode still gets the section).
func buildStartup(recs []result.Record, s *stats.Summary) []startupRow {
	startup := map[string][]float64{} // mode → listener-ready ms per trial
	for i := range recs {
		r := &recs[i]
		if stats.Valid(r) && r.Startup != nil && r.Startup.ListenerReadyMs > 0 {
			startup[r.Mode] = append(startup[r.Mode], r.Startup.ListenerReadyMs)
		}
	}
	if len(startup) == 0 {
		return nil
	}
	rows := make([]startupRow, 0, len(s.Modes)) // empty, not nil, when s has no mode
	for _, mode := range s.Modes {
		var warm, end, peak []float64
		for i := range recs {
			r := &recs[i]
			if r.Mode == mode && stats.Valid(r) {
				warm = append(warm, kibToMiB(r.Memory.RSSAfterWarmupKiB))
				end = append(end, kibToMiB(r.Memory.RSSEndKiB))
				peak = append(peak, kibToMiB(r.Memory.PeakKiB))
			}
		}
		rows = append(rows, startupRow{mode: mode, startup: stats.Median(startup[mode]),
			warm: stats.Median(warm).Median, end: stats.Median(end).Median, peak: maxOf(peak)})
	}
	return rows
}
