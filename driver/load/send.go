package load

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Send delay: what the client added to open-loop latency.
//
// Open-loop latency runs from a request's intended send time (coordinated
// omission corrected), so it holds the time between that intended time and
// the request's actual write, the send delay, as well as the server's
// answer. Part of the send delay is the server's: an arrival whose
// connection is still busy with the previous response waits for it (or,
// over HTTP/2, for a stream). The rest is the client's own: the later of the
// intended time and the connection falling free, to the write — the pacer
// oversleeping, the client's goroutine waiting for a CPU. Each open-loop
// window keeps, over its valid responses, the send delay, its own part, and
// the latency from the actual write (what a generator without the
// correction, fortio or wrk2's uncorrected figures, reports), in histograms
// of the same range as the latency's.

// LagFraction is the lag threshold as a fraction of the mean inter-arrival
// time (1/Rate): an open-loop send is late (Result.Late) when it is written
// more than LagFraction/Rate after its intended time, and lagged
// (Result.Lagged) when the client itself held it back that long. Half an
// inter-arrival time is the scale at which sends bunch: a send that late is
// nearer the next arrival's slot than its own.
const LagFraction = 0.5

// StallFloor is the least own delay that counts a send as stalled
// (Result.Stalled), the client failing its schedule, whatever the rate: at
// tens of thousands of requests per second half an inter-arrival time is
// a few tens of µs, below what waking a client thread costs on a virtual
// machine, and a client that holds its rate with sends that late has not
// fallen behind it.
const StallFloor = time.Millisecond

// lagThreshold is the lateness that counts a send as late or lagged at
// every ns between intended sends (LagFraction of it); at least one µs, the
// histograms' resolution.
func lagThreshold(every float64) time.Duration {
	return max(time.Duration(LagFraction*every), time.Microsecond)
}

// SendStats are an open-loop window's send-delay histograms, over the
// valid responses that Result.Hist holds, in µs.
type SendStats struct {
	// Delay is each request's send delay: intended time to actual write.
	Delay *hdrhistogram.Histogram
	// Own is the client's own part of it: from the later of the intended
	// time and the connection (HTTP/2: a stream of it) falling free, to
	// the write.
	Own *hdrhistogram.Histogram
	// FromSend is the latency from the actual write to the end of the
	// response: Result.Hist without the send delay.
	FromSend *hdrhistogram.Histogram
	// LagThreshold is how late a send counted in Result.Late and
	// Result.Lagged was: LagFraction of the mean inter-arrival time.
	LagThreshold time.Duration
}

// sendHists are one worker's SendStats histograms.
type sendHists struct {
	delay, own, fromSend *hdrhistogram.Histogram
}

func newSendHists() *sendHists {
	return &sendHists{delay: NewHistogram(), own: NewHistogram(), fromSend: NewHistogram()}
}

// stamp is when a request's latency counts from and, in the open loop, when
// it was written and how much of the wait before that was the client's own.
type stamp struct {
	start time.Duration // latency counts from here: the write (closed loop) or the intended time (open loop)
	sent  time.Duration // open loop: the actual write
	own   time.Duration // open loop: the client's own part of sent − start
}

// record adds one valid response that ended at offset end to the
// histograms.
func (s *sendHists) record(st stamp, end time.Duration) {
	s.delay.RecordValue(clampUs(st.sent - st.start))
	s.own.RecordValue(clampUs(st.own))
	s.fromSend.RecordValue(clampUs(end - st.sent))
}

// clampUs is d in whole µs within the histograms' range.
func clampUs(d time.Duration) int64 {
	return min(max(int64(d/time.Microsecond), histMinUs), histMaxUs)
}

// collectSend merges the workers' send histograms; nil in the closed loop.
func collectSend(t *trial, workers []*worker) *SendStats {
	if t.every <= 0 {
		return nil
	}
	s := &SendStats{Delay: NewHistogram(), Own: NewHistogram(), FromSend: NewHistogram(), LagThreshold: t.lag}
	for _, w := range workers {
		if w.send != nil {
			s.Delay.Merge(w.send.delay)
			s.Own.Merge(w.send.own)
			s.FromSend.Merge(w.send.fromSend)
		}
	}
	return s
}
