package load

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"wafbench/driver/downstream"
)

// intendedIn counts the arrivals opts's schedule intends in [0, d): what
// an open loop that holds its rate sends in a window of d without warmup.
func intendedIn(opts Options, d time.Duration) int64 {
	a, _ := ParseArrival(string(opts.Arrival))
	var n int64
	for id := range opts.Conns {
		s := newSchedule(a, opts.Seed, id, opts.Conns, 1e9/opts.Rate)
		for s.next() < d {
			n++
		}
	}
	return n
}

// TestRunH2OpenLoop runs an open loop over h2-tls and h2c, uniform and
// Poisson, against Go's HTTP/2 server for a fixed window, and checks the
// count it delivered against the seeded schedule: never more responses
// than arrivals intended in the window, and at least 90% of them (a
// generous bound for a loaded machine: the rate is 400 req/s over 2
// connections of 4 streams). A count, not a timing, is asserted.
func TestRunH2OpenLoop(t *testing.T) {
	const rate, window = 400, 1500 * time.Millisecond
	for _, p := range []downstream.Protocol{downstream.H2TLS, downstream.H2C} {
		for _, arrival := range []Arrival{arrivalUniform, ArrivalPoisson} {
			t.Run(fmt.Sprintf("%s/%s", p, arrival), func(t *testing.T) {
				e := &echoCounter{}
				addr := startHTTP(t, p, e)
				opts := Options{Target: addr, Conns: 2, Streams: 4, Duration: window, Timeout: 5 * time.Second,
					Rate: rate, Arrival: arrival, Seed: 7, Downstream: p}
				want := intendedIn(opts, window)
				res, err := Run(context.Background(), opts, get(addr))
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Errors) != 0 || res.Statuses[200] != res.Requests {
					t.Errorf("Errors %v, Statuses %v; want only 200s", res.Errors, res.Statuses)
				}
				if low := want * 9 / 10; res.Requests < low || res.Requests > want {
					t.Errorf("Requests: got %d, want %d..%d (90%%..100%% of the %d arrivals the schedule intends in %v)",
						res.Requests, low, want, want, window)
				}
				if got := e.requests.Load(); got < res.Requests || got > want {
					t.Errorf("server saw %d requests, want %d..%d", got, res.Requests, want)
				}
				if res.RateRequested != rate || res.Arrival != arrival {
					t.Errorf("RateRequested %v, Arrival %q; want %v, %q", res.RateRequested, res.Arrival, float64(rate), arrival)
				}
				if res.Late < 0 || res.Late > res.Requests {
					t.Errorf("Late: got %d, want 0..%d", res.Late, res.Requests)
				}
				t.Logf("intended %d, responses %d, late %d, p50 %.0f µs, p99 %.0f µs",
					want, res.Requests, res.Late, res.Percentile(50), res.Percentile(99))
			})
		}
	}
}

// TestRunH2OpenLoopCoordinatedOmission is TestRunOpenLoopCoordinatedOmission
// over h2c: one connection of one stream, the server stalling once, on
// request k. An arrival that finds the stream busy waits for it, and its
// latency counts from its intended time, so the requests queued behind
// the stall are charged for it: request j > k, sent no earlier than k's
// response (k/rate + stall), has latency at least stall − (j−k)/rate,
// which is at least stall/2 for the half = stall·rate/2 requests after k.
func TestRunH2OpenLoopCoordinatedOmission(t *testing.T) {
	const (
		rate  = 500
		k     = 50
		n     = 200
		stall = 200 * time.Millisecond
	)
	half := int(stall.Seconds() * rate / 2) // 50
	var served atomic.Int64
	addr := startHTTP(t, downstream.H2C, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == k+1 { // request index k, counting from 0
			time.Sleep(stall)
		}
		w.Write([]byte("ok"))
	}))
	opts := Options{Target: addr, Conns: 1, Streams: 1, Duration: forever, Timeout: forever, MaxRequests: n,
		Rate: rate, Downstream: downstream.H2C}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != n || len(res.Errors) != 0 {
		t.Fatalf("Requests %d, Errors %v; want %d and none", res.Requests, res.Errors, n)
	}
	q := 100 * float64(n-half) / float64(n) // 75: see TestRunOpenLoopCoordinatedOmission
	if p := res.Percentile(q); p < float64(stall.Microseconds()/2) {
		t.Errorf("p%.1f: got %.0f µs, want >= %v (the stall, charged to the requests queued behind it)", q, p, stall/2)
	}
	if res.Late < int64(half) {
		t.Errorf("Late: got %d, want >= %d", res.Late, half)
	}
	// The half queued behind the stall waited for the busy stream: late,
	// but not the client's lag.
	if res.Lagged > res.Late-int64(half) {
		t.Errorf("Lagged: got %d, want <= Late − %d = %d", res.Lagged, half, res.Late-int64(half))
	}
	t.Logf("requests %d, late %d, lagged %d, p50 %.0f µs, p%.1f %.0f µs", res.Requests, res.Late, res.Lagged, res.Percentile(50), q, res.Percentile(q))
}

// TestRunH2OpenLoopServerStreams: a server advertising
// SETTINGS_MAX_CONCURRENT_STREAMS 1, slower than the rate, resets every
// stream beyond it; the client, asked for 8 streams, keeps to 1 once the
// server's SETTINGS arrived (the warmup covers the first moments), so the
// window has no reset and every arrival waits for the one stream.
func TestRunH2OpenLoopServerStreams(t *testing.T) {
	var inFlight, most atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(2 * time.Millisecond) // slower than the 2 ms between arrivals, with the rest of the work
		w.Write([]byte("ok"))
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1}
	srv.Start()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	const n = 100
	opts := Options{Target: addr, Conns: 1, Streams: 8, Warmup: 200 * time.Millisecond, Duration: forever, Timeout: forever,
		MaxRequests: n, Rate: 500, Downstream: downstream.H2C}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != n || len(res.Errors) != 0 {
		t.Errorf("Requests %d, Errors %v; want %d and none (a reset: more streams than the server allows)", res.Requests, res.Errors, n)
	}
	if got := most.Load(); got != 1 {
		t.Errorf("server held up to %d requests at once, want 1", got)
	}
	t.Logf("requests %d, late %d, warmup errors %d, p50 %.0f µs, p99 %.0f µs", res.Requests, res.Late, res.WarmupErrors, res.Percentile(50), res.Percentile(99))
}
