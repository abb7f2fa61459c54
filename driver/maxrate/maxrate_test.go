package maxrate

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// model is a system whose p99 is 1 ms up to capacity and 50 ms above it;
// flaky lists rates whose next window fails once (a noisy window).
type model struct {
	capacity float64
	flaky    map[float64]int
	calls    int
}

func (m *model) probe(_ context.Context, rate float64) (Window, error) {
	m.calls++
	w := Window{Rate: rate, Achieved: rate, LatencyUs: 1000}
	if rate > m.capacity {
		w.LatencyUs = 50000
	}
	if m.flaky[rate] > 0 {
		m.flaky[rate]--
		w.LatencyUs = 50000
	}
	return w, nil
}

var obj = objective{Percentile: 99, Max: 10 * time.Millisecond}

func TestParseObjective(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want objective
		err  string
	}{
		{in: "p99<=10ms", want: objective{99, 10 * time.Millisecond}},
		{in: "p99.9 <= 2.5ms", want: objective{99.9, 2500 * time.Microsecond}},
		{in: "p0<=1ms", err: "percentile: want 0 < NN ≤ 100 in pNN, got \"p0\""},
		{in: "p99<10ms", err: "want pNN<=DURATION like p99<=10ms, got \"p99<10ms\""},
		{in: "p99<=fast", err: "bound: want a duration > 0 like 10ms, got \"fast\""},
	} {
		got, err := ParseObjective(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: got %v, want error %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	if s := (objective{99, 10 * time.Millisecond}).String(); s != "p99<=10ms" {
		t.Errorf("String: got %q", s)
	}
}

// TestSearch finds the model's capacity to the tolerance, with the
// capacity inside the reported interval, each rate judged by two agreeing
// windows of three votes, in far fewer windows than a sweep of the same
// resolution with the same verdicts.
func TestSearch(t *testing.T) {
	for _, capacity := range []float64{150, 1234, 7777} {
		m := &model{capacity: capacity}
		res, err := Search(context.Background(), Options{Objective: obj, Start: 100, Limit: 1e6, Tolerance: 0.02, Votes: 3}, m.probe)
		if err != nil {
			t.Fatal(err)
		}
		if !(res.Rate <= capacity && capacity < res.Above) || (res.Above-res.Rate)/res.Rate > 0.02 {
			t.Errorf("capacity %v: got [%v, %v), want it inside, width ≤ 2%%", capacity, res.Rate, res.Above)
		}
		if last := res.Steps[len(res.Steps)-1]; last.Phase != "anchor" || last.Rate != res.Above*AnchorFactor {
			t.Errorf("capacity %v: last step %+v, want the anchor at %v", capacity, last, res.Above*AnchorFactor)
		}
		for i, s := range res.Steps {
			want := map[bool]string{true: "", false: map[bool]string{true: "pass", false: "fail"}[s.Pass]}[i%2 == 0]
			if s.Vote != i%2+1 || s.Verdict != want {
				t.Errorf("capacity %v: step %d %+v, want vote %d, verdict %q", capacity, i, s, i%2+1, want)
			}
		}
		sw := &model{capacity: capacity}
		step := res.Rate * 0.02
		sres, err := Sweep(context.Background(), Options{Objective: obj, Limit: 1e6, Votes: 3}, step, sw.probe)
		if err != nil {
			t.Fatal(err)
		}
		if !(sres.Rate <= capacity && capacity < sres.Above) {
			t.Errorf("sweep: [%v, %v) misses %v", sres.Rate, sres.Above, capacity)
		}
		if m.calls*2 > sw.calls {
			t.Errorf("capacity %v: search %d windows, sweep %d: want under half", capacity, m.calls, sw.calls)
		}
	}
}

// TestSearchNoisyWindow fails one window at 400 req/s, far below the
// model's capacity of 1000: judged by the majority of three windows the
// rate still passes and the search finds the capacity; judged by one
// window (votes 1, the rule before votes) the search ends below 400.
func TestSearchNoisyWindow(t *testing.T) {
	for _, tc := range []struct {
		votes int
		found bool
	}{{3, true}, {1, false}} {
		m := &model{capacity: 1000, flaky: map[float64]int{400: 1}}
		res, err := Search(context.Background(), Options{Objective: obj, Start: 100, Limit: 1e6, Tolerance: 0.01, Votes: tc.votes}, m.probe)
		if err != nil {
			t.Fatal(err)
		}
		if found := res.Rate <= 1000 && 1000 < res.Above; found != tc.found {
			t.Errorf("votes %d: got [%v, %v), want the capacity 1000 inside: %v", tc.votes, res.Rate, res.Above, tc.found)
		}
	}
}

// TestSearchStartFails halves a failing start until a rate passes, then
// searches up from there; below Start/64 it gives up with rate 0.
func TestSearchStartFails(t *testing.T) {
	m := &model{capacity: 10}
	res, err := Search(context.Background(), Options{Objective: obj, Start: 100, Limit: 1000, Tolerance: 0.05, Votes: 3}, m.probe)
	if err != nil || !(res.Rate <= 10 && 10 < res.Above) {
		t.Errorf("capacity 10 from start 100: got [%v, %v) %v, want 10 inside", res.Rate, res.Above, err)
	}
	m = &model{capacity: 1}
	res, err = Search(context.Background(), Options{Objective: obj, Start: 100, Limit: 1000, Tolerance: 0.05, Votes: 3}, m.probe)
	if err != nil || res.Rate != 0 || res.Above != 1.5625 || len(res.Steps) != 14 {
		t.Errorf("capacity 1: got rate %v above %v after %d windows (%v), want 0, 1.5625 (100/64), 14 (7 rates × 2)", res.Rate, res.Above, len(res.Steps), err)
	}
}

// TestVotesEven: with an even count a tie fails, so two votes mean both
// windows must pass, and a first failing window decides at once.
func TestVotesEven(t *testing.T) {
	m := &model{capacity: 1000, flaky: map[float64]int{100: 1}}
	res, err := Search(context.Background(), Options{Objective: obj, Start: 100, Limit: 1e6, Tolerance: 0.05, Votes: 2}, m.probe)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) < 2 || res.Steps[0].Verdict != "fail" || res.Steps[1].Rate != 50 {
		t.Errorf("steps %+v, want 100 req/s failed by its first window, then 50", res.Steps[:min(2, len(res.Steps))])
	}
}

