package stats

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// signedRankExactMax is the largest number of non-zero differences for which
// signedRankP enumerates the exact null distribution; above it the normal
// approximation (with the tie correction) is used. The enumeration costs
// O(n³) additions, about a millisecond at 100.
const signedRankExactMax = 100

// signedRankP is the two-sided p-value of the Wilcoxon signed-rank test of
// d against a location of 0. Zeros are dropped (Wilcoxon's convention); tied
// |d| get their mean rank. For up to signedRankExactMax non-zero values the
// p-value is exact: the permutation distribution of W+ (each rank's sign
// equally likely + or −), enumerated over doubled ranks so that mid-ranks of
// ties stay integers — exact with ties too. It returns 1 when no value is
// non-zero.
//
// Written by hand: golang.org/x/perf/benchmath and aclements/go-moremath
// offer only the two-sample Mann–Whitney U test, and gonum/stat has no rank
// tests.
func signedRankP(d []float64) float64 {
	var nz []float64
	for _, v := range d {
		if v != 0 && !math.IsNaN(v) {
			nz = append(nz, v)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(nz[idx[a]]) < math.Abs(nz[idx[b]]) })
	// rank2[i] is twice the (mid-)rank of |nz[i]|, an integer.
	rank2 := make([]int, n)
	var tieTerm float64 // Σ (t³ − t) over tie groups
	for i := 0; i < n; {
		j := i
		for j+1 < n && math.Abs(nz[idx[j+1]]) == math.Abs(nz[idx[i]]) {
			j++
		}
		// ranks i+1..j+1 share their mean (i+j+2)/2; doubled: i+j+2.
		for k := i; k <= j; k++ {
			rank2[idx[k]] = i + j + 2
		}
		if t := float64(j - i + 1); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j + 1
	}
	w2 := 0 // twice W+, the sum of the ranks of the positive values
	total := 0
	for i, v := range nz {
		total += rank2[i]
		if v > 0 {
			w2 += rank2[i]
		}
	}
	if n > signedRankExactMax {
		fn := float64(n)
		mean := fn * (fn + 1) / 4
		variance := fn*(fn+1)*(2*fn+1)/24 - tieTerm/48
		if variance <= 0 {
			return 1
		}
		w := float64(w2) / 2
		z := (math.Abs(w-mean) - 0.5) / math.Sqrt(variance) // continuity correction
		if z < 0 {
			z = 0
		}
		return math.Min(1, 2*distuv.UnitNormal.Survival(z))
	}
	// prob[s] = P(2·W+ = s) under the null, built one rank at a time.
	prob := make([]float64, total+1)
	prob[0] = 1
	hi := 0
	for _, r := range rank2 {
		for s := hi; s >= 0; s-- {
			if prob[s] == 0 {
				continue
			}
			prob[s+r] += prob[s] / 2
			prob[s] /= 2
		}
		hi += r
	}
	var lower, upper float64 // P(2W+ ≤ w2), P(2W+ ≥ w2)
	for s, q := range prob {
		if s <= w2 {
			lower += q
		}
		if s >= w2 {
			upper += q
		}
	}
	return math.Min(1, 2*math.Min(lower, upper))
}

// SignedRankMinP is the smallest two-sided p-value the signed-rank test can
// give with n non-zero, untied differences: 2/2ⁿ (every sign alike).
func SignedRankMinP(n int) float64 { return math.Min(1, 2/math.Pow(2, float64(n))) }
