// Package maxrate finds the highest open-loop rate at which a latency
// objective holds ("p99<=10ms"), as Nighthawk's adaptive load controller
// does, instead of sweeping every rate: it doubles the rate from a start
// (halving it first while the start fails, down to Start/64) until a rate
// fails, then bisects between the last pass and the first failure to a
// relative tolerance, and ends with an anchor a quarter above the lowest
// failing rate. The bracket is [Rate, Above), Above being the lowest rate
// seen to fail; the rate reported is Fit's: where a window passes
// with probability one half, from every window probed, with its 95%
// interval.
//
// A window passes when it held its rate (no fall-behind), had no errors and
// met the objective. A rate's verdict is the majority of Votes windows at
// it (probing stops once one side has the majority): a tail percentile
// near its bound passes in some windows and fails in others, and a single
// window then decides by chance — one slow stretch of the machine failed a
// rate a fifth of the capacity the next windows held. Sweep probes a fixed
// grid with the same verdicts, for comparison.
//
// A window that would fail but whose client was the bottleneck
// (Window.ClientBound: the generator's own send delay made up more than a
// stated share of its latency tail) is not counted as the proxy's failure:
// its rate gets the verdict "client-bound", the method raises the rate no
// further (Result.ClientBound: the limit lies beyond what this client can
// measure), and Fit leaves such windows out.
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
	// ClientBound marks a window whose client's own send delay p99
	// (OwnP99Us) was more than the stated share of its latency p99
	// (result.ClientBoundShare): the generator, not the proxy, set its
	// tail.
	ClientBound bool    `json:"client_bound,omitempty"`
	OwnP99Us    float64 `json:"own_p99_us,omitempty"`
}

// Step is one probed window and its verdict.
type Step struct {
	Phase string `json:"phase"` // "exponential", "bisect", "sweep" or "anchor"
	Window
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"` // why it failed
	// Vote is the window's place among its rate's votes (1, 2, …; 0 in
	// runs before votes); Verdict, on the window that decided its rate,
	// is that rate's: "pass", "fail" or "client-bound" (a window that
	// would have failed was client-bound: Pass is false, but it is no
	// failure of the proxy).
	Vote    int    `json:"vote,omitempty"`
	Verdict string `json:"verdict,omitempty"`
}

// probe runs one validated window at rate req/s.
type probe func(ctx context.Context, rate float64) (Window, error)

// Options bound a search.
type Options struct {
	Objective objective
	Start     float64 // first rate, req/s; > 0 for Search (0 in a configuration: its caller sets it)
	Limit     float64 // highest rate probed, req/s; > Start
	Tolerance float64 // bisect until (above-below)/below ≤ this; e.g. 0.05
	Votes     int     // windows judged at each rate, the majority deciding; ≥ 1 (1: one window decides)
	MaxRates  int     // bound on the rates the search probes (0 = 40)
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
	// First marks the method that ran first when a trial ran both (the
	// order alternates by repeat); neither marked: the search ran first.
	First bool `json:"first,omitempty"`
	// Capacity is the closed-loop throughput a search started from (at
	// half of it) when it was given no start, req/s; 0 otherwise.
	Capacity float64 `json:"capacity_per_s,omitempty"`
	// ClientBound is the lowest rate whose verdict was "client-bound":
	// the method raised the rate no further, the proxy's limit not being
	// measurable there with this client; 0 when no rate was.
	ClientBound float64 `json:"client_bound_per_s,omitempty"`
}