// TestWindowFor stretches a probe's window to hold the requests a
// percentile needs, between its floor and its cap.
func TestWindowFor(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		n    int64
		want time.Duration
	}{
		{rate: 14000, n: 1000, want: 2 * time.Second}, // floor: 28 000 requests anyway
		{rate: 750, n: 1000, want: 2 * time.Second},   // 1.33 s: below the floor
		{rate: 230, n: 1000, want: 4347826087 * time.Nanosecond},
		{rate: 11.5, n: 1000, want: 30 * time.Second}, // cap: 345 requests
		{rate: 11.5, n: 0, want: 2 * time.Second},     // off
	} {
		got := WindowFor(tc.rate, tc.n, 2*time.Second, 30*time.Second)
		if got != tc.want {
			t.Errorf("WindowFor(%v, %d): got %v, want %v", tc.rate, tc.n, got, tc.want)
		}
	}
}

// TestSweepPast: a sweep goes on past its first failing rate until
// SweepPast rates have failed, so the fit has windows above the limit; its
// bracket stays at the first failure even when a later rate passes.
func TestSweepPast(t *testing.T) {
	m := &model{capacity: 1000, flaky: map[float64]int{500: 2}}
	res, err := Sweep(context.Background(), Options{Objective: obj, Limit: 1e6, Votes: 3}, 100, m.probe)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rate != 400 || res.Above != 500 || res.AtLimit {
		t.Errorf("got [%v, %v) at limit %v, want [400, 500)", res.Rate, res.Above, res.AtLimit)
	}
	n := len(res.Steps)
	if sec, last := res.Steps[n-3], res.Steps[n-1]; sec.Rate != 1100 || last.Phase != "anchor" || last.Rate != 1375 || last.Verdict != "fail" {
		t.Errorf("last steps %+v, %+v: want 1100 req/s failed (the second failing rate), then the anchor at 1375 failed", sec, last)
	}
	res, err = Sweep(context.Background(), Options{Objective: obj, Limit: 300, Votes: 1}, 100, (&model{capacity: 1000}).probe)
	if err != nil || !res.AtLimit || res.Rate != 300 {
		t.Errorf("no failure up to the limit: got %+v %v, want rate 300 at the limit", res, err)
	}
}

// TestStartZero: a configuration may leave the start to its caller (0),
// but Search itself needs one.
func TestStartZero(t *testing.T) {
	opts := Options{Objective: obj, Limit: 1000, Tolerance: 0.05, Votes: 3}
	if err := opts.Validate(); err != nil {
		t.Errorf("Validate with start 0: %v, want ok", err)
	}
	if _, err := Search(context.Background(), opts, (&model{capacity: 10}).probe); err == nil || err.Error() != "start: want > 0 req/s, got 0" {
		t.Errorf("Search with start 0: got %v", err)
	}
	opts.Start = -1
	if err := opts.Validate(); err == nil {
		t.Error("Validate with start -1: want an error")
	}
}

// TestSearchFitNoisy searches a system whose windows pass with a logistic
// probability around 1000 req/s (20 seeds), from a start whose double,
// 1040, is the first failing rate, just above the limit — as a search from
// half the closed-loop capacity meets the capacity. With its anchor the
// fitted interval is closed on both sides every time (without, 8 of the 20
// stayed open above), and it holds 1000 in at least 18 of the 20.
func TestSearchFitNoisy(t *testing.T) {
	held := 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		probe := func(_ context.Context, rate float64) (Window, error) {
			w := Window{Rate: rate, Achieved: rate, LatencyUs: 1000}
			if !curve(rng, 1000, 40, rate).Pass {
				w.LatencyUs = 50000
			}
			return w, nil
		}
		res, err := Search(context.Background(), Options{Objective: obj, Start: 520, Limit: 1e6, Tolerance: 0.05, Votes: 3}, probe)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := Fit(res.Steps)
		if !ok || e.Low == 0 || e.High == 0 {
			t.Errorf("seed %d: fit %+v %v, want an interval closed on both sides", seed, e, ok)
			continue
		}
		if e.Contains(1000) {
			held++
		}
	}
	if held < 18 {
		t.Errorf("the interval held 1000 req/s in %d of 20 searches, want ≥ 18", held)
	}
}

