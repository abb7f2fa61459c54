package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"wafbench/driver/upstream/upstreamtest"
)

// startRaw serves every connection with handle until the test ends.
func startRaw(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

func get(addr string) Request {
	r := Build("GET", "/safe", [][2]string{{"User-Agent", "wafbench"}, {"Accept", "*/*"}}, nil, addr)
	r.Name = "headers"
	return r
}

func sum(xs []int64) (n int64) {
	for _, x := range xs {
		n += x
	}
	return n
}

// Every test here fixes the work (MaxRequests, or an explicit server-side
// event that cancels the run) instead of the time: windows and request
// timeouts are an hour long, so a window that ends did so because of the
// cap or the cancel, no slow request counts as an error, and nothing
// depends on how fast the machine is.
const forever = time.Hour

// onCount returns a function that counts calls and cancels the run when
// the count reaches n, and that count.
func onCount(n int64, cancel context.CancelFunc) (func(), *atomic.Int64) {
	var c atomic.Int64
	return func() {
		if c.Add(1) == n {
			cancel()
		}
	}, &c
}

// TestRunClosedLoop sends a fixed number of requests and checks that the
// client, the histogram, the per-second series and the server all count the
// same requests.
func TestRunClosedLoop(t *testing.T) {
	srv, addr := upstreamtest.Start(t)
	const n = 500
	for _, conns := range []int{1, 16} {
		t.Run(fmt.Sprintf("conns=%d", conns), func(t *testing.T) {
			var calls []string
			opts := Options{
				Target: addr, Conns: conns, Duration: forever, Timeout: forever, MaxRequests: n,
				OnWarmupEnd:  func() { calls = append(calls, "warmup-end") },
				OnMeasureEnd: func() { calls = append(calls, "measure-end") },
			}
			before := srv.Stats().Requests
			res, err := Run(context.Background(), opts, get(addr))
			if err != nil {
				t.Fatal(err)
			}
			served := srv.Stats().Requests - before
			if res.Requests != n {
				t.Errorf("Requests: got %d, want %d", res.Requests, n)
			}
			if len(res.Errors) != 0 || res.WarmupErrors != 0 {
				t.Errorf("Errors: got %v (warmup %d), want none", res.Errors, res.WarmupErrors)
			}
			if got := res.Hist.TotalCount(); got != res.Requests {
				t.Errorf("Hist.TotalCount: got %d, want %d", got, res.Requests)
			}
			if got := sum(res.PerSecond); got != res.Requests {
				t.Errorf("sum(PerSecond): got %d, want %d", got, res.Requests)
			}
			if got := res.Statuses[200]; got != res.Requests {
				t.Errorf("Statuses[200]: got %d, want %d", got, res.Requests)
			}
			// The server counts before it answers. Once the cap is reached
			// each other connection may still have one request answered
			// that the client no longer counts; one connection stops at
			// the cap exactly.
			if served < n || served > n+int64(conns-1) {
				t.Errorf("server served %d, want %d..%d (the cap plus at most one per other connection)", served, n, n+int64(conns-1))
			}
			if got, want := strings.Join(calls, ","), "warmup-end,measure-end"; got != want {
				t.Errorf("callbacks: got %q, want %q", got, want)
			}
			if res.Elapsed <= 0 || res.Elapsed >= opts.Duration || res.Interrupted {
				t.Errorf("Elapsed %v, Interrupted %v: want the cap to end the window", res.Elapsed, res.Interrupted)
			}
			if res.Percentile(50) <= 0 || res.Percentile(100) < res.Percentile(50) {
				t.Errorf("percentiles: p50 %v p100 %v", res.Percentile(50), res.Percentile(100))
			}
			t.Logf("%d conns: %.0f req/s, p50 %.0f µs, p99 %.0f µs", conns, res.ReqPerS(), res.Percentile(50), res.Percentile(99))
		})
	}
}

// TestRunPerRequest: in per-request mode every request opens its own
// connection, counted by the upstream's accepts, and the server closing
// after a response is not an error there.
func TestRunPerRequest(t *testing.T) {
	const n = 300
	for _, tc := range []struct {
		conns int
		rate  float64
	}{{1, 0}, {1, 3000}, {4, 0}} {
		t.Run(fmt.Sprintf("conns=%d,rate=%v", tc.conns, tc.rate), func(t *testing.T) {
			srv, addr := upstreamtest.Start(t) // fresh: no late accepts of another subtest
			opts := Options{Target: addr, Conns: tc.conns, Duration: forever, Timeout: forever, MaxRequests: n, Rate: tc.rate, ConnMode: ConnPerRequest}
			res, err := Run(context.Background(), opts, get(addr))
			if err != nil {
				t.Fatal(err)
			}
			st := srv.Stats()
			if res.Requests != n || len(res.Errors) != 0 {
				t.Errorf("got %d requests, errors %v; want %d, none", res.Requests, res.Errors, n)
			}
			// One connection stops at the cap exactly, and the server
			// accepted and answered every request before its response
			// arrived, so the counts are exact. With more connections,
			// others may still be connecting or sending when Run returns
			// (the server's counts lag), so only the lower bound holds,
			// which keep-alive (tc.conns accepts) would fail.
			if tc.conns == 1 && (st.Conns != n || st.Requests != n) {
				t.Errorf("accepts %d, served %d: want %d each (one connection per request)", st.Conns, st.Requests, n)
			}
			if st.Conns < n || st.Requests < n {
				t.Errorf("accepts %d, served %d: want at least %d each (one connection per request)", st.Conns, st.Requests, n)
			}
		})
	}
	t.Run("server closes", func(t *testing.T) {
		// Every answer says "Connection: close" and the server closes.
		var accepted atomic.Int64
		addr := startRaw(t, func(c net.Conn) {
			accepted.Add(1)
			buf := make([]byte, 4096)
			if _, err := c.Read(buf); err == nil {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
			}
		})
		res, err := Run(context.Background(), Options{Target: addr, Conns: 1, Duration: forever, Timeout: forever, MaxRequests: 50, ConnMode: ConnPerRequest}, get(addr))
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 50 || len(res.Errors) != 0 || accepted.Load() != 50 {
			t.Errorf("got %d requests, errors %v, %d accepts; want 50, none, 50", res.Requests, res.Errors, accepted.Load())
		}
	})
}

// TestRunLargeBody sends a request larger than the socket buffers, so the
// write queued by Send fills the send buffer and finishes on the waiting
// path, and the upstream sees every request whole.
func TestRunLargeBody(t *testing.T) {
	srv, addr := upstreamtest.Start(t)
	body := []byte(strings.Repeat("a", 8<<20))
	req := Build("POST", "/upload", [][2]string{{"Content-Type", "text/plain"}}, body, addr)
	before := srv.Stats()
	res, err := Run(context.Background(), Options{Target: addr, Conns: 2, Duration: forever, Timeout: forever, MaxRequests: 6}, req)
	if err != nil {
		t.Fatal(err)
	}
	after := srv.Stats()
	if res.Requests != 6 || len(res.Errors) != 0 || after.BadRequests != before.BadRequests {
		t.Errorf("got %d requests, errors %v, %d bad requests at the server; want 6, none, 0", res.Requests, res.Errors, after.BadRequests-before.BadRequests)
	}
}

// TestRunWarmup checks the order of the callbacks around a warmup and that
// warmup responses are not counted in the window.
func TestRunWarmup(t *testing.T) {
	srv, addr := upstreamtest.Start(t)
	const n = 200
	var calls []string
	before := srv.Stats().Requests
	opts := Options{
		Target: addr, Conns: 2, Warmup: 50 * time.Millisecond, Duration: forever, Timeout: forever, MaxRequests: n,
		OnWarmupEnd:  func() { calls = append(calls, "warmup-end") },
		OnMeasureEnd: func() { calls = append(calls, "measure-end") },
	}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	served := srv.Stats().Requests - before
	if res.Requests != n || res.Hist.TotalCount() != n {
		t.Errorf("Requests %d, Hist %d: want %d", res.Requests, res.Hist.TotalCount(), n)
	}
	if served < n {
		t.Errorf("server served %d, fewer than the %d counted", served, n)
	}
	if got, want := strings.Join(calls, ","), "warmup-end,measure-end"; got != want {
		t.Errorf("callbacks: got %q, want %q", got, want)
	}
	if res.Warmup < opts.Warmup {
		t.Errorf("Warmup: got %v, want >= %v", res.Warmup, opts.Warmup)
	}
	t.Logf("server served %d: %d in warmup or after the cap", served, served-n)
}

func TestRunStatusMismatch(t *testing.T) {
	_, addr := upstreamtest.Start(t)
	req := get(addr)
	req.ExpectStatus = 403
	// The cap counts responses of any status.
	const n = 200
	res, err := Run(context.Background(), Options{Target: addr, Conns: 2, Duration: forever, Timeout: forever, MaxRequests: n}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 {
		t.Errorf("Requests: got %d, want 0", res.Requests)
	}
	if res.Statuses[200] != n || res.Errors["status_200"] != n {
		t.Errorf("got Statuses %v, Errors %v; want status_200 == Statuses[200] == %d", res.Statuses, res.Errors, n)
	}
	if res.Hist.TotalCount() != 0 || sum(res.PerSecond) != 0 {
		t.Errorf("mismatched responses were recorded as valid")
	}
	if res.RateAchieved <= 0 {
		t.Errorf("RateAchieved: got %v, want > 0", res.RateAchieved)
	}
}

func TestRunConnectRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res, err := Run(context.Background(), Options{Target: addr, Conns: 4, Duration: time.Second}, get(addr))
	if res != nil || err == nil {
		t.Fatalf("got %v, %v; want an error", res, err)
	}
	if got, want := err.Error(), "connect "+addr+": connection refused"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("errors.Is(err, ECONNREFUSED) is false")
	}
}

