package maxrate

import (
	"context"
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
// capacity inside the reported interval, in far fewer windows than a
// sweep of the same resolution.
func TestSearch(t *testing.T) {
	for _, capacity := range []float64{150, 1234, 7777} {
		m := &model{capacity: capacity}
		res, err := Search(context.Background(), Options{Objective: obj, Start: 100, Limit: 1e6, Tolerance: 0.02, Confirm: 3}, m.probe)
		if err != nil {
			t.Fatal(err)
		}
		if !(res.Rate <= capacity && capacity < res.Above) || (res.Above-res.Rate)/res.Rate > 0.02 {
			t.Errorf("capacity %v: got [%v, %v), want it inside, width ≤ 2%%", capacity, res.Rate, res.Above)
		}
		n := 0
		for _, s := range res.Steps {
			if s.Phase == "confirm" {
				n++
				if s.Rate != res.Rate || !s.Pass {
					t.Errorf("confirm step %+v, want a pass at %v", s, res.Rate)
				}
			}
		}
		if n != 3 {
			t.Errorf("capacity %v: %d confirm windows, want 3", capacity, n)
		}
		sw := &model{capacity: capacity}
		step := res.Rate * 0.02
		sres, err := Sweep(context.Background(), obj, step, step, 1e6, sw.probe)
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

// TestSearchConfirmFails makes the first confirmation window at the
// model's capacity fail once: that rate becomes the upper bound, and the
// rate reported is the highest below it whose windows all passed.
func TestSearchConfirmFails(t *testing.T) {
	noisy := &model{capacity: 1000, flaky: map[float64]int{}}
	seen := map[float64]int{}
	res, err := Search(context.Background(), Options{Objective: obj, Start: 125, Limit: 1e6, Tolerance: 0.01, Confirm: 2}, func(ctx context.Context, r float64) (Window, error) {
		seen[r]++
		if seen[r] == 2 && r == 1000 { // 1000 passed in the exponential phase; fail its first confirmation
			noisy.flaky[r] = 1
		}
		return noisy.probe(ctx, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rate >= 1000 || res.Rate == 0 || res.Above != 1000 {
		t.Errorf("after a failed confirmation at 1000: got [%v, %v), want below 1000, above = 1000", res.Rate, res.Above)
	}
}

// TestSearchStartFails halves a failing start until a window passes, then
// searches up from there; below Start/64 it gives up with rate 0.
func TestSearchStartFails(t *testing.T) {
	m := &model{capacity: 10}
	res, err := Search(context.Background(), Options{Objective: obj, Start: 100, Limit: 1000, Tolerance: 0.05, Confirm: 2}, m.probe)
	if err != nil || !(res.Rate <= 10 && 10 < res.Above) {
		t.Errorf("capacity 10 from start 100: got [%v, %v) %v, want 10 inside", res.Rate, res.Above, err)
	}
	m = &model{capacity: 1}
	res, err = Search(context.Background(), Options{Objective: obj, Start: 100, Limit: 1000, Tolerance: 0.05, Confirm: 2}, m.probe)
	if err != nil || res.Rate != 0 || res.Above != 1.5625 || len(res.Steps) != 7 {
		t.Errorf("capacity 1: got rate %v above %v after %d windows (%v), want 0, 1.5625 (100/64), 7", res.Rate, res.Above, len(res.Steps), err)
	}
}

// TestSearchConfirmFailsAtBottom fails every confirmation at the first
// rate that passed: the search halves down from it instead of giving up.
func TestSearchConfirmFailsAtBottom(t *testing.T) {
	m := &model{capacity: 10, flaky: map[float64]int{}}
	seen := map[float64]int{}
	res, err := Search(context.Background(), Options{Objective: obj, Start: 10, Limit: 1000, Tolerance: 0.05, Confirm: 1}, func(ctx context.Context, r float64) (Window, error) {
		seen[r]++
		if r == 10 && seen[r] > 1 {
			m.flaky[r] = 1 // 10 passes once, then never again
		}
		return m.probe(ctx, r)
	})
	if err != nil || res.Rate == 0 || res.Rate >= 10 || res.Above != 10 {
		t.Errorf("got [%v, %v) %v, want a rate below 10 and above = 10", res.Rate, res.Above, err)
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
