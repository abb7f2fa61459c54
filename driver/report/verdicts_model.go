package report

import (
	"wafbench/driver/stats"
)

// verdictsModel is the Verdicts section's content: per Holm family how
// many comparisons are established, the comparisons not established
// although their ratio is far from 1, and the assumption checks.
type verdictsModel struct {
	block    float64 // seconds per repeat of every mode
	families []familyCount
	far      []*stats.Comparison // not established, ratio outside [nearLo, nearHi]
	near     int                 // not established, ratio inside
	checked  int                 // comparisons whose assumptions were checked
	flagged  []*stats.Comparison // of those, the ones a check flagged
}

// familyCount is one Holm family: n comparisons, est established.
type familyCount struct {
	family stats.Family
	n, est int
}

// buildVerdicts computes the section's figures from the summary s and the
// block time of one repeat.
func buildVerdicts(s *stats.Summary, block float64) *verdictsModel {
	v := &verdictsModel{block: block}
	for _, fam := range stats.Families {
		fc := familyCount{family: fam}
		for i := range s.Comparisons {
			if c := &s.Comparisons[i]; c.Family == fam {
				fc.n++
				if c.Verdict != stats.NotEstablished {
					fc.est++
				}
			}
		}
		if fc.n > 0 {
			v.families = append(v.families, fc)
		}
	}
	for i := range s.Comparisons {
		c := &s.Comparisons[i]
		switch {
		case c.Verdict != stats.NotEstablished:
		case c.GeoRatio >= nearLo && c.GeoRatio <= nearHi:
			v.near++
		default:
			v.far = append(v.far, c)
		}
	}
	for i := range s.Comparisons {
		c := &s.Comparisons[i]
		if !c.Assumptions.Checked {
			continue
		}
		v.checked++
		if c.Assumptions.String() != "" {
			v.flagged = append(v.flagged, c)
		}
	}
	return v
}
