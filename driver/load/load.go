// Package load is wafbench's load engine: it holds persistent HTTP/1.1
// connections to one target, sends one pre-serialized request over and over,
// validates every response, and reports throughput, status and error counts,
// a per-second series and a latency histogram for a measured window that
// follows a warmup. It emits results only; it knows nothing about Envoy.
//
// The connections speak Options.Downstream: HTTP/1.1 in plain text (the
// default) or over TLS (crypto/tls around the same connection code), or
// HTTP/2 over TLS or in plain text with prior knowledge (h2.go: the framing
// and HPACK of golang.org/x/net/http2, Options.Streams concurrent streams
// per connection, each stream validated like an HTTP/1.1 request).
//
// Two load models:
//
//   - Closed loop (Options.Rate == 0): each connection sends its next request
//     as soon as the previous response is read, like wrk. Latency is measured
//     from the write to the end of the response.
//   - Open loop (Options.Rate > 0): requests are due at fixed intended times,
//     start + i/Rate, dealt round-robin to the connections. A connection still
//     busy with an earlier request sends late, and latency is measured from
//     the intended time, so a stall shows up in the histogram instead of
//     being hidden (coordinated omission). HTTP/1.1 without pipelining
//     carries one request per connection at a time, so an open-loop run needs
//     enough connections: at least Rate × (expected worst latency) of them,
//     or sends fall behind. Result.Late counts sends more than half the mean
//     inter-arrival time (LagFraction) behind their intended time, waits for
//     a busy connection included; Result.Lagged only those the client itself
//     held back (Result.FellBehind judges a window by these and by
//     Result.Due). Result.Send keeps the send delay apart (send.go): the
//     latency from the actual write, and how much of the corrected latency
//     the client's own delay accounts for.
//     The intended times are uniform (every 1/Rate) or, with Options.Arrival
//     "poisson", a seeded Poisson process of the same mean rate (arrival.go).
//     Over HTTP/2 each intended time opens a new stream on its connection,
//     which carries up to Options.Streams at once; an arrival that finds
//     them all busy waits the same way, its latency counted from its
//     intended time (h2open.go).
//
// One goroutine per connection, a reused read buffer, a hand-written
// response parser and per-connection histograms keep the steady state free
// of allocations and shared writes (see BenchmarkClosedLoop).
package load

import (
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"wafbench/driver/downstream"
	"wafbench/internal/http1"
)

// Request is what every connection sends, serialized once.
type Request struct {
	Name         string // workload name, for messages only
	Raw          []byte // the whole HTTP/1.1 request: request line, headers and body
	ExpectStatus int    // status a valid response has; others count as errors
}

// Build serializes a request once: the request line, Host (unless headers
// has one), headers in order, Content-Length when body is non-nil (unless
// headers sets Content-Length or Transfer-Encoding), a blank line and body.
// It never adds "Connection: close". The result has ExpectStatus 200 and no
// Name; set both as needed.
func Build(method, path string, headers [][2]string, body []byte, host string) Request {
	if !slices.ContainsFunc(headers, func(h [2]string) bool { return http1.EqualFold([]byte(h[0]), "host") }) {
		headers = append([][2]string{{"Host", host}}, headers...)
	}
	raw := http1.AppendRequest(make([]byte, 0, len(method)+len(path)+len(host)+64+len(body)), method, path, headers, body)
	return Request{Raw: raw, ExpectStatus: 200}
}

