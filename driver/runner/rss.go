package runner

import (
	"context"
	"time"

	"wafbench/driver/procstat"
)

// rssSampler reads a process's VmRSS, its CPU time, its threads' run-queue
// wait and the machine's steal time once a second from the window's start
// until stop, for the soak report's RSS slope and its CPU and wait drift
// (result.Soak).
type rssSampler struct {
	quit   chan struct{}
	done   chan struct{}
	series soakSeries
	err    error
}

// soakSeries are the sampler's readings, one of each a second.
type soakSeries struct {
	kib, cpu, wait, steal []int64 // KiB; µs, cumulative
}

func startRSS(pid int) *rssSampler {
	s := &rssSampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if s.err = s.series.read(pid); s.err != nil {
				return
			}
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// read appends one reading of each series.
func (ss *soakSeries) read(pid int) error {
	v, err := procstat.RSSKiB(pid)
	if err != nil {
		return err
	}
	c, err := procstat.CPUTime(pid)
	if err != nil {
		return err
	}
	w, err := procstat.RunQueueWait(pid)
	if err != nil {
		return err
	}
	st, err := procstat.StealTime()
	if err != nil {
		return err
	}
	ss.kib, ss.cpu = append(ss.kib, v), append(ss.cpu, c.Microseconds())
	ss.wait, ss.steal = append(ss.wait, w.Microseconds()), append(ss.steal, st.Microseconds())
	return nil
}

// stop ends the sampling and returns the series (the first reading at the
// window's start, then one a second) and the first read error.
func (s *rssSampler) stop() (soakSeries, error) {
	close(s.quit)
	<-s.done
	return s.series, s.err
}

// allocator reads p's allocator statistics for a soak window's edges; nil
// when the host has none or they cannot be read (a fact, not a reason to
// fail the window).
func allocator(ctx context.Context, p *proxy) map[string]int64 {
	if p.Memory == nil {
		return nil
	}
	m, err := p.Memory(ctx)
	if err != nil {
		return nil
	}
	return m
}