// TestRunOpenLoop sends a fixed number of paced requests. How close the run
// came to its rate depends on the machine; that it never ran ahead of it
// does not: the k-th response cannot come before its intended time
// (k-1)/Rate.
func TestRunOpenLoop(t *testing.T) {
	srv, addr := upstreamtest.Start(t)
	const rate, n = 2000, 400
	before := srv.Stats().Requests
	opts := Options{Target: addr, Conns: 8, Duration: forever, Timeout: forever, MaxRequests: n, Rate: rate}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 0 {
		t.Errorf("Errors: got %v, want none", res.Errors)
	}
	if res.Requests != n {
		t.Errorf("Requests: got %d, want %d", res.Requests, n)
	}
	if res.RateRequested != rate {
		t.Errorf("RateRequested: got %v, want %v", res.RateRequested, rate)
	}
	if ceiling := rate * float64(n) / float64(n-1) * (1 + 1e-9); res.RateAchieved <= 0 || res.RateAchieved > ceiling {
		t.Errorf("RateAchieved: got %.1f, want > 0 and <= %.1f (never ahead of the schedule)", res.RateAchieved, ceiling)
	}
	if min := time.Duration(float64(n-1) / rate * float64(time.Second)); res.Elapsed < min {
		t.Errorf("Elapsed: got %v, want >= %v ((n-1)/rate)", res.Elapsed, min)
	}
	if got := sum(res.PerSecond); got != res.Requests || res.Hist.TotalCount() != res.Requests {
		t.Errorf("PerSecond sums to %d, Hist holds %d, Requests %d", got, res.Hist.TotalCount(), res.Requests)
	}
	if served := srv.Stats().Requests - before; served < n || served > n+int64(opts.Conns-1) {
		t.Errorf("server served %d, want %d..%d", served, n, n+int64(opts.Conns-1))
	}
	if res.Late < 0 || res.Late > n {
		t.Errorf("Late: got %d, want 0..%d", res.Late, n)
	}
	t.Logf("achieved %.0f req/s, late %d, p50 %.0f µs, p99 %.0f µs", res.RateAchieved, res.Late, res.Percentile(50), res.Percentile(99))
}

