package load

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// filePacer is the pacer before it armed its timer from RawConn.Read's
// callback: unix.TimerfdSettime, then os.File.Read of the expiry (a read
// that finds nothing, the netpoller, the read after the wake). Kept to
// measure the change against (BenchmarkPacer).
type filePacer struct {
	f    *os.File
	fd   int
	spec unix.ItimerSpec
	buf  [8]byte
}

func newFilePacer(b *testing.B) *filePacer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	return &filePacer{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}
}

func (p *filePacer) wait(d time.Duration) bool {
	p.spec.Value = unix.NsecToTimespec(int64(d))
	if err := unix.TimerfdSettime(p.fd, 0, &p.spec, nil); err != nil {
		return false
	}
	_, err := p.f.Read(p.buf[:])
	return err == nil
}

// TestPacerWaits: every wait lasts at least its duration (never early,
// whatever the machine's load), and an interrupt ends the current and
// every later wait.
func TestPacerWaits(t *testing.T) {
	p := newPacer(PacerTimerfd)
	defer p.close()
	if p.f == nil {
		t.Fatal("no timerfd: the pacer fell back to time.Sleep")
	}
	for _, d := range []time.Duration{minWait, 50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond} {
		for range 20 {
			t0 := time.Now()
			if !p.wait(d) {
				t.Fatalf("wait(%v) interrupted", d)
			}
			if got := time.Since(t0); got < d {
				t.Errorf("wait(%v) returned after %v", d, got)
			}
		}
	}
	// An expiry nobody waited for (HTTP/2's nudge) does not end a later
	// wait early.
	p.nudge(minWait)
	time.Sleep(time.Millisecond)
	t0 := time.Now()
	if !p.wait(time.Millisecond) || time.Since(t0) < time.Millisecond {
		t.Errorf("wait after a nudge's expiry returned after %v, want ≥ 1ms", time.Since(t0))
	}
	done := make(chan bool)
	go func() { done <- p.wait(time.Hour) }()
	for p.armed == false { // the wait armed its timer: it is parked or about to be
		runtime.Gosched()
	}
	p.interrupt()
	if <-done {
		t.Error("an interrupted wait reported true")
	}
	if p.wait(time.Second) {
		t.Error("a wait after interrupt reported true")
	}
}

// TestGoTimerPacer: the Go-timer pacer has no timerfd, never ends a wait
// early, and an interrupt ends a long wait within its 10 ms step.
func TestGoTimerPacer(t *testing.T) {
	p := newPacer(PacerGo)
	defer p.close()
	if p.f != nil {
		t.Fatal("the Go-timer pacer made a timerfd")
	}
	for _, d := range []time.Duration{50 * time.Microsecond, 2 * time.Millisecond} {
		t0 := time.Now()
		if !p.wait(d) || time.Since(t0) < d {
			t.Errorf("wait(%v) returned after %v", d, time.Since(t0))
		}
	}
	done := make(chan bool)
	go func() { done <- p.wait(time.Hour) }()
	time.Sleep(5 * time.Millisecond)
	p.interrupt()
	select {
	case ok := <-done:
		if ok {
			t.Error("an interrupted wait reported true")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an interrupted wait of an hour still waits after 10 s")
	}
}

// BenchmarkPacer measures what one open-loop wait costs the client: CPU
// time of this process per wait (cpu-µs/wait) and how late it ended
// (late-µs/wait, mean), for the timerfd pacer, the one before it
// (file: three system calls per wait) and time.Sleep (Go's own timers, as
// fortio and vegeta pace), at a few waits typical of open-loop gaps. The
// machine's other load is in both figures: compare the rows of one run.
func BenchmarkPacer(b *testing.B) {
	for _, d := range []time.Duration{50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond} {
		for _, impl := range []string{"timerfd", "file", "sleep"} {
			b.Run(fmt.Sprintf("%s/%v", impl, d), func(b *testing.B) {
				var wait func(time.Duration) bool
				switch impl {
				case "timerfd":
					p := newPacer(PacerTimerfd)
					defer p.close()
					wait = p.wait
				case "file":
					p := newFilePacer(b)
					defer p.f.Close()
					wait = p.wait
				case "sleep":
					wait = func(d time.Duration) bool { time.Sleep(d); return true }
				}
				b.ReportAllocs()
				var late time.Duration
				cpu0 := processCPU()
				b.ResetTimer()
				for range b.N {
					t0 := time.Now()
					wait(d)
					late += time.Since(t0) - d
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/wait")
				b.ReportMetric(float64(late)/1e3/float64(b.N), "late-µs/wait")
			})
		}
	}
}
