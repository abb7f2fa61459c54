package load

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Arrival is the open-loop arrival process: when requests are due.
type Arrival string

// Arrival processes. Uniform sends at fixed intervals, start + i/Rate, dealt
// round-robin to the connections. Poisson draws exponential gaps: each of
// the Conns connections runs its own Poisson process at Rate/Conns, from its
// own generator seeded with (Options.Seed, connection index), and the
// superposition of independent Poisson processes is a Poisson process at
// Rate. The schedule of a seed is the same on every run.
const (
	arrivalUniform Arrival = "uniform"
	ArrivalPoisson Arrival = "poisson"
)

// ParseArrival returns the arrival process s names: "uniform" (or "") or
// "poisson".
func ParseArrival(s string) (Arrival, error) {
	switch a := Arrival(s); a {
	case "", arrivalUniform:
		return arrivalUniform, nil
	case ArrivalPoisson:
		return a, nil
	}
	return "", fmt.Errorf("want %s or %s, got %q", arrivalUniform, ArrivalPoisson, s)
}

// schedule yields one connection's intended send offsets, in order.
type schedule struct {
	poisson bool
	id      int64
	conns   int64
	every   float64 // ns between sends over all connections (1e9/Rate)
	seq     int64   // uniform: this connection's next slot
	at      float64 // poisson: offset of the last arrival, ns
	rng     *rand.Rand
}

func newSchedule(a Arrival, seed int64, id, conns int, every float64) *schedule {
	s := &schedule{poisson: a == ArrivalPoisson, id: int64(id), conns: int64(conns), every: every}
	if s.poisson {
		s.rng = rand.New(rand.NewPCG(uint64(seed), uint64(id)))
	}
	return s
}

// next returns the offset from the trial start at which the connection's
// next request is due.
func (s *schedule) next() time.Duration {
	if s.poisson {
		// Mean gap per connection: conns × every (rate Rate/Conns).
		s.at += s.rng.ExpFloat64() * s.every * float64(s.conns)
		return time.Duration(s.at)
	}
	// Slots are dealt round-robin: this connection owns slots id,
	// id+Conns, id+2·Conns, … of the whole schedule.
	d := time.Duration(float64(s.seq*s.conns+s.id) * s.every)
	s.seq++
	return d
}

// count returns how many of the connection's arrivals fall in [from, to),
// walking a fresh schedule (one not yet drawn from) from its start.
func (s *schedule) count(from, to time.Duration) int64 {
	var n int64
	for {
		d := s.next()
		if d >= to {
			return n
		}
		if d >= from {
			n++
		}
	}
}

// Pacer is how an open-loop connection waits for its next intended send.
type Pacer string

// Pacers. The timerfd pacer (the default) wakes each connection at its
// intended time with hrtimer precision (pace_linux.go). The Go-timer pacer
// sleeps with time.Sleep, as fortio and vegeta pace: the idle Go runtime
// waits in epoll with a millisecond timeout, so sends bunch at millisecond
// ticks. It is there to compare like with like: a generator that bunches
// sends keeps the machine awake between them, and on machines whose
// wake-ups from idle are slow (virtual CPUs) that lowers the latency
// measured from the actual send while it raises the latency from the
// intended time (docs/open-loop.md).
const (
	PacerTimerfd Pacer = "timerfd"
	PacerGo      Pacer = "go-timer"
)

// ParsePacer returns the pacer s names: "timerfd" (or "") or "go-timer".
func ParsePacer(s string) (Pacer, error) {
	switch p := Pacer(s); p {
	case "", PacerTimerfd:
		return PacerTimerfd, nil
	case PacerGo:
		return p, nil
	}
	return "", fmt.Errorf("want %s or %s, got %q", PacerTimerfd, PacerGo, s)
}

// sleepSteps sleeps for d with time.Sleep, in steps of at most 10 ms so
// that stopped (an interrupt) ends it soon, and reports whether it was not
// stopped: the Go-timer pacer's wait.
func sleepSteps(d time.Duration, stopped *atomic.Bool) bool {
	for d > 0 && !stopped.Load() {
		step := min(d, 10*time.Millisecond)
		time.Sleep(step)
		d -= step
	}
	return !stopped.Load()
}
