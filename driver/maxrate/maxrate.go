// Package maxrate finds the highest open-loop rate at which a latency
// objective holds ("p99<=10ms"), as Nighthawk's adaptive load controller
// does, instead of sweeping every rate: it doubles the rate from a start
// (halving it first while the start fails, down to Start/64) until a short
// validated window fails, bisects between the last pass and the first
// failure to a relative tolerance, then confirms the rate found by
// repeating its window. The result is the highest confirmed rate with its
// interval: [Rate, Above), Above being the lowest rate seen to fail.
//
// A window passes when it held its rate (no fall-behind), had no errors and
// met the objective. Sweep probes a fixed grid instead, for comparison.
package maxrate

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// objective is a latency percentile bound: Percentile (0..100) of the
// window's latencies at most Max.
type objective struct {
	Percentile float64
	Max        time.Duration
}

// String is the objective as ParseObjective reads it.
func (o objective) String() string {
	return "p" + strconv.FormatFloat(o.Percentile, 'f', -1, 64) + "<=" + o.Max.String()
}

// ParseObjective reads "pNN<=DURATION", e.g. "p99<=10ms" or "p99.9<=5ms".
func ParseObjective(s string) (objective, error) {
	p, d, ok := strings.Cut(strings.ReplaceAll(s, " ", ""), "<=")
	if !ok || !strings.HasPrefix(p, "p") {
		return objective{}, fmt.Errorf("want pNN<=DURATION like p99<=10ms, got %q", s)
	}
	pct, err := strconv.ParseFloat(p[1:], 64)
	if err != nil || pct <= 0 || pct > 100 {
		return objective{}, fmt.Errorf("percentile: want 0 < NN ≤ 100 in pNN, got %q", p)
	}
	max, err := time.ParseDuration(d)
	if err != nil || max <= 0 {
		return objective{}, fmt.Errorf("bound: want a duration > 0 like 10ms, got %q", d)
	}
	return objective{Percentile: pct, Max: max}, nil
}

// Window is what one probe at one rate measured.
type Window struct {
	Rate      float64 `json:"rate_per_s"`         // requested req/s
	Achieved  float64 `json:"achieved_per_s"`     // responses per second
	Due       int64   `json:"due,omitempty"`      // arrivals the schedule made due in the window (Poisson: random around rate × window)
	Requests  int64   `json:"requests,omitempty"` // valid responses the percentile was taken over
	WindowS   float64 `json:"window_s,omitempty"` // measured window, s (WindowFor)
	LatencyUs float64 `json:"latency_us"`         // the objective's percentile, µs
	Errors    int64   `json:"errors,omitempty"`   // errors of any kind (a window without a valid response counts one)
	Behind    bool    `json:"behind,omitempty"`   // did not hold the requested rate
}

// Step is one probed window and its verdict.
type Step struct {
	Phase string `json:"phase"` // "exponential", "bisect", "confirm" or "sweep"
	Window
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"` // why it failed
}

// probe runs one validated window at rate req/s.
type probe func(ctx context.Context, rate float64) (Window, error)

// Options bound a search.
type Options struct {
	Objective objective
	Start     float64 // first rate, req/s; > 0
	Limit     float64 // highest rate probed, req/s; > Start
	Tolerance float64 // bisect until (above-below)/below ≤ this; e.g. 0.05
	Confirm   int     // windows repeated at the rate found; ≥ 1
	MaxSteps  int     // bound on probes of the whole search (0 = 40)
}

// Result is a search's outcome.
type Result struct {
	Objective string  `json:"objective"`
	Method    string  `json:"method"`             // "search" or "sweep"
	Rate      float64 `json:"rate_per_s"`         // highest confirmed passing rate; 0 if even Start failed
	Above     float64 `json:"above_per_s"`        // lowest failing rate seen; 0 if none failed up to Limit
	Steps     []Step  `json:"steps"`              // in order
	WallS     float64 `json:"wall_s"`             // time the search took
	AtLimit   bool    `json:"at_limit,omitempty"` // every rate up to Limit passed
}

// Validate reports the first bad option.
func (o *Options) Validate() error {
	switch {
	case !(o.Start > 0):
		return fmt.Errorf("start: want > 0 req/s, got %v", o.Start)
	case !(o.Limit > o.Start):
		return fmt.Errorf("limit: want > start (%v req/s), got %v", o.Start, o.Limit)
	case !(o.Tolerance > 0 && o.Tolerance < 1):
		return fmt.Errorf("tolerance: want 0 < t < 1, got %v", o.Tolerance)
	case o.Confirm < 1:
		return fmt.Errorf("confirm: want ≥ 1 windows, got %d", o.Confirm)
	}
	return nil
}

// WindowFor is the measured window of a probe at rate req/s: long enough
// for minRequests arrivals, so that a high percentile is taken over enough
// requests to mean something (the p99 of 23 requests is their slowest
// one, and one slow request then decides a step), but at least least and
// at most most. minRequests ≤ 0 gives least at every rate.
func WindowFor(rate float64, minRequests int64, least, most time.Duration) time.Duration {
	if minRequests <= 0 || !(rate > 0) {
		return least
	}
	w := time.Duration(math.Ceil(float64(minRequests) / rate * float64(time.Second)))
	return min(max(w, least), max(most, least))
}