// clientModel is model with a client that cannot keep its schedule at
// rates in [clientAt, clientTo) (clientTo 0: no end): there its windows
// fail the objective with a client-bound tail (its own send delay most of
// the latency), whatever the proxy does.
type clientModel struct {
	model
	clientAt, clientTo float64
}

func (m *clientModel) probe(ctx context.Context, rate float64) (Window, error) {
	w, err := m.model.probe(ctx, rate)
	if rate >= m.clientAt && (m.clientTo == 0 || rate < m.clientTo) {
		w.LatencyUs, w.OwnP99Us, w.ClientBound = 40000, 30000, true
	}
	return w, err
}

// TestClientBound: a client-bound window that would fail is not the
// proxy's failure. The search and the sweep stop raising the rate there,
// report the rate as ClientBound and the last pass as Rate, with no failing
// rate (Above) unless the proxy itself failed below it; Fit leaves the
// client-bound windows out. A client-bound window that passes still passes.
func TestClientBound(t *testing.T) {
	opts := Options{Objective: obj, Start: 100, Limit: 100000, Tolerance: 0.05, Votes: 3}
	t.Run("search, client below capacity", func(t *testing.T) {
		m := &clientModel{model: model{capacity: 1000}, clientAt: 700}
		res, err := Search(context.Background(), opts, m.probe)
		if err != nil {
			t.Fatal(err)
		}
		// 100, 200, 400 pass; 800 is client-bound.
		if res.Rate != 400 || res.Above != 0 || res.ClientBound != 800 || res.AtLimit {
			t.Errorf("rate %v, above %v, client-bound %v, at limit %v; want 400, 0, 800, false", res.Rate, res.Above, res.ClientBound, res.AtLimit)
		}
		last := res.Steps[len(res.Steps)-1]
		if last.Verdict != VerdictClientBound || last.Pass || last.Rate != 800 {
			t.Errorf("last step %+v: want 800 req/s decided client-bound by one window", last)
		}
		if _, ok := Fit(res.Steps); ok {
			t.Error("Fit gave an estimate from windows that never failed on the proxy")
		}
	})
	t.Run("search, client-bound while bisecting", func(t *testing.T) {
		// 800 passes, 1600 fails on the proxy, 1200 is client-bound: the
		// bracket stays [800, 1600), and no anchor is probed above it.
		m := &clientModel{model: model{capacity: 1000}, clientAt: 1100, clientTo: 1400}
		res, err := Search(context.Background(), opts, m.probe)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rate != 800 || res.Above != 1600 || res.ClientBound != 1200 {
			t.Errorf("rate %v, above %v, client-bound %v; want 800, 1600, 1200", res.Rate, res.Above, res.ClientBound)
		}
		if last := res.Steps[len(res.Steps)-1]; last.Phase != "bisect" || last.Verdict != VerdictClientBound {
			t.Errorf("last step %+v: want the client-bound bisection", last)
		}
	})
	t.Run("sweep", func(t *testing.T) {
		m := &clientModel{model: model{capacity: 1000}, clientAt: 650}
		res, err := Sweep(context.Background(), Options{Objective: obj, Limit: 2000, Tolerance: 0.05, Votes: 1}, 200, m.probe)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rate != 600 || res.Above != 0 || res.ClientBound != 800 || res.AtLimit {
			t.Errorf("rate %v, above %v, client-bound %v, at limit %v; want 600, 0, 800, false", res.Rate, res.Above, res.ClientBound, res.AtLimit)
		}
	})
	t.Run("judge", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			w    Window
			want string
		}{
			{"client-bound but meets the objective", Window{LatencyUs: 900, OwnP99Us: 800, ClientBound: true}, verdictPass},
			{"client-bound tail", Window{LatencyUs: 20000, OwnP99Us: 15000, ClientBound: true}, VerdictClientBound},
			{"client-bound, behind", Window{LatencyUs: 900, Behind: true, ClientBound: true}, VerdictClientBound},
			{"client-bound with errors", Window{LatencyUs: 20000, Errors: 3, ClientBound: true}, verdictFail},
			{"the proxy's tail", Window{LatencyUs: 20000, OwnP99Us: 20}, verdictFail},
		} {
			if got, why := judge(obj, tc.w); got != tc.want {
				t.Errorf("%s: got %s (%s), want %s", tc.name, got, why, tc.want)
			}
		}
	})
}