// Validate reports the first bad option.
func (o *Options) Validate() error {
	switch {
	case !(o.Start >= 0):
		return fmt.Errorf("start: want > 0 req/s (0: the caller's choice, from a capacity window), got %v", o.Start)
	case !(o.Limit > o.Start):
		return fmt.Errorf("limit: want > start (%v req/s), got %v", o.Start, o.Limit)
	case !(o.Tolerance > 0 && o.Tolerance < 1):
		return fmt.Errorf("tolerance: want 0 < t < 1, got %v", o.Tolerance)
	case o.Votes < 1:
		return fmt.Errorf("votes: want ≥ 1 windows per rate, got %d", o.Votes)
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

// Verdicts of a rate.
const (
	verdictPass        = "pass"
	verdictFail        = "fail"
	VerdictClientBound = "client-bound"
)

// judge gives a window's verdict against obj: pass, or fail with the
// reason; a failing window that was client-bound (and had no errors) has
// verdict VerdictClientBound instead.
func judge(obj objective, w Window) (string, string) {
	pass, why := judgeProxy(obj, w)
	switch {
	case pass:
		return verdictPass, ""
	case w.ClientBound && w.Errors == 0:
		return VerdictClientBound, fmt.Sprintf("client-bound: its own send delay p99 %.0f µs (%s)", w.OwnP99Us, why)
	}
	return verdictFail, why
}

// judgeProxy judges the window as if the client were perfect.
func judgeProxy(obj objective, w Window) (bool, string) {
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
	obj   objective
	votes int
	probe probe
	res   *Result
	rates int // rates probed so far
	max   int // bound on rates; 0 = none
}

// try judges rate by the majority of s.votes windows, stopping once one
// side holds it (a tie of an even count fails); a client-bound window
// decides at once (VerdictClientBound), since the proxy's verdict cannot be
// measured there.
func (s *searcher) try(ctx context.Context, phase string, rate float64) (string, error) {
	if s.max > 0 && s.rates >= s.max {
		return "", fmt.Errorf("max-rate: gave up after %d rates", s.max)
	}
	s.rates++
	need := s.votes/2 + 1
	passes, fails := 0, 0
	for vote := 1; ; vote++ {
		w, err := s.probe(ctx, rate)
		if err != nil {
			return "", err
		}
		v, why := judge(s.obj, w)
		switch v {
		case verdictPass:
			passes++
		case verdictFail:
			fails++
		}
		st := Step{Phase: phase, Window: w, Pass: v == verdictPass, Reason: why, Vote: vote}
		switch {
		case v == VerdictClientBound:
			st.Verdict = v
			if s.res.ClientBound == 0 || rate < s.res.ClientBound {
				s.res.ClientBound = rate
			}
		case passes >= need:
			st.Verdict = verdictPass
		case fails > s.votes-need:
			st.Verdict = verdictFail
		}
		s.res.Steps = append(s.res.Steps, st)
		if st.Verdict != "" {
			return st.Verdict, nil
		}
	}
}

// Search runs the exponential phase and the bisection, then its anchor.
func Search(ctx context.Context, opts Options, probe probe) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Start == 0 {
		return nil, fmt.Errorf("start: want > 0 req/s, got 0")
	}
	t0 := time.Now()
	res := &Result{Objective: opts.Objective.String(), Method: "search"}
	s := &searcher{obj: opts.Objective, votes: opts.Votes, probe: probe, res: res, max: opts.MaxRates}
	if s.max == 0 {
		s.max = 40
	}
	defer func() { res.WallS = time.Since(t0).Seconds() }()
	// A failing start halves the rate down to Start/64 before giving up:
	// a start above the capacity need not end it.
	// A client-bound start halves the rate too, to one this client can
	// measure, without taking it for the proxy's failure.
	below, above := 0.0, 0.0
	for r := opts.Start; r >= opts.Start/64; r /= 2 {
		v, err := s.try(ctx, "exponential", r)
		if err != nil {
			return res, err
		}
		if v == verdictPass {
			below = r
			break
		}
		if v == verdictFail {
			above = r
		}
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
		v, err := s.try(ctx, "exponential", r)
		if err != nil {
			return res, err
		}
		if v == VerdictClientBound {
			res.Rate = below // no higher rate is measurable with this client
			return res, nil
		}
		if v == verdictFail {
			above = r
			break
		}
		below = r
	}
	for above > 0 && (above-below)/below > opts.Tolerance {
		mid := (below + above) / 2
		v, err := s.try(ctx, "bisect", mid)
		if err != nil {
			return res, err
		}
		if v == VerdictClientBound {
			break // the bracket stays [below, above): the client cannot narrow it
		}
		if v == verdictPass {
			below = mid
		} else {
			above = mid
		}
	}
	res.Rate, res.Above = below, above
	if res.ClientBound > 0 {
		return res, nil // the anchor, above the bracket, would be client-bound too
	}
	return res, s.anchor(ctx, above, opts.Limit)
}

// AnchorFactor places a method's last rate above the highest it probed
// to fail: windows there fail, and they bound how gently the pass curve
// can fall, which the rates near the limit alone do not (Fit's interval
// stays open above without them).
const AnchorFactor = 1.25

// anchor probes AnchorFactor × failed (phase "anchor") when a rate failed
// and the anchor is within limit.
func (s *searcher) anchor(ctx context.Context, failed, limit float64) error {
	if failed == 0 || failed*AnchorFactor > limit {
		return nil
	}
	_, err := s.try(ctx, "anchor", failed*AnchorFactor)
	return err
}

// SweepPast is how many failing rates a sweep probes: it goes on past its
// first failing rate, so that Fit has windows above the limit too.
const SweepPast = 2

// Sweep probes step, 2·step, … up to opts.Limit, each rate judged as in
// Search (opts' objective and votes), until SweepPast rates have failed,
// then its anchor. Its bracket is the highest rate that passed before the first
// failure and that failure, [Rate, Above); a fine grid is what the search
// is checked against.
func Sweep(ctx context.Context, opts Options, step float64, probe probe) (*Result, error) {
	if !(step > 0 && opts.Limit >= step) || opts.Votes < 1 {
		return nil, fmt.Errorf("sweep: want step > 0, limit ≥ step, votes ≥ 1; got %v, %v, %d", step, opts.Limit, opts.Votes)
	}
	t0 := time.Now()
	res := &Result{Objective: opts.Objective.String(), Method: "sweep"}
	s := &searcher{obj: opts.Objective, votes: opts.Votes, probe: probe, res: res}
	defer func() { res.WallS = time.Since(t0).Seconds() }()
	failed := 0
	for r := step; r <= opts.Limit*(1+1e-9); r += step {
		v, err := s.try(ctx, "sweep", r)
		if err != nil {
			return res, err
		}
		if v == VerdictClientBound {
			return res, nil // no higher rate is measurable with this client
		}
		if v == verdictPass {
			if failed == 0 {
				res.Rate = r
			}
			continue
		}
		if failed++; failed == 1 {
			res.Above = r
		}
		if failed == SweepPast {
			return res, s.anchor(ctx, r, opts.Limit)
		}
	}
	res.AtLimit = failed == 0
	return res, nil
}