// judge gives a window's verdict against obj.
func judge(obj objective, w Window) (bool, string) {
	switch {
	case w.Errors > 0:
		return false, fmt.Sprintf("%d errors", w.Errors)
	case w.Behind:
		if w.Due > 0 {
			return false, fmt.Sprintf("fell behind (achieved %.0f req/s, %d arrivals due)", w.Achieved, w.Due)
		}
		return false, fmt.Sprintf("fell behind (achieved %.0f req/s)", w.Achieved)
	case w.LatencyUs > float64(obj.Max.Microseconds()):
		return false, fmt.Sprintf("p%s %.0f µs > %v", strconv.FormatFloat(obj.Percentile, 'f', -1, 64), w.LatencyUs, obj.Max)
	}
	return true, ""
}

type searcher struct {
	opts  Options
	probe probe
	res   *Result
	max   int
}

func (s *searcher) try(ctx context.Context, phase string, rate float64) (bool, error) {
	if len(s.res.Steps) >= s.max {
		return false, fmt.Errorf("max-rate: gave up after %d windows", s.max)
	}
	w, err := s.probe(ctx, rate)
	if err != nil {
		return false, err
	}
	pass, why := judge(s.opts.Objective, w)
	s.res.Steps = append(s.res.Steps, Step{Phase: phase, Window: w, Pass: pass, Reason: why})
	return pass, nil
}

// Search runs the exponential phase, bisection and confirmation.
func Search(ctx context.Context, opts Options, probe probe) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	res := &Result{Objective: opts.Objective.String(), Method: "search"}
	s := &searcher{opts: opts, probe: probe, res: res, max: opts.MaxSteps}
	if s.max == 0 {
		s.max = 40
	}
	defer func() { res.WallS = time.Since(t0).Seconds() }()
	// A failing start halves the rate down to Start/64 before giving up:
	// one noisy window, or a start above the capacity, need not end it.
	below, above, err := s.down(ctx, opts.Start, 0)
	if err != nil {
		return res, err
	}
	if below == 0 {
		res.Above = above
		return res, nil
	}
	for r := 2 * below; above == 0; r = math.Min(2*r, opts.Limit) {
		if below >= opts.Limit {
			res.AtLimit = true
			break
		}
		pass, err := s.try(ctx, "exponential", r)
		if err != nil {
			return res, err
		}
		if !pass {
			above = r
			break
		}
		below = r
	}
	for {
		if above > 0 && below > 0 && (above-below)/below > opts.Tolerance {
			mid := (below + above) / 2
			pass, err := s.try(ctx, "bisect", mid)
			if err != nil {
				return res, err
			}
			if pass {
				below = mid
			} else {
				above = mid
			}
			continue
		}
		if below == 0 {
			break // even the start failed
		}
		// Confirm: every repeat must pass; a failure makes the rate the
		// new upper bound and the bisection resumes below it.
		ok := true
		for range opts.Confirm {
			pass, err := s.try(ctx, "confirm", below)
			if err != nil {
				return res, err
			}
			if !pass {
				ok = false
				break
			}
		}
		if ok {
			break
		}
		above = below
		below = lastPassBelow(res.Steps, above)
		if below == 0 { // nothing below passed yet: halve down from here
			if below, above, err = s.down(ctx, above/2, above); err != nil {
				return res, err
			}
			if below == 0 {
				break
			}
		}
	}
	res.Rate, res.Above = below, above
	return res, nil
}

// down probes r, r/2, … down to Start/64 until a window passes; it returns
// that rate (0 if none passed) and the lowest failing rate (above if none
// failed).
func (s *searcher) down(ctx context.Context, r, above float64) (pass, fail float64, err error) {
	fail = above
	for ; r >= s.opts.Start/64; r /= 2 {
		ok, err := s.try(ctx, "exponential", r)
		if err != nil {
			return 0, fail, err
		}
		if ok {
			return r, fail, nil
		}
		fail = r
	}
	return 0, fail, nil
}

// lastPassBelow is the highest rate below r whose windows all passed (0 if
// none did).
func lastPassBelow(steps []Step, r float64) float64 {
	best := 0.0
	failed := map[float64]bool{}
	for _, s := range steps {
		if !s.Pass {
			failed[s.Rate] = true
		}
	}
	for _, s := range steps {
		if s.Pass && s.Rate < r && s.Rate > best && !failed[s.Rate] {
			best = s.Rate
		}
	}
	return best
}

// Sweep probes start, start+step, … up to limit and reports the highest
// rate that passed before the first failure, its interval [Rate, Rate+step)
// (Above = the failing rate); a fine grid is what the search is checked
// against.
func Sweep(ctx context.Context, obj objective, start, step, limit float64, probe probe) (*Result, error) {
	if !(start > 0 && step > 0 && limit >= start) {
		return nil, fmt.Errorf("sweep: want start > 0, step > 0, limit ≥ start; got %v, %v, %v", start, step, limit)
	}
	t0 := time.Now()
	res := &Result{Objective: obj.String(), Method: "sweep"}
	defer func() { res.WallS = time.Since(t0).Seconds() }()
	for r := start; r <= limit*(1+1e-9); r += step {
		w, err := probe(ctx, r)
		if err != nil {
			return res, err
		}
		pass, why := judge(obj, w)
		res.Steps = append(res.Steps, Step{Phase: "sweep", Window: w, Pass: pass, Reason: why})
		if !pass {
			res.Above = r
			return res, nil
		}
		res.Rate = r
	}
	res.AtLimit = true
	return res, nil
}
