package load

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

func TestLagThreshold(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want time.Duration
	}{
		{100, 5 * time.Millisecond},
		{1000, 500 * time.Microsecond},
		{15000, 33333 * time.Nanosecond},
		{1e7, time.Microsecond}, // half of 100 ns, raised to the histograms' resolution
	} {
		if got := lagThreshold(1e9 / tc.rate); got != tc.want {
			t.Errorf("rate %g: got %v, want %v", tc.rate, got, tc.want)
		}
	}
}

// TestLateness checks which sends Late and Lagged count: arrivals due in
// the window written past the lag threshold, Lagged only when the client's
// own part is past it too.
func TestLateness(t *testing.T) {
	const lag, stall = 100 * time.Microsecond, time.Millisecond
	w := &worker{t: &trial{wStart: time.Second, lag: lag, stall: stall}}
	for _, tc := range []struct {
		name                  string
		intended, now, own    time.Duration
		late, lagged, stalled int64
	}{
		{"on time", 2 * time.Second, 2*time.Second + lag, lag, 0, 0, 0},
		{"late, waited for its connection", 2 * time.Second, 2*time.Second + 3*lag, 10 * time.Microsecond, 1, 0, 0},
		{"late, the client's own", 2 * time.Second, 2*time.Second + 3*lag, 2 * lag, 1, 1, 0},
		{"stalled, the client's own past 1 ms", 2 * time.Second, 2*time.Second + 2*stall, 2 * stall, 1, 1, 1},
		{"late past 1 ms, waited for its connection", 2 * time.Second, 2*time.Second + 2*stall, 2 * lag, 1, 1, 0},
		{"due in the warmup", time.Second - time.Millisecond, time.Second + time.Millisecond, 2 * time.Millisecond, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.late, w.lagged, w.stalled = 0, 0, 0
			w.lateness(tc.intended, tc.now, tc.own)
			if w.late != tc.late || w.lagged != tc.lagged || w.stalled != tc.stalled {
				t.Errorf("late %d, lagged %d, stalled %d; want %d, %d, %d", w.late, w.lagged, w.stalled, tc.late, tc.lagged, tc.stalled)
			}
		})
	}
}

// TestSentOwnDelay: an HTTP/1.1 send's own delay runs from the later of its
// intended time and its connection falling free, less a connect.
func TestSentOwnDelay(t *testing.T) {
	w := &worker{t: &trial{lag: time.Millisecond}}
	const ms, us = time.Millisecond, time.Microsecond
	for _, tc := range []struct {
		name                               string
		intended, freeAt, now, dialed, own time.Duration
	}{
		{"connection free before the arrival", 10 * ms, 9 * ms, 10*ms + 30*us, 0, 30 * us},
		{"connection busy past the arrival", 10 * ms, 12 * ms, 12*ms + 5*us, 0, 5 * us},
		{"a connect first: not the client's own", 10 * ms, 9 * ms, 10*ms + 230*us, 200 * us, 30 * us},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.freeAt1 = tc.freeAt
			st := stamp{start: tc.intended}
			w.sent(&st, tc.now, tc.dialed)
			if st.sent != tc.now || st.own != tc.own {
				t.Errorf("sent %v, own %v; want %v, %v", st.sent, st.own, tc.now, tc.own)
			}
		})
	}
}

func TestSendHistsRecord(t *testing.T) {
	s := newSendHists()
	s.record(stamp{start: 100 * time.Microsecond, sent: 350 * time.Microsecond, own: 50 * time.Microsecond}, 1350*time.Microsecond)
	s.record(stamp{start: time.Millisecond, sent: time.Millisecond, own: 0}, 1200*time.Microsecond) // sent on time: 0 µs counts as 1
	for _, tc := range []struct {
		name     string
		got      int64
		min, max int64
	}{
		{"delay", s.delay.Max(), 250, 250},
		{"delay", s.delay.Min(), 1, 1},
		{"own", s.own.Max(), 50, 50},
		{"from send", s.fromSend.Max(), 1000, 1000},
		{"from send", s.fromSend.Min(), 200, 200},
	} {
		if tc.got < tc.min || tc.got > tc.max {
			t.Errorf("%s: got %d µs, want %d", tc.name, tc.got, tc.min)
		}
	}
	if s.delay.TotalCount() != 2 || s.own.TotalCount() != 2 || s.fromSend.TotalCount() != 2 {
		t.Errorf("counts %d %d %d, want 2 each", s.delay.TotalCount(), s.own.TotalCount(), s.fromSend.TotalCount())
	}
}

