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

	"wafbench/driver/upstream"
)

// startUpstream serves the upstream package on loopback until the test ends.
func startUpstream(tb testing.TB) (*upstream.Server, string) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := new(upstream.Server)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(ctx, ln)
	}()
	tb.Cleanup(func() { cancel(); <-done })
	return s, ln.Addr().String()
}

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

func TestRunClosedLoop(t *testing.T) {
	srv, addr := startUpstream(t)
	for _, conns := range []int{1, 16} {
		t.Run(fmt.Sprintf("conns=%d", conns), func(t *testing.T) {
			var calls []string
			opts := Options{
				Target: addr, Conns: conns, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
				OnWarmupEnd:  func() { calls = append(calls, "warmup-end") },
				OnMeasureEnd: func() { calls = append(calls, "measure-end") },
			}
			before := srv.Stats().Requests
			res, err := Run(context.Background(), opts, get(addr))
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests <= 0 {
				t.Fatalf("Requests: got %d, want > 0", res.Requests)
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
			if got, want := strings.Join(calls, ","), "warmup-end,measure-end"; got != want {
				t.Errorf("callbacks: got %q, want %q", got, want)
			}
			if res.Elapsed != opts.Duration && (res.Elapsed < opts.Duration-5*time.Millisecond || res.Elapsed > opts.Duration) {
				t.Errorf("Elapsed: got %v, want ≈ %v", res.Elapsed, opts.Duration)
			}
			// The server saw warmup and window requests, and perhaps a few
			// cut off at the end.
			if served := srv.Stats().Requests - before; served < res.Requests {
				t.Errorf("server served %d, fewer than the %d counted", served, res.Requests)
			}
			if res.Percentile(50) <= 0 || res.Percentile(100) < res.Percentile(50) {
				t.Errorf("percentiles: p50 %v p100 %v", res.Percentile(50), res.Percentile(100))
			}
			t.Logf("%d conns: %.0f req/s, p50 %.0f µs, p99 %.0f µs", conns, res.ReqPerS(), res.Percentile(50), res.Percentile(99))
		})
	}
}

func TestRunStatusMismatch(t *testing.T) {
	_, addr := startUpstream(t)
	req := get(addr)
	req.ExpectStatus = 403
	res, err := Run(context.Background(), Options{Target: addr, Conns: 2, Duration: 100 * time.Millisecond}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 {
		t.Errorf("Requests: got %d, want 0", res.Requests)
	}
	if res.Statuses[200] == 0 || res.Errors["status_200"] != res.Statuses[200] {
		t.Errorf("got Statuses %v, Errors %v; want status_200 == Statuses[200] > 0", res.Statuses, res.Errors)
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

func TestRunOpenLoop(t *testing.T) {
	_, addr := startUpstream(t)
	const rate = 2000
	opts := Options{Target: addr, Conns: 8, Warmup: 100 * time.Millisecond, Duration: time.Second, Rate: rate}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 0 {
		t.Errorf("Errors: got %v, want none", res.Errors)
	}
	if res.RateRequested != rate {
		t.Errorf("RateRequested: got %v, want %v", res.RateRequested, rate)
	}
	if res.RateAchieved < 0.8*rate || res.RateAchieved > 1.2*rate {
		t.Errorf("RateAchieved: got %.0f, want %d ± 20%%", res.RateAchieved, rate)
	}
	if got := sum(res.PerSecond); got != res.Requests || res.Hist.TotalCount() != res.Requests {
		t.Errorf("PerSecond sums to %d, Hist holds %d, Requests %d", got, res.Hist.TotalCount(), res.Requests)
	}
	t.Logf("achieved %.0f req/s, late %d, p50 %.0f µs, p99 %.0f µs", res.RateAchieved, res.Late, res.Percentile(50), res.Percentile(99))
}

// TestRunOpenLoopCoordinatedOmission stalls the server once and checks that
// the requests queued behind the stall are charged for it.
func TestRunOpenLoopCoordinatedOmission(t *testing.T) {
	var n atomic.Int64
	addr := startRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if n.Add(1) == 50 {
				time.Sleep(200 * time.Millisecond)
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	opts := Options{Target: addr, Conns: 1, Duration: 500 * time.Millisecond, Rate: 500}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	// At 500 req/s a 200 ms stall delays ~100 intended sends; about half of
	// them wait over 100 ms. Measuring from the actual send would show one.
	if p := res.Percentile(90); p < 50_000 {
		t.Errorf("p90: got %.0f µs, want ≥ 50 ms (the stall)", p)
	}
	if res.Late < 50 {
		t.Errorf("Late: got %d, want ≥ 50", res.Late)
	}
	t.Logf("requests %d, late %d, p50 %.0f µs, p90 %.0f µs", res.Requests, res.Late, res.Percentile(50), res.Percentile(90))
}

func TestRunMaxRequests(t *testing.T) {
	_, addr := startUpstream(t)
	for _, rate := range []float64{0, 5000} {
		t.Run(fmt.Sprintf("rate=%v", rate), func(t *testing.T) {
			opts := Options{Target: addr, Conns: 4, Warmup: 50 * time.Millisecond, Duration: 10 * time.Second, MaxRequests: 300, Rate: rate}
			begin := time.Now()
			res, err := Run(context.Background(), opts, get(addr))
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != opts.MaxRequests {
				t.Errorf("Requests: got %d, want %d", res.Requests, opts.MaxRequests)
			}
			if took := time.Since(begin); took > 2*time.Second {
				t.Errorf("Run took %v; the cap should end it well before Duration", took)
			}
			if res.Elapsed <= 0 || res.Elapsed >= opts.Duration {
				t.Errorf("Elapsed: got %v", res.Elapsed)
			}
			if got := sum(res.PerSecond); got != res.Requests {
				t.Errorf("sum(PerSecond): got %d, want %d", got, res.Requests)
			}
		})
	}
}

func TestRunCancel(t *testing.T) {
	_, addr := startUpstream(t)
	for _, tc := range []struct {
		name  string
		after time.Duration
		opts  Options
	}{
		{"closed in window", 200 * time.Millisecond, Options{Conns: 4, Duration: 30 * time.Second}},
		{"closed in warmup", 100 * time.Millisecond, Options{Conns: 4, Warmup: 30 * time.Second, Duration: time.Second}},
		{"open", 200 * time.Millisecond, Options{Conns: 4, Duration: 30 * time.Second, Rate: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(tc.after, cancel)
			tc.opts.Target = addr
			measureEnd := false
			tc.opts.OnMeasureEnd = func() { measureEnd = true }
			begin := time.Now()
			res, err := Run(ctx, tc.opts, get(addr))
			if took := time.Since(begin); took > tc.after+200*time.Millisecond {
				t.Errorf("Run returned %v after start, %v after cancel", took, took-tc.after)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err: got %v, want context.Canceled", err)
			}
			if res == nil || !res.Interrupted {
				t.Fatalf("want a partial result marked Interrupted, got %+v", res)
			}
			if measureEnd {
				t.Error("OnMeasureEnd was called after cancel")
			}
			if sum(res.PerSecond) != res.Requests {
				t.Errorf("sum(PerSecond) %d != Requests %d", sum(res.PerSecond), res.Requests)
			}
		})
	}
}

// TestRunServerCloses checks that "Connection: close" and EOF count as
// "closed" and that the connection is reopened.
func TestRunServerCloses(t *testing.T) {
	addr := startRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		for i := 0; ; i++ {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if i == 2 {
				return // EOF without a response
			}
			hdr := ""
			if i == 1 {
				hdr = "Connection: close\r\n"
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\n"+hdr+"Content-Length: 2\r\n\r\nok")
			if i == 1 {
				return
			}
		}
	})
	res, err := Run(context.Background(), Options{Target: addr, Conns: 2, Duration: 200 * time.Millisecond}, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["closed"] == 0 || res.Requests == 0 {
		t.Errorf("got Requests %d, Errors %v; want both responses and closed errors", res.Requests, res.Errors)
	}
	// Every connection serves two responses and is closed once.
	if got := res.Errors["closed"] * 2; got < res.Requests-4 || got > res.Requests+4 {
		t.Errorf("closed %d vs requests %d: want two requests per connection", res.Errors["closed"], res.Requests)
	}
}

func TestRunTimeout(t *testing.T) {
	addr := startRaw(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
	opts := Options{Target: addr, Conns: 2, Duration: 500 * time.Millisecond, Timeout: 100 * time.Millisecond}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["timeout"] < 4 || res.Requests != 0 {
		t.Errorf("got Requests %d, Errors %v; want ≥ 4 timeouts", res.Requests, res.Errors)
	}
}

func TestRunBadResponse(t *testing.T) {
	addr := startRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		c.Read(buf)
		io.WriteString(c, "garbage\r\n\r\n")
	})
	res, err := Run(context.Background(), Options{Target: addr, Conns: 1, Duration: 100 * time.Millisecond}, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["parse"] == 0 {
		t.Errorf("Errors: got %v, want parse errors", res.Errors)
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
	_, addr := startUpstream(t)
	mallocs := func(n int64) uint64 {
		opts := Options{Target: addr, Conns: 2, Duration: time.Minute, MaxRequests: n}
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
	_, addr := startUpstream(b)
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
