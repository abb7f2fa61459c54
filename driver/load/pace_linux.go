package load

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pacer waits until an open-loop send is due.
//
// time.Sleep is not precise enough here: when the Go runtime is idle it
// waits in epoll with a millisecond timeout, so short sleeps overshoot by
// up to a millisecond, and open-loop latency (measured from the intended
// send time) would include that overshoot. A timerfd wakes the netpoller
// when it expires, with hrtimer precision, without spinning.
type pacer struct {
	f    *os.File // the timerfd, registered with the netpoller
	fd   int
	spec unix.ItimerSpec
	buf  [8]byte
}

// minWait is the shortest wait worth a timer; shorter ones are not waited.
const minWait = 5 * time.Microsecond

func newPacer() *pacer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &pacer{fd: -1} // fall back to time.Sleep
	}
	return &pacer{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}
}

// wait blocks for d and reports false if interrupted.
func (p *pacer) wait(d time.Duration) bool {
	if d < minWait {
		return true
	}
	if p.f == nil {
		time.Sleep(d)
		return true
	}
	p.spec.Value = unix.NsecToTimespec(int64(d))
	if err := unix.TimerfdSettime(p.fd, 0, &p.spec, nil); err != nil {
		time.Sleep(d)
		return true
	}
	_, err := p.f.Read(p.buf[:])
	return err == nil
}

// nudge arms the timer to expire in d without waiting for it. Its expiry
// wakes the netpoller on time, so a connection deadline due at the same
// instant (HTTP/2's open loop waits on one, h2open.go) fires then instead
// of up to a millisecond later: the netpoller alone sleeps in whole
// milliseconds. Nobody reads the expiry; the next nudge or wait re-arms.
func (p *pacer) nudge(d time.Duration) {
	if p.f != nil && d >= minWait {
		p.spec.Value = unix.NsecToTimespec(int64(d))
		unix.TimerfdSettime(p.fd, 0, &p.spec, nil)
	}
}

// interrupt makes the current and every later wait return false.
func (p *pacer) interrupt() {
	if p.f != nil {
		p.f.SetReadDeadline(time.Unix(1, 0))
	}
}

func (p *pacer) close() {
	if p.f != nil {
		p.f.Close()
	}
}

// processCPU is this process's CPU time so far, every thread (live or
// exited), user and system: the kernel's process CPU-time clock.
func processCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
