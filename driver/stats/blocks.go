package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Machines as blocks. A merge of runs from several machines (merge
// --blocks) holds repeats nested in machines: modes are paired within a
// repeat, and repeats on one machine share that machine's CPU, neighbours
// and kernel. The per-repeat log-ratio y of a comparison is modelled as
//
//	y[b][j] = μ + u[b] + e[b][j],  u[b] ~ N(0, τ²) between machines,
//	                               e[b][j] ~ N(0, σ²) between repeats,
//
// a one-way random-effects model with the machine as the block. τ² and σ²
// are estimated by the method of moments (ANOVA; unbalanced blocks use
// n0), μ by weighted least squares with weights 1/(τ² + σ²/n_b), and its
// interval by Student's t with Satterthwaite's degrees of freedom for the
// estimated variance — k−1 when blocks are balanced and τ² > 0, so two or
// three machines give a wide interval: the honest price of generalising
// over machines from a few of them. When τ² is estimated as 0 (the machines
// differ no more than the repeats within them) the model reduces to the
// pooled paired t of all repeats, today's single-machine analysis.

// blockRatio is one machine's ratio: the geometric mean of its per-repeat
// ratios with the paired-t interval (PairedLogT).
type blockRatio struct {
	Block       int // index into the blocks given to AnalyseBlocks
	N           int // paired repeats on this machine
	Geo, Lo, Hi float64
	Repeats     []int // merged repeat numbers
}

// blockComparison is one paired comparison of a Summary analysed with the
// machine as a random block effect.
type blockComparison struct {
	WorkloadKey
	Num, Den string
	Metric   metric

	Blocks []blockRatio // machines with at least one paired repeat, in block order
	N      int          // paired repeats over all machines

	// Tau2 is the between-machine variance of the log-ratio, Sigma2 the
	// within-machine (repeat to repeat) variance; NaN where not estimable
	// (one machine; or one repeat per machine, which confounds them).
	Tau2, Sigma2 float64
	// Ratio is the pooled ratio exp(μ̂); Lo, Hi its interval at
	// Confidence; DF the t degrees of freedom used; P the two-sided test of
	// μ = 0 with them; PHolm that p Holm-adjusted over all block
	// comparisons of the report.
	Ratio, Lo, Hi, DF, P, PHolm float64
	// Model says which estimate was used: "random effects", "pooled
	// (τ² = 0)", "machine means" or "one machine".
	Model   string
	Verdict string
	Reason  string // why NotEstablished
}

// Name is e.g. "modsecurity/passthrough".
func (c *blockComparison) Name() string { return c.Num + "/" + c.Den }

// BetweenShare is τ²/(τ²+σ²), the share of the log-ratio's variance that
// lies between machines; NaN where either is not estimable.
func (c *blockComparison) BetweenShare() float64 {
	if math.IsNaN(c.Tau2) || math.IsNaN(c.Sigma2) || c.Tau2+c.Sigma2 == 0 {
		return math.NaN()
	}
	return c.Tau2 / (c.Tau2 + c.Sigma2)
}

// AnalyseBlocks analyses every comparison of s with machines as blocks.
// blockRepeats[b] lists the (merged) repeat numbers that ran on machine b;
// a repeat in no block is left out. Holm's correction runs over the
// returned comparisons.
func AnalyseBlocks(s *Summary, blockRepeats [][]int) []blockComparison {
	blockOf := map[int]int{}
	for b, reps := range blockRepeats {
		for _, r := range reps {
			blockOf[r] = b
		}
	}
	var out []blockComparison
	for i := range s.Comparisons {
		c := &s.Comparisons[i]
		groups := make([][]float64, len(blockRepeats))
		repsOf := make([][]int, len(blockRepeats))
		for k, rep := range c.Repeats {
			b, ok := blockOf[rep]
			if !ok || !(c.Ratios[k] > 0) {
				continue
			}
			groups[b] = append(groups[b], math.Log(c.Ratios[k]))
			repsOf[b] = append(repsOf[b], rep)
		}
		bc := blockComparison{WorkloadKey: c.WorkloadKey, Num: c.Num, Den: c.Den, Metric: c.Metric}
		var used [][]float64
		for b, g := range groups {
			if len(g) == 0 {
				continue
			}
			ratios := make([]float64, len(g))
			for j, y := range g {
				ratios[j] = math.Exp(y)
			}
			geo, lo, hi, _ := PairedLogT(ratios, Confidence)
			bc.Blocks = append(bc.Blocks, blockRatio{Block: b, N: len(g), Geo: geo, Lo: lo, Hi: hi,
				Repeats: repsOf[b]})
			bc.N += len(g)
			used = append(used, g)
		}
		if bc.N == 0 {
			continue
		}
		re := randomEffects(used, Confidence)
		bc.Tau2, bc.Sigma2, bc.DF, bc.P, bc.Model = re.Tau2, re.Sigma2, re.DF, re.P, re.Model
		bc.Ratio, bc.Lo, bc.Hi = math.Exp(re.Mu), math.Exp(re.Lo), math.Exp(re.Hi)
		out = append(out, bc)
	}
	p := make([]float64, len(out))
	for i := range out {
		p[i] = out[i].P
	}
	for i, ph := range Holm(p) {
		out[i].PHolm = ph
		out[i].Verdict, out[i].Reason = blockVerdict(&out[i])
	}
	return out
}

// blockVerdict: not established when fewer than MinSamples paired repeats
// in all, the interval is undefined or includes 1, or the Holm-adjusted p
// is not below Alpha.
func blockVerdict(c *blockComparison) (string, string) {
	switch {
	case c.N < MinSamples:
		return NotEstablished, fmt.Sprintf("n=%d < %d repeats", c.N, MinSamples)
	case math.IsNaN(c.Lo) || math.IsNaN(c.Hi):
		return NotEstablished, "no interval"
	case c.Lo <= 1 && 1 <= c.Hi:
		return NotEstablished, "CI includes 1"
	case !(c.PHolm < Alpha):
		return NotEstablished, fmt.Sprintf("Holm p=%.3g ≥ %g", c.PHolm, Alpha)
	}
	higher, lower := Higher, Lower
	if c.Metric.higherIsBetter() {
		higher, lower = Faster, Slower
	}
	if c.Ratio > 1 {
		return higher, ""
	}
	return lower, ""
}

// rEstimate is the outcome of RandomEffects, on the log scale.
type rEstimate struct {
	Mu, Lo, Hi   float64 // pooled mean and its interval
	SE, DF, P    float64
	Tau2, Sigma2 float64 // NaN where not estimable
	Model        string
}

// randomEffects fits the one-way random-effects model to groups (one slice
// of observations per block, none empty) and returns the pooled mean with
// its interval at level conf (see the comment at the top of this file).
// With one group it is the one-sample t of that group; with one
// observation per group, the t of the group means (τ² and σ² are
// confounded).
func randomEffects(groups [][]float64, conf float64) rEstimate {
	k := len(groups)
	var all []float64
	for _, g := range groups {
		all = append(all, g...)
	}
	N := len(all)
	nan := math.NaN()
	tInterval := func(mu, se, df float64) (lo, hi, p float64) { return blockInterval(mu, se, df, conf) }
	if N == 0 {
		return rEstimate{Mu: nan, Lo: nan, Hi: nan, SE: nan, DF: nan, P: 1, Tau2: nan, Sigma2: nan, Model: "no data"}
	}
	if k == 1 {
		mu, ss := meanSumSq(all)
		r := rEstimate{Mu: mu, Tau2: nan, Sigma2: nan, SE: nan, DF: float64(N - 1), Model: "one machine"}
		if N > 1 {
			r.Sigma2 = ss / float64(N-1)
			r.SE = math.Sqrt(r.Sigma2 / float64(N))
		}
		r.Lo, r.Hi, r.P = tInterval(mu, r.SE, r.DF)
		return r
	}
	means := make([]float64, k)
	ns := make([]float64, k)
	ssw := 0.0
	for b, g := range groups {
		var ss float64
		means[b], ss = meanSumSq(g)
		ns[b] = float64(len(g))
		ssw += ss
	}
	grand, ssTotal := meanSumSq(all)
	dfB, dfW := float64(k-1), float64(N-k)
	if dfW == 0 {
		// One repeat per machine: the machine means are the data.
		mu, ss := meanSumSq(means)
		r := rEstimate{Mu: mu, Tau2: nan, Sigma2: nan, DF: dfB, Model: "machine means"}
		r.SE = math.Sqrt(ss / dfB / float64(k))
		r.Lo, r.Hi, r.P = tInterval(mu, r.SE, r.DF)
		return r
	}
	ssb := 0.0
	sumN2 := 0.0
	for b := range groups {
		ssb += ns[b] * (means[b] - grand) * (means[b] - grand)
		sumN2 += ns[b] * ns[b]
	}
	msb, msw := ssb/dfB, ssw/dfW
	n0 := (float64(N) - sumN2/float64(N)) / dfB
	tau2 := (msb - msw) / n0
	if !(tau2 > 0) {
		// The machines differ no more than repeats do: one pooled sample.
		r := rEstimate{Mu: grand, Tau2: 0, Sigma2: msw, DF: float64(N - 1), Model: "pooled (τ² = 0)"}
		r.SE = math.Sqrt(ssTotal / float64(N-1) / float64(N))
		r.Lo, r.Hi, r.P = tInterval(grand, r.SE, r.DF)
		return r
	}
	mu, sc2, sc2n := weightedMean(means, ns, tau2, msw)
	// V = Σc²(τ² + σ²/n) = A·MSB + B·MSW with τ² = (MSB − MSW)/n0.
	a, bcoef := sc2/n0, sc2n-sc2/n0
	v := a*msb + bcoef*msw
	df := v * v / ((a*msb)*(a*msb)/dfB + (bcoef*msw)*(bcoef*msw)/dfW)
	df = math.Min(math.Max(df, 1), float64(N-1))
	r := rEstimate{Mu: mu, SE: math.Sqrt(v), DF: df, Tau2: tau2, Sigma2: msw, Model: "random effects"}
	r.Lo, r.Hi, r.P = tInterval(mu, r.SE, df)
	return r
}

// weightedMean is the mean of the group means weighted by 1/(τ² + σ²/n),
// with Σc² and Σc²/n of the normalised weights c = w/Σw.
func weightedMean(means, ns []float64, tau2, msw float64) (mu, sc2, sc2n float64) {
	w := make([]float64, len(means))
	sumW := 0.0
	for b := range means {
		w[b] = 1 / (tau2 + msw/ns[b])
		sumW += w[b]
	}
	for b := range means {
		c := w[b] / sumW
		mu += c * means[b]
		sc2 += c * c
		sc2n += c * c / ns[b]
	}
	return mu, sc2, sc2n
}

// blockInterval is the two-sided Student t interval at level conf of a
// mean mu with standard error se and df degrees of freedom, with the
// p-value of mu = 0; without a positive se or a degree of freedom the
// interval is NaN (a point when se is 0).
func blockInterval(mu, se, df, conf float64) (lo, hi, p float64) {
	if !(se > 0) || df < 1 {
		if se == 0 && df >= 1 {
			p = 1
			if mu != 0 {
				p = 0
			}
			return mu, mu, p
		}
		return math.NaN(), math.NaN(), 1
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	q := t.Quantile(1 - (1-conf)/2)
	return mu - q*se, mu + q*se, 2 * t.CDF(-math.Abs(mu/se))
}

// meanSumSq is the mean of v and the sum of squared deviations from it.
func meanSumSq(v []float64) (m, ss float64) {
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, ss
}
