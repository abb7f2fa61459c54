package load

import (
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"wafbench/driver/downstream"
	"wafbench/driver/result"
)

// summary is a trial's result as `wafbench load --json` prints it: one
// flat JSON object, latencies in microseconds.
type summary struct {
	Target            string           `json:"target"`
	Conns             int              `json:"conns"`
	Load              string           `json:"load"`                   // "closed" or "open"
	Downstream        string           `json:"downstream,omitempty"`   // h1-tls, h2-tls, h2c; "" = plain HTTP/1.1 (set by the caller)
	Streams           int              `json:"streams,omitempty"`      // HTTP/2 streams per connection (set by the caller)
	Arrival           string           `json:"arrival,omitempty"`      // open loop: "uniform" or "poisson"
	Seed              int64            `json:"arrival_seed,omitempty"` // open loop, poisson: the schedule's seed
	Pacer             string           `json:"pacer,omitempty"`        // open loop: "timerfd" or "go-timer"
	DurationS         float64          `json:"duration_s"`
	Requests          int64            `json:"requests"`
	ReqPerS           float64          `json:"req_per_s"`
	RateRequestedPerS float64          `json:"rate_requested_per_s"`
	RateAchievedPerS  float64          `json:"rate_achieved_per_s"`
	Late              int64            `json:"late"`           // open loop: sends later than the lag threshold (Result.Late)
	Lagged            int64            `json:"client_lagged"`  // open loop: sends the client itself held back past the lag threshold (Result.Lagged)
	Stalled           int64            `json:"client_stalled"` // open loop: of them, past the stall threshold, at least 1 ms (Result.Stalled)
	Due               int64            `json:"due"`            // open loop: arrivals due in the window (Result.Due)
	BehindRate        bool             `json:"behind_rate"`    // open loop: fell behind the requested rate (result.FellBehind)
	WarmupErrors      int64            `json:"warmup_errors"`
	Errors            map[string]int64 `json:"errors"`
	Statuses          map[int]int64    `json:"statuses"`
	P50Us             float64          `json:"p50_us"`
	P90Us             float64          `json:"p90_us"`
	P99Us             float64          `json:"p99_us"`
	P999Us            float64          `json:"p999_us"`
	MaxUs             float64          `json:"max_us"`
	PerSecond         []int64          `json:"per_second"`
	// ClientCPUUsPerReq is this process's CPU (µs, every thread) over the
	// window per response of any status; 0 when not read (outside Linux).
	ClientCPUUsPerReq float64 `json:"client_cpu_us_per_request"`
	// Send is the open loop's send delay (Result.Send); nil for closed loop.
	Send *sendSummary `json:"send,omitempty"`
}

// sendSummary is Result.Send in µs: the send delay (intended time to
// actual write), its part the client itself added, and the latency from the
// actual write, each over the window's valid responses.
type sendSummary struct {
	LagThresholdUs float64 `json:"lag_threshold_us"`
	DelayP50Us     float64 `json:"delay_p50_us"`
	DelayP90Us     float64 `json:"delay_p90_us"`
	DelayP99Us     float64 `json:"delay_p99_us"`
	OwnP50Us       float64 `json:"own_p50_us"`
	OwnP90Us       float64 `json:"own_p90_us"`
	OwnP99Us       float64 `json:"own_p99_us"`
	FromSendP50Us  float64 `json:"from_send_p50_us"`
	FromSendP90Us  float64 `json:"from_send_p90_us"`
	FromSendP99Us  float64 `json:"from_send_p99_us"`
	FromSendP999Us float64 `json:"from_send_p999_us"`
}

// summarize is s in µs; nil for nil.
func (s *SendStats) summarize() *sendSummary {
	if s == nil {
		return nil
	}
	q := func(h *hdrhistogram.Histogram, p float64) float64 {
		if h == nil || h.TotalCount() == 0 {
			return 0
		}
		return float64(h.ValueAtQuantile(p))
	}
	return &sendSummary{LagThresholdUs: float64(s.LagThreshold) / 1e3,
		DelayP50Us: q(s.Delay, 50), DelayP90Us: q(s.Delay, 90), DelayP99Us: q(s.Delay, 99),
		OwnP50Us: q(s.Own, 50), OwnP90Us: q(s.Own, 90), OwnP99Us: q(s.Own, 99),
		FromSendP50Us: q(s.FromSend, 50), FromSendP90Us: q(s.FromSend, 90), FromSendP99Us: q(s.FromSend, 99), FromSendP999Us: q(s.FromSend, 99.9)}
}

