package stats

import (
	"math"
	"time"

	"gonum.org/v1/gonum/stat"

	"wafbench/driver/result"
)

// Component splits the variance of one mode × workload's throughput into
// what varies inside a measured window and what varies between fresh Envoy
// processes (repeats), in the two-level model of Kalibera and Jones
// ("Rigorous benchmarking in reasonable time", ISMM 2013): a window of T
// seconds has mean μ·(1 + b + ē), with b the process's offset (variance
// σb²) and ē the mean of T per-second deviations (variance σw²/T). All
// figures are coefficients of variation (fractions of the mean).
type Component struct {
	Key
	N           int     // windows (repeats)
	WindowS     float64 // mean whole seconds per window
	MeanReqPerS float64
	// WithinCV is the per-second throughput CV inside a window, pooled
	// over the windows (root mean square); NaN without ≥ 2 whole seconds.
	WithinCV float64
	// BetweenCV is the CV of the windows' req/s across repeats (NaN for
	// n < 2); CPUBetweenCV the same for Envoy CPU µs/req.
	BetweenCV    float64
	CPUBetweenCV float64
	// ProcessCV is the between-process part: √max(0, BetweenCV² −
	// WithinCV²/WindowS). ProcessShare is ProcessCV²/BetweenCV².
	ProcessCV    float64
	ProcessShare float64
}

// wholeSeconds is r's per-second series without a trailing partial second
// (the rule CheckDrift uses).
func wholeSeconds(r *result.Record) []int64 {
	ps := r.PerSecond
	if n := len(ps); n > 0 {
		whole := int(math.Floor(r.DurationS + 1e-9))
		if r.DurationS > 0 && n > whole {
			ps = ps[:whole]
		} else if r.DurationS <= 0 && n > 1 {
			m := Median(int64s(ps)).Median
			if float64(ps[n-1]) < m/2 {
				ps = ps[:n-1]
			}
		}
	}
	return ps
}

// cv is the sample standard deviation over the mean (NaN for n < 2 or a
// zero mean).
func cv(v []float64) float64 {
	if len(v) < 2 {
		return math.NaN()
	}
	m, sd := stat.MeanStdDev(v, nil)
	if m == 0 {
		return math.NaN()
	}
	return sd / math.Abs(m)
}

func component(k Key, rs []*result.Record) Component {
	c := Component{Key: k, N: len(rs)}
	var rps, cpu []float64
	var sumSq, secs float64
	windows := 0
	for _, r := range rs {
		rps = append(rps, r.ReqPerS)
		cpu = append(cpu, r.TotalCPUUsPerRequest())
		ps := wholeSeconds(r)
		if w := cv(int64s(ps)); !math.IsNaN(w) {
			sumSq += w * w
			secs += float64(len(ps))
			windows++
		}
	}
	c.MeanReqPerS = mean(rps)
	c.BetweenCV, c.CPUBetweenCV = cv(rps), cv(cpu)
	c.WithinCV, c.ProcessCV, c.ProcessShare = math.NaN(), math.NaN(), math.NaN()
	if windows > 0 {
		c.WithinCV = math.Sqrt(sumSq / float64(windows))
		c.WindowS = secs / float64(windows)
	}
	if !math.IsNaN(c.BetweenCV) && !math.IsNaN(c.WithinCV) {
		p := c.BetweenCV*c.BetweenCV - c.WithinCV*c.WithinCV/c.WindowS
		c.ProcessCV = math.Sqrt(math.Max(0, p))
		if c.BetweenCV > 0 {
			c.ProcessShare = c.ProcessCV * c.ProcessCV / (c.BetweenCV * c.BetweenCV)
		}
	}
	return c
}

// cost models the wall time of one block (every mode once) as a function
// of the measured window T: Modes × (TrialS + Workloads × (WarmupS + T)).
// TrialS is what a trial costs besides its windows: Envoy's start-up and
// preflight, its trial warmup and its stop.
type cost struct {
	Modes, Workloads int
	TrialS           float64
	WarmupS          float64 // per workload, before its window
	WindowS          float64 // the run's measured window
}

// BlockS is the modelled wall time of one block with windows of window s.
func (c cost) BlockS(window float64) float64 {
	return float64(c.Modes) * (c.TrialS + float64(c.Workloads)*(c.WarmupS+window))
}