// Options describe one trial. They are not modified by Run.
type Options struct {
	Target      string        // host:port to connect to
	Conns       int           // persistent connections, 1..1024
	Warmup      time.Duration // unmeasured time before the window; 0 = none
	Duration    time.Duration // measured window; must be > 0
	MaxRequests int64         // end the window after this many responses; 0 = no cap
	Rate        float64       // 0 = closed loop; > 0 = open loop at this many req/s in total
	Timeout     time.Duration // per request and per connect; 0 = 5 s
	ConnMode    ConnMode      // "" or ConnKeepAlive: persistent connections; ConnPerRequest: one per request
	Arrival     Arrival       // open loop: "" or ArrivalUniform (fixed intervals), ArrivalPoisson (exponential gaps)
	Seed        int64         // open loop, Poisson: seed of the arrival schedule (the same seed, the same schedule)
	Pacer       Pacer         // open loop: "" or PacerTimerfd (hrtimer-precise waits), PacerGo (time.Sleep, as fortio paces)

	// Downstream is the protocol spoken to Target: "" or downstream.H1
	// (plain HTTP/1.1), H1TLS, H2TLS or H2C. HTTP/2 runs on keep-alive
	// connections only, closed or open loop (an open-loop arrival is a new
	// stream on its connection).
	Downstream downstream.Protocol
	// TLS is the client configuration of the TLS protocols; its NextProtos
	// is replaced by the protocol's ALPN. nil means the server's
	// certificate is not verified (the target is on this machine).
	TLS *tls.Config
	// Streams is the number of concurrent HTTP/2 streams per connection,
	// 1..MaxStreams; 0 means 1. HTTP/1.1 carries one request at a time.
	Streams int
	// SlotEvery, when > 0, also keeps the valid responses' latencies in one
	// histogram per SlotEvery of the measured window (Result.Slots): the
	// latency over time a soak compares, first minute against last. 0 =
	// none.
	SlotEvery time.Duration

	// OnWarmupEnd and OnMeasureEnd are called synchronously, from Run's
	// goroutine, when the measured window starts and when it ends (the
	// caller samples procfs there). Both may be nil. OnWarmupEnd is called
	// even when Warmup is 0, and then before any request is sent. Neither
	// is called once ctx is done.
	OnWarmupEnd, OnMeasureEnd func()
}

// ConnMode says how requests use connections.
type ConnMode string

// Connection modes. Keep-alive is the default; per-request opens a new TCP
// connection for every request and closes it (from the client side, without
// "Connection: close", as one curl invocation per request does) once the
// response is read. Each of Options.Conns then carries one request at a
// time, so Conns 1 in closed loop is the sequential one-request-at-a-time
// model. Per-request latency runs from the start of the connect to the end
// of the response, like curl's time_total; the first request of each
// connection slot reuses the connection Run opened to check the target.
const (
	ConnKeepAlive  ConnMode = "keepalive"
	ConnPerRequest ConnMode = "per-request"
)

// ParseConnMode returns the mode s names: "keepalive" (or "") or
// "per-request".
func ParseConnMode(s string) (ConnMode, error) {
	switch m := ConnMode(s); m {
	case "", ConnKeepAlive:
		return ConnKeepAlive, nil
	case ConnPerRequest:
		return m, nil
	}
	return "", fmt.Errorf("want %s or %s, got %q", ConnKeepAlive, ConnPerRequest, s)
}

// Default and limits of Options.
const (
	defaultTimeout = 5 * time.Second
	MaxConns       = 1024
	MaxStreams     = 256
)

// Validate reports the first invalid field, by name.
func (o *Options) Validate() error {
	if _, port, err := net.SplitHostPort(o.Target); err != nil || port == "" {
		return fmt.Errorf("target: want host:port, got %q", o.Target)
	}
	if o.Conns < 1 || o.Conns > MaxConns {
		return fmt.Errorf("conns: want 1..%d, got %d", MaxConns, o.Conns)
	}
	if o.Warmup < 0 {
		return fmt.Errorf("warmup: want >= 0, got %v", o.Warmup)
	}
	if o.Duration <= 0 {
		return fmt.Errorf("duration: want > 0, got %v", o.Duration)
	}
	if o.MaxRequests < 0 {
		return fmt.Errorf("max_requests: want >= 0 (0 = no cap), got %d", o.MaxRequests)
	}
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) {
		return fmt.Errorf("rate: want >= 0 req/s (0 = closed loop), got %v", o.Rate)
	}
	if _, err := ParseArrival(string(o.Arrival)); err != nil {
		return fmt.Errorf("arrival: %w", err)
	}
	if _, err := ParsePacer(string(o.Pacer)); err != nil {
		return fmt.Errorf("pacer: %w", err)
	}
	if o.Arrival == ArrivalPoisson && o.Rate == 0 {
		return fmt.Errorf("arrival: poisson needs an open-loop rate > 0")
	}
	if _, err := ParseConnMode(string(o.ConnMode)); err != nil {
		return fmt.Errorf("conn_mode: %w", err)
	}
	if o.SlotEvery < 0 {
		return fmt.Errorf("slot_every: want >= 0 (0 = no slots), got %v", o.SlotEvery)
	}
	if o.SlotEvery > 0 && o.Duration/o.SlotEvery >= maxSlots {
		return fmt.Errorf("slot_every: %v over %v is more than %d slots", o.SlotEvery, o.Duration, maxSlots)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("timeout: want >= 0 (0 = %v), got %v", defaultTimeout, o.Timeout)
	}
	p, err := downstream.Parse(string(o.Downstream))
	if err != nil {
		return fmt.Errorf("downstream: %w", err)
	}
	if o.Streams < 0 || o.Streams > MaxStreams {
		return fmt.Errorf("streams: want 1..%d (0 = 1), got %d", MaxStreams, o.Streams)
	}
	if !p.HTTP2() && o.Streams > 1 {
		return fmt.Errorf("streams: %s carries one request per connection at a time, got %d", p, o.Streams)
	}
	if p.HTTP2() && o.ConnMode == ConnPerRequest {
		return fmt.Errorf("conn_mode: %s keeps its connections (keepalive), got %s", p, o.ConnMode)
	}
	return nil
}