// TestRunOpenLoopCoordinatedOmission stalls the server once, on request k,
// and checks that the requests queued behind the stall are charged for it.
//
// The stall is the fault under test, not a synchronisation: it lasts at
// least stall (a sleep never ends early), and the bounds below follow from
// that alone, whatever the machine's speed. On one connection request k
// arrives no earlier than its intended time k/rate, so its response comes
// no earlier than k/rate + stall, and request j > k is sent after that:
// its latency, measured from its intended time j/rate, is at least
// stall − (j−k)/rate. For the half = stall·rate/2 requests after k that is
// at least stall/2. Measuring from the actual send would hide all of them.
func TestRunOpenLoopCoordinatedOmission(t *testing.T) {
	const (
		rate  = 500
		k     = 50
		n     = 200
		stall = 200 * time.Millisecond
	)
	half := int(stall.Seconds() * rate / 2) // 50
	var served atomic.Int64
	addr := startRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if served.Add(1) == k+1 { // request index k, counting from 0
				time.Sleep(stall)
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	opts := Options{Target: addr, Conns: 1, Duration: forever, Timeout: forever, MaxRequests: n, Rate: rate}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != n {
		t.Fatalf("Requests: got %d, want %d", res.Requests, n)
	}
	// At least half+1 of n responses (k itself and the half after it)
	// took >= stall/2: the (n-half)-th smallest of n latencies is one of
	// them, and that is the value at quantile (n-half)/n.
	q := 100 * float64(n-half) / float64(n) // 75
	if p := res.Percentile(q); p < float64(stall.Microseconds()/2) {
		t.Errorf("p%.1f: got %.0f µs, want >= %v (the stall, charged to the requests queued behind it)", q, p, stall/2)
	}
	if res.Late < int64(half) {
		t.Errorf("Late: got %d, want >= %d", res.Late, half)
	}
	// The half queued behind the stall waited for the busy connection:
	// late, but not the client's lag.
	if res.Lagged > res.Late-int64(half) {
		t.Errorf("Lagged: got %d, want <= Late − %d = %d", res.Lagged, half, res.Late-int64(half))
	}
	t.Logf("requests %d, late %d, lagged %d, p50 %.0f µs, p%.1f %.0f µs", res.Requests, res.Late, res.Lagged, res.Percentile(50), q, res.Percentile(q))
}

func TestRunMaxRequests(t *testing.T) {
	_, addr := upstreamtest.Start(t)
	for _, rate := range []float64{0, 5000} {
		t.Run(fmt.Sprintf("rate=%v", rate), func(t *testing.T) {
			opts := Options{Target: addr, Conns: 4, Warmup: 10 * time.Millisecond, Duration: forever, Timeout: forever, MaxRequests: 300, Rate: rate}
			res, err := Run(context.Background(), opts, get(addr))
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != opts.MaxRequests {
				t.Errorf("Requests: got %d, want %d", res.Requests, opts.MaxRequests)
			}
			if res.Elapsed <= 0 || res.Elapsed >= opts.Duration {
				t.Errorf("Elapsed: got %v, want the cap to end the window", res.Elapsed)
			}
			if got := sum(res.PerSecond); got != res.Requests {
				t.Errorf("sum(PerSecond): got %d, want %d", got, res.Requests)
			}
		})
	}
}

// TestRunCancel cancels runs on an explicit event (the server's count of
// requests, or the start of the window) in each phase, with windows and
// warmups far longer than any test: Run returning at all shows the cancel
// took effect.
func TestRunCancel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int64 // cancel when the server has seen this many requests
		opts  Options
	}{
		{"closed in window", 50, Options{Conns: 4, Duration: forever, Timeout: forever}},
		{"closed in warmup", 50, Options{Conns: 4, Warmup: forever, Duration: time.Second, Timeout: forever}},
		{"open", 3, Options{Conns: 4, Duration: forever, Timeout: forever, Rate: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			seen, served := onCount(tc.after, cancel)
			addr := startRaw(t, func(c net.Conn) {
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					seen()
					if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
						return
					}
				}
			})
			tc.opts.Target = addr
			var warmupEnd, measureEnd bool
			tc.opts.OnWarmupEnd = func() { warmupEnd = true }
			tc.opts.OnMeasureEnd = func() { measureEnd = true }
			res, err := Run(ctx, tc.opts, get(addr))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err: got %v, want context.Canceled", err)
			}
			if res == nil || !res.Interrupted {
				t.Fatalf("want a partial result marked Interrupted, got %+v", res)
			}
			if measureEnd {
				t.Error("OnMeasureEnd was called after cancel")
			}
			if inWarmup := tc.opts.Warmup > 0; warmupEnd == inWarmup {
				t.Errorf("OnWarmupEnd called: %v, want %v", warmupEnd, !inWarmup)
			}
			if sum(res.PerSecond) != res.Requests {
				t.Errorf("sum(PerSecond) %d != Requests %d", sum(res.PerSecond), res.Requests)
			}
			if res.Requests > served.Load() {
				t.Errorf("Requests %d > %d served", res.Requests, served.Load())
			}
			if tc.opts.Warmup > 0 && res.Requests != 0 {
				t.Errorf("Requests %d counted in a warmup that never ended", res.Requests)
			}
			if len(res.Errors) != 0 {
				t.Errorf("Errors: got %v, want none (failures caused by the cancel are not errors)", res.Errors)
			}
		})
	}
}

