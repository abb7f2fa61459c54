package report

import (
	"math"

	"wafbench/driver/stats"
)

// blockRow is one paired comparison pooled over machines
// (stats.AnalyseBlocks), with each machine's own ratio.
type blockRow struct {
	wl              stats.WorkloadKey
	name, metric    string
	machines        []machineRatio // per block; ok false where the machine has no pair
	sdPct, sharePct float64        // between-machine SD exp(τ) − 1 and share τ²/(τ² + σ²), %; NaN where not estimable
	ratio, lo, hi   float64
	df, p, pHolm    float64
	verdict, reason string
}

// machineRatio is one machine's geometric-mean ratio with its paired-t
// interval over its n repeats.
type machineRatio struct {
	ok          bool
	geo, lo, hi float64
	n           int
}

// buildBlockRows analyses every comparison of s with machines as blocks;
// reps[b] lists the repeats machine b ran.
func buildBlockRows(s *stats.Summary, reps [][]int) []blockRow {
	var rows []blockRow
	for _, c := range stats.AnalyseBlocks(s, reps) {
		r := blockRow{wl: c.WorkloadKey, name: c.Name(), metric: c.Metric.Label(), machines: make([]machineRatio, len(reps)),
			sdPct: math.NaN(), sharePct: 100 * c.BetweenShare(), ratio: c.Ratio, lo: c.Lo, hi: c.Hi,
			df: c.DF, p: c.P, pHolm: c.PHolm, verdict: c.Verdict, reason: c.Reason}
		for _, br := range c.Blocks {
			r.machines[br.Block] = machineRatio{true, br.Geo, br.Lo, br.Hi, br.N}
		}
		if !math.IsNaN(c.Tau2) {
			r.sdPct = 100 * (math.Exp(math.Sqrt(c.Tau2)) - 1)
		}
		rows = append(rows, r)
	}
	return rows
}
