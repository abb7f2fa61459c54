package profile

import (
	"fmt"
	"time"
)

// Bounds of a slow-client workload (Workload.Slow): connections held at
// once and the longest any one exchange may last.
const (
	maxSlowConns   = 64
	maxSlowWait    = 2 * time.Minute
	minSlowPausing = time.Millisecond
)

// SlowPlan sends a workload's request slowly (driver/slowclient) on each of
// the case's connections at once, instead of as load: the head and the
// body in pieces with a pause between writes, optionally stopping after
// StopAfter body bytes and holding the connection open. Every exchange is
// bounded by MaxWait.
type SlowPlan struct {
	HeadChunk int      `json:"head_chunk,omitempty"` // bytes of the head per write; 0 = all at once
	BodyChunk int      `json:"body_chunk,omitempty"` // bytes of the body per write; 0 = all at once
	Interval  duration `json:"interval,omitempty"`   // pause between writes
	// StopAfter, when set, sends only this many body bytes (the declared
	// Content-Length stays) and holds the connection.
	StopAfter *int     `json:"stop_after,omitempty"`
	MaxWait   duration `json:"max_wait"` // bound of each exchange, ≤ 2 min
}

// Pause is the plan's pause between writes.
func (p *SlowPlan) Pause() time.Duration { return time.Duration(p.Interval) }

// Wait is the plan's bound on each exchange.
func (p *SlowPlan) Wait() time.Duration { return time.Duration(p.MaxWait) }

// Stop is the body bytes sent before holding; -1 sends the whole body.
func (p *SlowPlan) Stop() int {
	if p.StopAfter == nil {
		return -1
	}
	return *p.StopAfter
}

func (w *Workload) validateSlow(where string) error {
	p := w.Slow
	if len(w.Sweep) > 0 || w.CapacityFrom != "" || w.Capacity != 0 || w.AttackStream != "" || w.MeasureVerdict || w.ConnMode != "" {
		return fmt.Errorf("%s: slow excludes sweep, capacity, attack_stream, measure_verdict and conn_mode", where)
	}
	if p.HeadChunk < 0 || p.BodyChunk < 0 {
		return fmt.Errorf("%s: slow: head_chunk and body_chunk: want ≥ 0 bytes (0 = all at once)", where)
	}
	if (p.HeadChunk > 0 || p.BodyChunk > 0) && p.Pause() < minSlowPausing {
		return fmt.Errorf("%s: slow: interval: want ≥ %v between pieces, got %v", where, minSlowPausing, p.Pause())
	}
	if p.StopAfter != nil && *p.StopAfter < 0 {
		return fmt.Errorf("%s: slow: stop_after: want ≥ 0 body bytes, got %d", where, *p.StopAfter)
	}
	if p.Wait() <= 0 || p.Wait() > maxSlowWait {
		return fmt.Errorf("%s: slow: max_wait: want 0 < max_wait ≤ %v, got %v", where, maxSlowWait, p.Wait())
	}
	for _, c := range w.Conns {
		if c > maxSlowConns {
			return fmt.Errorf("%s: conns: a slow workload holds at most %d connections, got %d", where, maxSlowConns, c)
		}
	}
	return nil
}