// TestRunServerCloses checks that "Connection: close" counts as "closed"
// and that the connection is reopened: every connection serves two
// responses, the second carrying "Connection: close".
func TestRunServerCloses(t *testing.T) {
	var accepted atomic.Int64
	addr := startRaw(t, func(c net.Conn) {
		accepted.Add(1)
		buf := make([]byte, 4096)
		for i := 0; i < 2; i++ {
			if _, err := c.Read(buf); err != nil {
				return
			}
			hdr := ""
			if i == 1 {
				hdr = "Connection: close\r\n"
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\n"+hdr+"Content-Length: 2\r\n\r\nok")
		}
	})
	const conns, n = 2, 100
	res, err := Run(context.Background(), Options{Target: addr, Conns: conns, Duration: forever, Timeout: forever, MaxRequests: n}, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != n {
		t.Errorf("Requests: got %d, want %d", res.Requests, n)
	}
	// Each connection's second response closes it, except that the one
	// that reaches the cap is not followed up; per connection that is
	// floor(responses/2), give or take that last one.
	closed := res.Errors["closed"]
	if closed*2 > n || closed*2 < n-2*conns {
		t.Errorf("closed %d for %d requests on %d connections: want two requests per connection", closed, n, conns)
	}
	for k := range res.Errors {
		if k != "closed" {
			t.Errorf("Errors: unexpected %q in %v", k, res.Errors)
		}
	}
	// The server counted every connection that got a response: each closed
	// one, and at most one more per client connection, its last.
	if a := accepted.Load(); a < closed || a > closed+conns {
		t.Errorf("server accepted %d connections for %d closes on %d connections, want %d..%d", a, closed, conns, closed, closed+conns)
	}
}

// TestRunTimeout: a server that never answers. Each timeout drops the
// connection and opens another, so the server's count of accepted
// connections is an explicit count of timeouts; the run is canceled once
// it has seen enough of them.
func TestRunTimeout(t *testing.T) {
	const conns, want = 2, 4
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	accept, accepted := onCount(conns+want, cancel)
	addr := startRaw(t, func(c net.Conn) { accept(); io.Copy(io.Discard, c) })
	opts := Options{Target: addr, Conns: conns, Duration: forever, Timeout: 20 * time.Millisecond}
	res, err := Run(ctx, opts, get(addr))
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("got %v, %v; want a partial result and context.Canceled", res, err)
	}
	// The cancel came with the (conns+want)-th connection, each of the
	// want before it opened after a timeout. (No upper bound: the server's
	// count may lag the kernel's accepts.)
	if got := res.Errors["timeout"]; got < want {
		t.Errorf("timeouts: got %d, want >= %d (connections accepted after the first %d: %d)", got, want, conns, accepted.Load()-conns)
	}
	if res.Requests != 0 || len(res.Errors) != 1 {
		t.Errorf("got Requests %d, Errors %v; want only timeouts", res.Requests, res.Errors)
	}
}

// TestRunBadResponse: garbage instead of HTTP is a parse error, and the
// connection is reopened; canceled once the server has answered enough.
func TestRunBadResponse(t *testing.T) {
	const want = 3
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answer, answered := onCount(want+1, cancel)
	addr := startRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		c.Read(buf)
		io.WriteString(c, "garbage\r\n\r\n")
		answer()
	})
	res, err := Run(ctx, Options{Target: addr, Conns: 1, Duration: forever, Timeout: forever}, get(addr))
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("got %v, %v; want a partial result and context.Canceled", res, err)
	}
	// The server counts after it answers, so the client may have parsed
	// one answer more than counted.
	if got := res.Errors["parse"]; got < want || got > answered.Load()+1 {
		t.Errorf("parse errors: got %d, want %d..%d; all errors %v", got, want, answered.Load()+1, res.Errors)
	}
}

func TestMergeEqualsOneHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := NewHistogram()
	parts := []*hdrhistogram.Histogram{NewHistogram(), NewHistogram(), NewHistogram(), nil}
	for range 100_000 {
		v := int64(rng.ExpFloat64()*200) + 1 + rng.Int64N(3)*int64(rng.IntN(1_000_000))
		all.RecordValue(v)
		parts[rng.IntN(3)].RecordValue(v)
	}
	merged := Merge(parts...)
	if !merged.Equals(all) {
		t.Errorf("merged histogram differs: count %d vs %d, p99 %d vs %d",
			merged.TotalCount(), all.TotalCount(), merged.ValueAtQuantile(99), all.ValueAtQuantile(99))
	}
}

func TestEncodeDecodeHist(t *testing.T) {
	r := &Result{Hist: NewHistogram()}
	for v := int64(1); v < 10_000_000; v = v*3 + 1 {
		r.Hist.RecordValues(v, v%7+1)
	}
	s, err := r.EncodeHist()
	if err != nil {
		t.Fatal(err)
	}
	h, err := DecodeHist(s)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Equals(r.Hist) {
		t.Error("decoded histogram differs from the encoded one")
	}
	if _, err := DecodeHist("not base64!"); err == nil {
		t.Error("DecodeHist accepted garbage")
	}
}