// Result is what a trial measured. Everything but WarmupErrors covers the
// measured window only: a response counts if it completed inside it.
type Result struct {
	Requests int64 // valid responses (status == ExpectStatus)
	// Errors counts failures by kind: connect, write, read, parse (a
	// response that is not HTTP/1.x, or an HTTP/2 protocol error), timeout,
	// closed (the server closed the connection: EOF, reset, "Connection:
	// close" on a response, which itself still counts, or an HTTP/2 GOAWAY),
	// reset (an HTTP/2 stream reset by the server) and status_NNN (a status
	// other than ExpectStatus). A failed connection is reopened; over
	// HTTP/2 each stream in flight on it counts once.
	Errors   map[string]int64
	Statuses map[int]int64 // every status received, valid or not
	Hist     *hdrhistogram.Histogram
	// PerSecond counts valid responses in each second of the window, the
	// first element starting at the window's start; the last may cover a
	// partial second. It sums to Requests.
	PerSecond []int64
	// Slots holds the valid responses' latencies by when they completed,
	// one histogram per Options.SlotEvery from the window's start (the last
	// may cover a partial slot; a slot without responses is empty); nil
	// when SlotEvery is 0. Together they hold Hist's values at 2 significant
	// figures.
	Slots     []*hdrhistogram.Histogram
	SlotEvery time.Duration
	Elapsed   time.Duration // length of the measured window actually run
	Warmup    time.Duration // length of the warmup actually run

	RateRequested float64 // Options.Rate; 0 for closed loop
	Arrival       Arrival // open loop: the arrival process; "" for closed loop
	Pacer         Pacer   // open loop: how sends were paced; "" for closed loop
	Seed          int64   // open loop, Poisson: the schedule's seed
	RateAchieved  float64 // responses of any status per second of the window
	// Late counts open-loop sends written more than Send.LagThreshold
	// (LagFraction of the mean inter-arrival time) after their intended
	// time, waits for a busy connection included.
	Late int64
	// Lagged counts open-loop sends more than Send.LagThreshold behind the
	// later of their intended time and their connection (HTTP/2: a stream
	// of it) becoming free: the client's own lag, not a wait for the
	// server.
	Lagged int64
	// Stalled counts the lagged sends whose own delay also passed the
	// stall threshold, the lag threshold but at least StallFloor: the
	// count FellBehind judges the client's schedule by.
	Stalled int64
	// Send holds an open-loop window's send delay (send.go); nil for
	// closed loop.
	Send *SendStats
	// ClientCPU is this process's CPU time (every thread, user and
	// system) over the measured window: the client's cost, whatever else
	// shares its CPUs.
	ClientCPU time.Duration
	// Due counts the arrivals the schedule made due in the measured window
	// (intended times in [Warmup, Warmup+Elapsed)), sent or not: the
	// requested count of the window. Rate × Elapsed for uniform; for
	// Poisson its realized count, itself random around that.
	Due int64

	WarmupErrors int64 // errors of any kind during warmup (not in Errors)
	Interrupted  bool  // ctx ended the trial early

	// Classes holds each class of a mix (RunMix), in the order given;
	// nil for Run.
	Classes []classResult
}

// ReqPerS returns valid responses per second of the measured window.
func (r *Result) ReqPerS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Percentile returns the latency, in microseconds, below which p percent
// (0..100) of the valid responses completed; 0 if there were none.
func (r *Result) Percentile(p float64) float64 {
	if r.Hist == nil {
		return 0
	}
	return float64(r.Hist.ValueAtQuantile(p))
}
