package runner

import (
	"time"

	"wafbench/driver/procstat"
)

// rssSampler reads a process's VmRSS and its CPU time once a second from
// the window's start until stop, for the soak report's RSS slope and CPU
// drift (result.RSSSeriesKiB, result.CPUSeriesUs).
type rssSampler struct {
	quit chan struct{}
	done chan struct{}
	kib  []int64
	cpu  []int64 // µs, cumulative, read with each RSS reading
	err  error
}

func startRSS(pid int) *rssSampler {
	s := &rssSampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			v, err := procstat.RSSKiB(pid)
			if err != nil {
				s.err = err
				return
			}
			c, err := procstat.CPUTime(pid)
			if err != nil {
				s.err = err
				return
			}
			s.kib, s.cpu = append(s.kib, v), append(s.cpu, c.Microseconds())
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the series (the first reading at the
// window's start, then one a second) and the first read error.
func (s *rssSampler) stop() (rssKiB, cpuUs []int64, err error) {
	close(s.quit)
	<-s.done
	return s.kib, s.cpu, s.err
}
