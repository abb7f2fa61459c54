//go:build !linux

package load

import (
	"sync/atomic"
	"time"
)

// pacer waits until an open-loop send is due. Outside Linux it sleeps,
// which may overshoot short waits by up to a millisecond.
type pacer struct{ stopped atomic.Bool }

func newPacer(Pacer) *pacer { return new(pacer) }

// wait blocks for d and reports false if interrupted.
func (p *pacer) wait(d time.Duration) bool { return sleepSteps(d, &p.stopped) }

// nudge does nothing outside Linux (pace_linux.go).
func (p *pacer) nudge(time.Duration) {}

// interrupt makes the current and every later wait return false.
func (p *pacer) interrupt() { p.stopped.Store(true) }

func (p *pacer) close() {}

// processCPU is not read outside Linux: 0 (Result.ClientCPU stays 0).
func processCPU() time.Duration { return 0 }