// EstimateCost reads a run's cost model from its meta and records: the
// per-trial overhead is the run's wall time (meta started → finished) less
// its warmups and windows, spread over its trials. Without a finish time it
// assumes the trial warmup plus one second.
func EstimateCost(meta *result.Meta, recs []result.Record) cost {
	c := cost{Modes: len(meta.Modes), Workloads: len(meta.Workloads)}
	var warm, win []float64
	trials := map[int]bool{}
	var windows float64
	for i := range recs {
		r := &recs[i]
		trials[r.Trial] = true
		if r.DurationS > 0 {
			warm = append(warm, r.WarmupS)
			win = append(win, r.DurationS)
			windows += r.WarmupS + r.DurationS
		}
	}
	if len(win) > 0 {
		c.WarmupS, c.WindowS = mean(warm), mean(win)
	}
	tw := 0.0
	if d, err := time.ParseDuration(meta.Flags["trial-warmup"]); err == nil {
		tw = d.Seconds()
	}
	c.TrialS = tw + 1
	start, err1 := time.Parse(time.RFC3339, meta.StartedUTC)
	end, err2 := time.Parse(time.RFC3339, meta.FinishedUTC)
	if err1 == nil && err2 == nil && len(trials) > 0 {
		if o := (end.Sub(start).Seconds() - windows) / float64(len(trials)); o > tw {
			c.TrialS = o
		}
	}
	return c
}

// RatioNoise is the spread of one comparison's per-repeat log-ratios split
// like Component: the within-window part predicted from both modes'
// per-second CVs, the rest between processes (what pairing in a block does
// not cancel). For CPU µs/req the per-second throughput CV stands in for the
// unmeasured per-second CPU CV (at a saturated CPU one is the inverse of the
// other).
type RatioNoise struct {
	Comparison *Comparison
	SDLog      float64 // observed per-repeat log-ratio SD at WindowS
	WithinVar  float64 // WithinCV² of numerator + denominator (per second)
	WindowS    float64
}

// BetweenVar is max(0, SDLog² − WithinVar/WindowS).
func (r RatioNoise) BetweenVar() float64 {
	if r.WindowS <= 0 {
		return r.SDLog * r.SDLog
	}
	return math.Max(0, r.SDLog*r.SDLog-r.WithinVar/r.WindowS)
}

// SDAt predicts the per-repeat log-ratio SD with windows of window s.
func (r RatioNoise) SDAt(window float64) float64 {
	return math.Sqrt(r.BetweenVar() + r.WithinVar/window)
}

// Noise returns the RatioNoise of c from the summary's components (NaN
// sdLog when c has fewer than 2 repeats).
func (s *Summary) Noise(c *Comparison) RatioNoise {
	rn := RatioNoise{Comparison: c, SDLog: c.sdLog()}
	a := s.component(Key{c.Num, c.Workload, c.Conns})
	b := s.component(Key{c.Den, c.Workload, c.Conns})
	if a != nil && b != nil && !math.IsNaN(a.WithinCV) && !math.IsNaN(b.WithinCV) {
		rn.WithinVar = a.WithinCV*a.WithinCV + b.WithinCV*b.WithinCV
		rn.WindowS = (a.WindowS + b.WindowS) / 2
	}
	return rn
}

// component returns the variance component of k, or nil.
func (s *Summary) component(k Key) *Component {
	for i := range s.Components {
		if s.Components[i].Key == k {
			return &s.Components[i]
		}
	}
	return nil
}

// Allocation is a number of repeats × a window length and its modelled
// cost.
type Allocation struct {
	Repeats int
	WindowS float64
	BlockS  float64 // wall time of one block
	WallS   float64 // Repeats × BlockS
	// Feasible is false when some noise would need more than MaxRepeats.
	Feasible bool
}

// Windows is the grid of window lengths (s) Allocate considers. Below 2 s a
// window has too few whole seconds for the steady-state check and too few
// requests on the slowest workloads for a CPU-per-request figure.
var Windows = []float64{2, 3, 4, 5, 6, 8, 10, 15, 20, 30}

// Allocate chooses, Kalibera–Jones style, the repeats × window (from
// windows) of least modelled wall time at which every noise's predicted
// paired-t half-width is ≤ pct: for each window, the repeats the noisiest
// comparison needs (RepeatsForHalfWidth at SDAt(window)), costed with
// cost.BlockS. Noises with a NaN SDLog are ignored. Without any usable
// noise it returns the zero Allocation.
func Allocate(noise []RatioNoise, cost cost, pct float64, windows []float64) Allocation {
	var best Allocation
	for _, w := range windows {
		n := 0
		for _, r := range noise {
			if math.IsNaN(r.SDLog) {
				continue
			}
			n = max(n, repeatsForHalfWidth(r.SDAt(w), pct))
		}
		if n == 0 {
			return Allocation{}
		}
		a := Allocation{Repeats: n, WindowS: w, BlockS: cost.BlockS(w), Feasible: n <= MaxRepeats}
		a.WallS = float64(n) * a.BlockS
		if best.Repeats == 0 || (a.Feasible && !best.Feasible) || (a.Feasible == best.Feasible && a.WallS < best.WallS) {
			best = a
		}
	}
	return best
}