// TestSteadyStateAllocs checks that a longer run allocates no more than a
// shorter one: requests themselves allocate nothing.
func TestSteadyStateAllocs(t *testing.T) {
	_, addr := upstreamtest.Start(t)
	mallocs := func(n int64) uint64 {
		opts := Options{Target: addr, Conns: 2, Duration: time.Minute, MaxRequests: n, Timeout: time.Minute}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := Run(context.Background(), opts, get(addr)); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	mallocs(1000) // warm the runtime
	small, large := mallocs(1000), mallocs(21000)
	if perReq := (float64(large) - float64(small)) / 20000; perReq > 0.01 {
		t.Errorf("%.3f allocations per request (%d for 1000, %d for 21000), want 0", perReq, small, large)
	}
}

func BenchmarkClosedLoop(b *testing.B) {
	_, addr := upstreamtest.Start(b)
	for _, conns := range []int{1, 16} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			opts := Options{Target: addr, Conns: conns, Duration: time.Hour, MaxRequests: int64(b.N)}
			req := get(addr)
			b.ReportAllocs()
			b.ResetTimer()
			res, err := Run(context.Background(), opts, req)
			if err != nil {
				b.Fatal(err)
			}
			if res.Requests != int64(b.N) || len(res.Errors) != 0 {
				b.Fatalf("got %d requests, errors %v; want %d", res.Requests, res.Errors, b.N)
			}
			b.ReportMetric(res.ReqPerS(), "req/s")
		})
	}
}

// TestRunSlots: with SlotEvery, the window's latencies are also kept by
// when they completed. The server answers the first half of the requests at
// once and delays each of the rest by 50 ms: the slots together count every
// valid response, span the window, and the last slot's median is the delay
// while the first slot's is below it.
func TestRunSlots(t *testing.T) {
	const (
		n     = 60
		delay = 50 * time.Millisecond
		every = 250 * time.Millisecond
	)
	var served atomic.Int64
	addr := startRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if served.Add(1) > n/2 {
				time.Sleep(delay)
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	opts := Options{Target: addr, Conns: 1, Duration: 10 * time.Minute, Timeout: forever, MaxRequests: n, SlotEvery: every} // 2400 slots, a few used
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.SlotEvery != every {
		t.Errorf("SlotEvery: got %v, want %v", res.SlotEvery, every)
	}
	if want := int((res.Elapsed + every - 1) / every); len(res.Slots) != want {
		t.Errorf("%d slots over %v, want %d", len(res.Slots), res.Elapsed, want)
	}
	var total int64
	for _, h := range res.Slots {
		total += h.TotalCount()
	}
	if total != res.Requests || res.Requests != n {
		t.Errorf("slots count %d responses, Requests %d, want both %d", total, res.Requests, n)
	}
	first, last := res.Slots[0], res.Slots[len(res.Slots)-1]
	if first.TotalCount() == 0 || last.TotalCount() == 0 {
		t.Fatalf("first slot %d, last slot %d responses: want both > 0", first.TotalCount(), last.TotalCount())
	}
	d := delay.Microseconds()
	if p := last.ValueAtQuantile(50); p < d {
		t.Errorf("last slot p50 %d µs, want ≥ the %d µs delay", p, d)
	}
	if p := first.ValueAtQuantile(50); p >= d {
		t.Errorf("first slot p50 %d µs, want < the %d µs delay", p, d)
	}
	bad := Options{Target: addr, Conns: 1, Duration: time.Hour, SlotEvery: time.Second}
	if err := bad.Validate(); err == nil {
		t.Error("3600 one-second slots: want an error")
	}
}
