package load

import (
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pacer waits until an open-loop send is due.
//
// time.Sleep is not precise enough here: when the Go runtime is idle it
// waits in epoll with a millisecond timeout, so short sleeps overshoot by
// up to a millisecond, and open-loop latency (measured from the intended
// send time) would include that overshoot. A timerfd wakes the netpoller
// when it expires, with hrtimer precision, without spinning.
//
// A wait costs one system call. The timer is armed from inside
// syscall.RawConn.Read's callback, after Read has reset the descriptor's
// read readiness, and the goroutine then parks in the netpoller until the
// expiry's edge (the netpoller is edge-triggered): no read of the expiry
// count is needed, since timerfd_settime resets it and the next expiry
// signals again. Both the arming and (on the rare early wake) the clock
// check avoid syscall.Syscall, whose entersyscall wakes the runtime's
// sysmon thread when the process was idle (the reason for sockIO too). An
// earlier pacer armed with unix.TimerfdSettime and read the expiry through
// os.File.Read, three system calls per wait (settime, a read that found
// nothing, the read after the wake), two of them through entersyscall.
//
// The Go-timer pacer (PacerGo, or when no timerfd can be made) has no
// timerfd and sleeps with time.Sleep.
type pacer struct {
	f       *os.File    // the timerfd, registered with the netpoller; nil: time.Sleep
	stopped atomic.Bool // time.Sleep pacer: interrupted
	rc      syscall.RawConn
	spec    unix.ItimerSpec
	due     time.Time // when the current wait ends
	armed   bool      // the current wait's timer is set
	err     syscall.Errno
	waitFn  func(fd uintptr) bool // method values made once, so waits do not allocate
	nudgeFn func(fd uintptr)
}

// minWait is the shortest wait worth a timer; shorter ones are not waited.
const minWait = 5 * time.Microsecond

func newPacer(kind Pacer) *pacer {
	if kind == PacerGo {
		return &pacer{}
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &pacer{} // fall back to time.Sleep
	}
	p := &pacer{f: os.NewFile(uintptr(fd), "timerfd")}
	if p.rc, err = p.f.SyscallConn(); err != nil {
		p.f.Close()
		return &pacer{}
	}
	p.waitFn, p.nudgeFn = p.doWait, p.arm
	return p
}

// wait blocks for d and reports false if interrupted.
func (p *pacer) wait(d time.Duration) bool {
	if d < minWait {
		return true
	}
	if p.f == nil {
		return sleepSteps(d, &p.stopped)
	}
	p.due, p.armed, p.err = time.Now().Add(d), false, 0
	p.spec.Value = unix.NsecToTimespec(int64(d))
	if err := p.rc.Read(p.waitFn); err != nil {
		return false // interrupted: the read deadline is in the past
	}
	if p.err != 0 {
		time.Sleep(time.Until(p.due))
	}
	return true
}

// doWait is the RawConn.Read callback of wait: the first call arms the
// timer and parks; a later call ends the wait once it is due. A wake before
// then (an expiry of an earlier nudge, signalled while this wait was being
// set up) arms the timer again for the rest.
func (p *pacer) doWait(fd uintptr) bool {
	if p.armed {
		left := time.Until(p.due)
		if left < minWait {
			return true
		}
		p.spec.Value = unix.NsecToTimespec(int64(left))
	}
	p.armed = true
	p.arm(fd)
	return p.err != 0
}

// arm sets the timer to p.spec, keeping the error in p.err.
func (p *pacer) arm(fd uintptr) {
	_, _, p.err = syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&p.spec)), 0, 0, 0)
}

// nudge arms the timer to expire in d without waiting for it. Its expiry
// wakes the netpoller on time, so a connection deadline due at the same
// instant (HTTP/2's open loop waits on one, h2open.go) fires then instead
// of up to a millisecond later: the netpoller alone sleeps in whole
// milliseconds. Nobody reads the expiry; the next nudge or wait re-arms.
func (p *pacer) nudge(d time.Duration) {
	if p.f != nil && d >= minWait {
		p.spec.Value = unix.NsecToTimespec(int64(d))
		p.rc.Control(p.nudgeFn)
	}
}

// interrupt makes the current and every later wait return false.
func (p *pacer) interrupt() {
	p.stopped.Store(true)
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