// TestRunOpenLoopSendDelay stalls the server once, as
// TestRunOpenLoopCoordinatedOmission does, and checks the send
// bookkeeping against what holds for every request whatever the machine's
// speed: the histograms count the valid responses; latency from the
// intended time = send delay + latency from the write, so each quantile of
// the latency lies between the latency from the write and that plus the
// largest delay; the client's own delay is part of the send delay, so none
// of its quantiles exceeds the delay's; and the stall·rate/2 requests
// queued first behind the stall carry at least stall/2 of send delay.
func TestRunOpenLoopSendDelay(t *testing.T) {
	const (
		rate  = 500
		k     = 50
		n     = 200
		stall = 200 * time.Millisecond
	)
	half := int(stall.Seconds() * rate / 2)
	var served atomic.Int64
	addr := startRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if served.Add(1) == k+1 {
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
	s := res.Send
	if s == nil {
		t.Fatal("Send: nil for an open loop")
	}
	if s.LagThreshold != time.Millisecond {
		t.Errorf("LagThreshold: got %v, want 1ms (half of 1/500 s)", s.LagThreshold)
	}
	for name, h := range map[string]int64{"Delay": s.Delay.TotalCount(), "Own": s.Own.TotalCount(), "FromSend": s.FromSend.TotalCount()} {
		if h != res.Requests {
			t.Errorf("%s counts %d, want Requests %d", name, h, res.Requests)
		}
	}
	dmax := s.Delay.Max()
	for _, q := range []float64{50, 75, 90, 99, 100} {
		lat, from, d, own := res.Hist.ValueAtQuantile(q), s.FromSend.ValueAtQuantile(q), s.Delay.ValueAtQuantile(q), s.Own.ValueAtQuantile(q)
		// µs truncation of each part and the histograms' 3 digits: 0.2% + 2 µs.
		slack := func(v int64) int64 { return v/500 + 2 }
		if lat+slack(lat) < from || lat > from+dmax+slack(from+dmax) {
			t.Errorf("p%g: latency %d µs, want within [from send %d, from send + max delay %d]", q, lat, from, from+dmax)
		}
		if own > d+slack(d) {
			t.Errorf("p%g: own delay %d µs > send delay %d µs", q, own, d)
		}
	}
	// Request j in k+1..k+half is sent after k's answer, at least
	// k/rate + stall: its delay is at least stall − (j−k)/rate ≥ stall/2. So
	// the (n−half+1)-th smallest of n delays is one of theirs.
	q := 100 * float64(n-half+1) / float64(n)
	if p := s.Delay.ValueAtQuantile(q); p < stall.Microseconds()/2 {
		t.Errorf("send delay p%.1f: got %d µs, want >= %v (the requests queued behind the stall)", q, p, stall/2)
	}
	t.Logf("latency p50 %d p99 %d; from send p50 %d p99 %d; delay p50 %d p99 %d; own p50 %d p99 %d µs",
		res.Hist.ValueAtQuantile(50), res.Hist.ValueAtQuantile(99), s.FromSend.ValueAtQuantile(50), s.FromSend.ValueAtQuantile(99),
		s.Delay.ValueAtQuantile(50), s.Delay.ValueAtQuantile(99), s.Own.ValueAtQuantile(50), s.Own.ValueAtQuantile(99))
}

// TestRunClosedLoopNoSend: a closed loop keeps no send delay.
func TestRunClosedLoopNoSend(t *testing.T) {
	addr := serveAfter(t, 0)
	res, err := Run(context.Background(), Options{Target: addr, Conns: 1, Duration: forever, Timeout: forever, MaxRequests: 20}, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Send != nil {
		t.Errorf("Send: got %+v, want nil", res.Send)
	}
	if sum := res.Summarize(addr, 1); sum.Send != nil {
		t.Errorf("summary send: got %+v, want nil", sum.Send)
	}
}
