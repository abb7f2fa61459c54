package load

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"wafbench/driver/upstream/upstreamtest"
)

// TestScheduleUniform checks the round-robin slots of the uniform schedule.
func TestScheduleUniform(t *testing.T) {
	s := newSchedule(arrivalUniform, 0, 1, 4, 1000)
	for i, want := range []time.Duration{1000, 5000, 9000} {
		if got := s.next(); got != want {
			t.Errorf("slot %d: got %v, want %v", i, got, want)
		}
	}
}

// TestSchedulePoisson checks the merged schedule of all connections: the
// mean gap is 1/Rate, the gaps' coefficient of variation is that of an
// exponential distribution (1), the per-second counts have the variance of
// a Poisson distribution (≈ their mean), and a seed gives the same schedule
// twice. The generator is seeded, so the figures are fixed: the bounds only
// absorb the sample's own spread.
func TestSchedulePoisson(t *testing.T) {
	const conns, rate, n = 8, 1000.0, 25000
	every := 1e9 / rate
	var at []float64
	for id := range conns {
		s := newSchedule(ArrivalPoisson, 7, id, conns, every)
		for range n {
			at = append(at, float64(s.next()))
		}
	}
	// Merge: the schedule up to the earliest last arrival of a connection.
	horizon := math.Inf(1)
	for id := range conns {
		horizon = min(horizon, at[(id+1)*n-1])
	}
	perSec := make([]float64, int(horizon/1e9))
	var kept []float64
	for _, x := range at {
		if x < horizon {
			kept = append(kept, x)
			if s := int(x / 1e9); s < len(perSec) {
				perSec[s]++
			}
		}
	}
	slices.Sort(kept)
	var sum, sq float64
	for i := 1; i < len(kept); i++ {
		g := kept[i] - kept[i-1]
		sum += g
		sq += g * g
	}
	m := float64(len(kept) - 1)
	mean := sum / m
	cv := math.Sqrt(sq/m-mean*mean) / mean
	if math.Abs(mean/every-1) > 0.03 {
		t.Errorf("mean gap: got %.1f ns, want %.1f ±3%%", mean, every)
	}
	if math.Abs(cv-1) > 0.05 {
		t.Errorf("gap coefficient of variation: got %.3f, want 1 ±0.05 (exponential)", cv)
	}
	var cm, cv2 float64
	for _, c := range perSec {
		cm += c
	}
	cm /= float64(len(perSec))
	for _, c := range perSec {
		cv2 += (c - cm) * (c - cm)
	}
	cv2 /= float64(len(perSec) - 1)
	if d := cv2 / cm; d < 0.6 || d > 1.5 {
		t.Errorf("per-second counts: variance/mean %.2f over %d s, want ≈ 1 (Poisson)", d, len(perSec))
	}
	a, b := newSchedule(ArrivalPoisson, 7, 3, conns, every), newSchedule(ArrivalPoisson, 7, 3, conns, every)
	c := newSchedule(ArrivalPoisson, 8, 3, conns, every)
	same := true
	for range 100 {
		x, y, z := a.next(), b.next(), c.next()
		if x != y {
			t.Fatalf("seed 7 twice: %v != %v", x, y)
		}
		same = same && x == z
	}
	if same {
		t.Error("seeds 7 and 8 gave the same schedule")
	}
}

// TestRunPoisson runs an open-loop Poisson trial to a fixed count and checks
// the result names its arrival process and seed, and counts every request.
func TestRunPoisson(t *testing.T) {
	_, addr := upstreamtest.Start(t)
	const n = 300
	opts := Options{Target: addr, Conns: 8, Duration: forever, Timeout: forever, MaxRequests: n, Rate: 3000, Arrival: ArrivalPoisson, Seed: 42}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != n || len(res.Errors) != 0 {
		t.Errorf("Requests %d, Errors %v: want %d, none", res.Requests, res.Errors, n)
	}
	if res.Arrival != ArrivalPoisson || res.Seed != 42 {
		t.Errorf("Arrival %q Seed %d: want poisson 42", res.Arrival, res.Seed)
	}
	s := res.Summarize(addr, 8)
	if s.Arrival != "poisson" || s.Seed != 42 {
		t.Errorf("Summary arrival %q seed %d: want poisson 42", s.Arrival, s.Seed)
	}
}

// TestArrivalValidate checks the option's bad values.
func TestArrivalValidate(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Target: "127.0.0.1:1", Conns: 1, Duration: 1, Arrival: "burst", Rate: 1}, `arrival: want uniform or poisson, got "burst"`},
		{Options{Target: "127.0.0.1:1", Conns: 1, Duration: 1, Arrival: ArrivalPoisson}, "arrival: poisson needs an open-loop rate > 0"},
	} {
		if err := tc.opts.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("Validate: got %v, want %q", err, tc.want)
		}
	}
}
