package procstat

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Every check below holds however busy the machine is: the work is fixed in
// CPU time (the burning thread's own CPU clock), never in wall time, and the
// counters are compared with each other, not with a clock on the wall.

// burnCPU keeps the calling OS thread on the CPU until its own CPU-time
// clock has advanced by d. The caller must hold runtime.LockOSThread, so
// that the whole of d is charged to one known thread.
func burnCPU(d time.Duration) {
	start := threadCPU()
	x := 0
	for threadCPU()-start < d {
		for i := range 10000 {
			x += i
		}
	}
	_ = x
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("CLOCK_THREAD_CPUTIME_ID: " + err.Error())
	}
	return time.Duration(ts.Nano())
}

// quiet stops the garbage collector for the test, so that no runtime thread
// adds CPU time between the reads of one Sample.
func quiet(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

func tickNs() int64 {
	tck, err := ClockTicks()
	if err != nil {
		panic(err)
	}
	return int64(time.Second) / tck
}

// Resolutions of the counters. utime+stime are sum_exec_runtime split in
// two and each truncated to a tick; a running thread's schedstat is brought
// up to date at the next scheduler tick (HZ >= 100, so at most 10 ms) or
// context switch. readSlack is CPU the process may spend between the reads
// of one Sample (a few procfs reads, well under a millisecond).
const (
	schedLagNs = 10e6
	readSlack  = 5e6
)

// TestSampleSelf burns a fixed 50 ms of CPU on one thread between samples
// of this process and checks that the three counters saw at least that and
// agree with each other within their resolution.
func TestSampleSelf(t *testing.T) {
	quiet(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const work = 50 * time.Millisecond

	a, err := Sample(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	burnCPU(work)
	b, err := Sample(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	d := Delta(a, b)
	t.Logf("wall %v schedstat %.1fms ticks %.1fms clock %.1fms threads %d rss %d KiB hwm %d KiB",
		d.Wall, ms(d.SchedstatNs), ms(d.TicksNs), ms(d.ClockNs), b.Threads, b.RSSKiB, b.HWMKiB)

	// The process clock includes the burning thread: exact.
	if d.ClockNs < int64(work) {
		t.Errorf("clock delta %.1fms, want >= %v (burned on one thread)", ms(d.ClockNs), work)
	}
	// schedstat of the burning thread may lag by up to a scheduler tick.
	if d.SchedstatNs < int64(work)-schedLagNs {
		t.Errorf("schedstat delta %.1fms, want >= %v - %.0fms", ms(d.SchedstatNs), work, ms(schedLagNs))
	}
	// The three agree within their resolutions (no thread exited here).
	if diff := abs(d.SchedstatNs - d.ClockNs); diff > schedLagNs+readSlack {
		t.Errorf("schedstat %.1fms and clock %.1fms differ by %.1fms, want <= %.0fms",
			ms(d.SchedstatNs), ms(d.ClockNs), ms(diff), ms(schedLagNs+readSlack))
	}
	if diff := abs(d.TicksNs - d.ClockNs); diff > 2*tickNs()+readSlack {
		t.Errorf("ticks %.1fms and clock %.1fms differ by %.1fms, want <= 2 ticks (%.0fms) + %.0fms",
			ms(d.TicksNs), ms(d.ClockNs), ms(diff), ms(2*tickNs()), ms(readSlack))
	}
	if d.Wall <= 0 {
		t.Errorf("wall %v, want > 0", d.Wall)
	}
	if b.Threads < 2 || b.RSSKiB <= 0 || b.HWMKiB < b.RSSKiB {
		t.Errorf("snapshot %+v: want threads >= 2, RSS > 0, HWM >= RSS", b)
	}
}

// TestSampleMonotonic takes snapshots between fixed slices of work: no
// counter and no timestamp may go back, and each cumulative counter agrees
// with the others at every snapshot as it does over the whole series.
func TestSampleMonotonic(t *testing.T) {
	quiet(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var snaps []Snapshot
	for i := range 6 {
		if i > 0 {
			burnCPU(5 * time.Millisecond)
		}
		s, err := Sample(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	for i := 1; i < len(snaps); i++ {
		a, b := snaps[i-1], snaps[i]
		if !b.At.After(a.At) {
			t.Errorf("snapshot %d: At %v not after %v", i, b.At, a.At)
		}
		// The burn is 5 ms; the clock must see all of it.
		if b.ClockNs-a.ClockNs < int64(5*time.Millisecond) {
			t.Errorf("snapshot %d: clock +%.2fms, want >= 5ms", i, ms(b.ClockNs-a.ClockNs))
		}
		if b.TicksNs < a.TicksNs || b.SchedstatNs < a.SchedstatNs || b.HWMKiB < a.HWMKiB {
			t.Errorf("snapshot %d went back: %+v after %+v", i, b, a)
		}
	}
	total := Delta(snaps[0], snaps[len(snaps)-1])
	if total.ClockNs < int64(25*time.Millisecond) {
		t.Errorf("clock over the series +%.1fms, want >= 25ms", ms(total.ClockNs))
	}
	if diff := abs(total.TicksNs - total.ClockNs); diff > 2*tickNs()+readSlack {
		t.Errorf("over the series ticks +%.1fms and clock +%.1fms differ by more than 2 ticks", ms(total.TicksNs), ms(total.ClockNs))
	}
}

func TestSampleGone(t *testing.T) {
	if _, err := Sample(1 << 30); err == nil {
		t.Fatal("Sample of a PID that cannot exist succeeded")
	}
}

func TestDeltaAndUtilization(t *testing.T) {
	t0 := time.Unix(100, 0)
	tests := []struct {
		name     string
		a, b     Snapshot
		want     interval
		wantUtil float64
	}{
		{"clock preferred",
			Snapshot{At: t0, SchedstatNs: 10, TicksNs: 0, ClockNs: 1000},
			Snapshot{At: t0.Add(time.Second), SchedstatNs: 400e6 + 10, TicksNs: 4e8, ClockNs: 500e6 + 1000},
			interval{Wall: time.Second, SchedstatNs: 400e6, TicksNs: 4e8, ClockNs: 500e6}, 0.5},
		{"no clock: schedstat",
			Snapshot{At: t0, SchedstatNs: 0},
			Snapshot{At: t0.Add(2 * time.Second), SchedstatNs: 1e9, ClockNs: 7},
			interval{Wall: 2 * time.Second, SchedstatNs: 1e9}, 0.5},
		{"no wall",
			Snapshot{At: t0, ClockNs: 1},
			Snapshot{At: t0, ClockNs: 5},
			interval{ClockNs: 4}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Delta(tt.a, tt.b)
			if got != tt.want {
				t.Errorf("Delta: got %+v, want %+v", got, tt.want)
			}
			if u := got.utilization(); u != tt.wantUtil {
				t.Errorf("Utilization: got %v, want %v", u, tt.wantUtil)
			}
		})
	}
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestClockTicks: CLK_TCK is measured, and equals what getconf (glibc's
// sysconf) reports on this machine.
func TestClockTicks(t *testing.T) {
	got, err := ClockTicks()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		t.Fatalf("getconf CLK_TCK: %v (getconf is in Debian's libc-bin)", err)
	}
	want, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("CLK_TCK: got %d, want %d as getconf says", got, want)
	}
}

// TestProcessSchedstatIsMainThreadOnly documents why Sample sums the task
// files: /proc/PID/schedstat reports the group leader alone, and why it
// prefers the process clock: that one keeps the time of exited threads. A
// fixed 60 ms of CPU is burned on a thread that is not the leader, which
// then exits; the process file must not see the burn, the clock must.
func TestProcessSchedstatIsMainThreadOnly(t *testing.T) {
	quiet(t)
	const work = 60 * time.Millisecond
	readRun := func(path string) int64 {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	pid := os.Getpid()
	procFile := "/proc/" + strconv.Itoa(pid) + "/schedstat"

	before := readRun(procFile)
	a, err := Sample(pid)
	if err != nil {
		t.Fatal(err)
	}
	// The burning goroutine locks itself to a thread. Should that be the
	// leader, it keeps the leader (blocked) and hands the burn to a second
	// goroutine, which then cannot be on the leader.
	burned := make(chan int) // the burning thread's TID
	release := make(chan struct{})
	var burner func()
	burner = func() {
		runtime.LockOSThread() // never unlocked on the burning thread: it exits with the goroutine
		tid := unix.Gettid()
		if tid == pid {
			go burner()
			<-release
			runtime.UnlockOSThread()
			return
		}
		burnCPU(work)
		burned <- tid
	}
	go burner()
	tid := <-burned
	close(release)
	// Wait for the explicit event: the thread's task directory is gone.
	task := filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(tid))
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d still present a minute after its goroutine returned", tid)
		}
		time.Sleep(time.Millisecond)
	}
	after := readRun(procFile)
	b, err := Sample(pid)
	if err != nil {
		t.Fatal(err)
	}
	d := Delta(a, b)
	t.Logf("process schedstat +%.1fms, task sum +%.1fms, clock +%.1fms, ticks +%.1fms",
		ms(after-before), ms(d.SchedstatNs), ms(d.ClockNs), ms(d.TicksNs))
	if after-before >= int64(work) {
		t.Errorf("/proc/PID/schedstat grew %.1fms (>= the %v burned on another thread): it now seems to aggregate threads; revisit Sample",
			ms(after-before), work)
	}
	if d.ClockNs < int64(work) {
		t.Errorf("process clock grew %.1fms, want >= %v including the exited thread", ms(d.ClockNs), work)
	}
	if d.TicksNs < int64(work)-2*tickNs() {
		t.Errorf("ticks grew %.1fms, want >= %v - 2 ticks including the exited thread", ms(d.TicksNs), work)
	}
	// The exited thread took its schedstat with it: the task sum missed it.
	if d.SchedstatNs > d.ClockNs-int64(work)+schedLagNs+readSlack {
		t.Errorf("task schedstat sum grew %.1fms although the burning thread exited (clock +%.1fms)", ms(d.SchedstatNs), ms(d.ClockNs))
	}
}