// Summarize flattens r, the result of driving target over conns
// connections, into a Summary.
func (r *Result) Summarize(target string, conns int) summary {
	s := summary{Target: target, Conns: conns, Load: "closed", DurationS: r.Elapsed.Seconds(), Requests: r.Requests,
		ReqPerS: r.ReqPerS(), RateRequestedPerS: r.RateRequested, RateAchievedPerS: r.RateAchieved, Late: r.Late,
		Lagged: r.Lagged, Stalled: r.Stalled, Due: r.Due,
		WarmupErrors: r.WarmupErrors, Errors: r.Errors, Statuses: r.Statuses, PerSecond: r.PerSecond}
	if r.RateRequested > 0 {
		s.Load = "open"
		s.Arrival, s.Seed, s.Pacer = string(r.Arrival), r.Seed, string(r.Pacer)
		s.BehindRate = r.FellBehind()
		s.Send = r.Send.summarize()
	}
	if n := r.responses(); n > 0 {
		s.ClientCPUUsPerReq = float64(r.ClientCPU) / 1e3 / float64(n)
	}
	if h := r.Hist; h != nil && h.TotalCount() > 0 {
		s.P50Us, s.P90Us, s.P99Us = float64(h.ValueAtQuantile(50)), float64(h.ValueAtQuantile(90)), float64(h.ValueAtQuantile(99))
		s.P999Us, s.MaxUs = float64(h.ValueAtQuantile(99.9)), float64(h.Max())
	}
	return s
}

// responses counts the responses of any status in the window.
func (r *Result) responses() int64 {
	var n int64
	for _, c := range r.Statuses {
		n += c
	}
	return n
}

// FellBehind reports whether an open-loop window did not hold its
// requested rate (result.FellBehind: its responses against the arrivals
// due in it, and the client's own lag); closed loop never falls behind.
func (r *Result) FellBehind() bool {
	return result.FellBehind(r.Due, r.responses(), r.Stalled)
}

// HeldRate reports whether an open-loop window's responses reached
// result.BehindRatio of the arrivals due in it, less one (the first test of
// result.FellBehind, without the client-lag one); closed loop always holds.
func (r *Result) HeldRate() bool {
	return r.Due <= 0 || float64(r.responses()) >= result.BehindRatio*float64(r.Due)-1
}

// WriteText writes s as 'wafbench load' prints it: target, throughput,
// latency percentiles, errors and statuses, the protocol when it is not
// plain HTTP/1.1 (s.Downstream), and for an open loop (rate > 0) the rate
// requested and achieved.
func (s summary) WriteText(w io.Writer, cm ConnMode, rate float64) {
	fmt.Fprintf(w, "target     %s (%s loop, %d %s conns)\nrequests   %d in %.2fs = %.0f req/s\nlatency    p50 %.0f µs  p90 %.0f µs  p99 %.0f µs  p99.9 %.0f µs  max %.0f µs\nerrors     %v\nstatuses   %v\n",
		s.Target, s.Load, s.Conns, cm, s.Requests, s.DurationS, s.ReqPerS, s.P50Us, s.P90Us, s.P99Us, s.P999Us, s.MaxUs, s.Errors, s.Statuses)
	if s.ClientCPUUsPerReq > 0 {
		fmt.Fprintf(w, "client     %.1f µs CPU per response (this process, every thread, over the window)\n", s.ClientCPUUsPerReq)
	}
	if s.Downstream != "" {
		ds := downstream.Protocol(s.Downstream)
		fmt.Fprintf(w, "protocol   %s (%s), %d streams per connection\n", ds, ds.Label(), s.Streams)
	}
	if rate > 0 {
		lag := 0.0
		if s.Send != nil {
			lag = s.Send.LagThresholdUs
		}
		fmt.Fprintf(w, "rate       requested %.0f req/s (%s arrivals, %s pacer, %d due in the window), achieved %.0f req/s, %d sent late (> %.0f µs, half the inter-arrival time), %d of them held back by the client itself, %d of those past %.0f µs (the stall threshold: half the inter-arrival time, at least 1 ms)\n", s.RateRequestedPerS, s.Arrival, s.Pacer, s.Due, s.RateAchievedPerS, s.Late, lag, s.Lagged, s.Stalled, max(lag, float64(StallFloor/time.Microsecond)))
		if d := s.Send; d != nil {
			fmt.Fprintf(w, "send delay p50 %.0f µs  p90 %.0f µs  p99 %.0f µs (intended → actual write; the client's own part p50 %.0f  p90 %.0f  p99 %.0f µs)\n", d.DelayP50Us, d.DelayP90Us, d.DelayP99Us, d.OwnP50Us, d.OwnP90Us, d.OwnP99Us)
			fmt.Fprintf(w, "from send  p50 %.0f µs  p90 %.0f µs  p99 %.0f µs  p99.9 %.0f µs (latency from the actual write; the latency line is from the intended time)\n", d.FromSendP50Us, d.FromSendP90Us, d.FromSendP99Us, d.FromSendP999Us)
		}
		if s.BehindRate {
			var n int64
			for _, c := range s.Statuses {
				n += c
			}
			if float64(n) >= result.BehindRatio*float64(s.Due)-1 {
				fmt.Fprintf(w, "           fell behind the requested rate: the client held back over %.0f%% of its sends: give it a CPU of its own (--cpus) or lower --rate\n", 100*result.BehindLateShare)
			} else {
				fmt.Fprintf(w, "           fell behind the requested rate: add --conns or lower --rate\n")
			}
		}
	}
}
