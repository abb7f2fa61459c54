// Package procstat samples a process's CPU time and memory from procfs, so
// the driver can charge Envoy's CPU use to a measured window.
//
// Three CPU counters are read, because each has a blind spot:
//
//   - SchedstatNs sums the first field (time on CPU, ns) of
//     /proc/PID/task/*/schedstat. It is exact per thread, but a thread that
//     exits between two samples takes its time with it, so a delta can even
//     come out negative (seen in TestProcessSchedstatIsMainThreadOnly when a
//     thread that ran before the first sample exits). /proc/PID/schedstat
//     is NOT a process total: the kernel prints the group leader's own
//     counters there (checked in TestProcessSchedstatIsMainThreadOnly), so
//     it cannot fill the gap.
//   - TicksNs is utime+stime of /proc/PID/stat, which does include exited
//     threads, but in clock ticks (10 ms with CLK_TCK=100; the rate is
//     measured, ClockTicks).
//   - ClockNs is the process CPU-time clock (clock_getcpuclockid(3) of the
//     PID): the kernel's sum_exec_runtime over all live threads plus those
//     that exited, in ns. It is the best single number; SchedstatNs is kept
//     because it is what the result schema names and cross-checks ClockNs.
//
// Envoy creates its threads at startup and keeps them, so in practice the
// three agree to within the tick resolution; the report compares them per
// window (TicksTolerance) and flags a window where they do not.
package procstat

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Snapshot is one reading of a process's counters.
type Snapshot struct {
	At          time.Time
	SchedstatNs int64 // sum of on-CPU time over threads alive at At
	TicksNs     int64 // (utime+stime) × 1e9/CLK_TCK, includes exited threads; 0 if CLK_TCK is unknown
	ClockNs     int64 // process CPU clock, includes exited threads; 0 if unreadable
	RSSKiB      int64 // VmRSS
	HWMKiB      int64 // VmHWM, peak RSS since start
	Threads     int   // threads alive at At
}

// Sample reads pid's counters now.
func Sample(pid int) (Snapshot, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return Snapshot{}, fmt.Errorf("procstat %d: %w", pid, err)
	}
	s := Snapshot{At: time.Now(), ClockNs: processClockNs(pid)}

	threads, err := procfs.AllThreads(pid)
	if err != nil {
		return Snapshot{}, fmt.Errorf("procstat %d: threads: %w", pid, err)
	}
	for _, t := range threads {
		ss, err := t.Schedstat()
		if err != nil {
			continue // the thread exited after the directory was listed
		}
		s.SchedstatNs += int64(ss.RunningNanoseconds)
		s.Threads++
	}
	if s.Threads == 0 {
		return Snapshot{}, fmt.Errorf("procstat %d: no thread readable", pid)
	}

	st, err := p.Stat()
	if err != nil {
		return Snapshot{}, fmt.Errorf("procstat %d: stat: %w", pid, err)
	}
	// procfs's ProcStat.CPUTime assumes CLK_TCK=100; use the measured
	// value, and record no ticks when it cannot be measured.
	if tck, err := ClockTicks(); err == nil {
		s.TicksNs = int64(st.UTime+st.STime) * int64(time.Second) / tck
	}

	status, err := p.NewStatus()
	if err != nil {
		return Snapshot{}, fmt.Errorf("procstat %d: status: %w", pid, err)
	}
	s.RSSKiB = int64(status.VmRSS / 1024) // procfs converts kB to bytes
	s.HWMKiB = int64(status.VmHWM / 1024)
	return s, nil
}

// interval is the change between two snapshots of one process.
type interval struct {
	Wall        time.Duration
	SchedstatNs int64
	TicksNs     int64
	ClockNs     int64 // 0 if either snapshot lacks it
}

// utilization is CPU seconds per wall second, from ClockNs when both
// snapshots have it and from SchedstatNs otherwise.
func (d interval) utilization() float64 {
	if d.Wall <= 0 {
		return 0
	}
	cpu := d.SchedstatNs
	if d.ClockNs > 0 {
		cpu = d.ClockNs
	}
	return float64(cpu) / float64(d.Wall)
}

// Delta returns b − a (a taken first).
func Delta(a, b Snapshot) interval {
	d := interval{
		Wall:        b.At.Sub(a.At),
		SchedstatNs: b.SchedstatNs - a.SchedstatNs,
		TicksNs:     b.TicksNs - a.TicksNs,
	}
	if a.ClockNs > 0 && b.ClockNs > 0 {
		d.ClockNs = b.ClockNs - a.ClockNs
	}
	return d
}

// CPUTime is process pid's CPU time so far, every thread's (exited ones
// included), from its CPU-time clock: one system call, where Sample reads
// procfs for every thread.
func CPUTime(pid int) (time.Duration, error) {
	ns := processClockNs(pid)
	if ns == 0 {
		return 0, fmt.Errorf("process %d: CPU clock unreadable", pid)
	}
	return time.Duration(ns), nil
}

// RunQueueWait is the time pid's live threads have spent runnable but
// waiting for a CPU (schedstat's run delay), summed: with CPUTime it tells
// a host starved of CPU by a loaded machine from one that is idle.
func RunQueueWait(pid int) (time.Duration, error) {
	threads, err := procfs.AllThreads(pid)
	if err != nil {
		return 0, fmt.Errorf("procstat %d: threads: %w", pid, err)
	}
	var ns uint64
	read := 0
	for _, t := range threads {
		ss, err := t.Schedstat()
		if err != nil {
			continue // the thread exited after the directory was listed
		}
		ns += ss.WaitingNanoseconds
		read++
	}
	if read == 0 {
		return 0, fmt.Errorf("procstat %d: no thread readable", pid)
	}
	return time.Duration(ns), nil
}

// StealTime is the machine's steal time so far, every CPU (/proc/stat):
// time its virtual CPUs were ready to run but the hypervisor ran something
// else. Zero on bare metal.
func StealTime() (time.Duration, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	st, err := fs.Stat()
	if err != nil {
		return 0, fmt.Errorf("procstat: /proc/stat: %w", err)
	}
	return time.Duration(st.CPUTotal.Steal * float64(time.Second)), nil
}

// processClockNs reads the CPU-time clock of process pid, as
// clock_getcpuclockid(3) would name it: ((^pid) << 3) | CPUCLOCK_SCHED, with
// the per-thread bit clear. procfs has no equivalent. Returns 0 on error.
func processClockNs(pid int) int64 {
	const cpuclockSched = 2
	id := int32(^uint32(pid)<<3) | cpuclockSched
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// clkTck is read once: the auxiliary vector does not change.
var clkTck = sync.OnceValues(func() (int64, error) {
	vec, err := unix.Auxv()
	if err != nil {
		return 0, fmt.Errorf("CLK_TCK: auxiliary vector: %w", err)
	}
	for _, kv := range vec {
		if kv[0] == atClkTck {
			if v := int64(kv[1]); v > 0 {
				return v, nil
			}
			return 0, fmt.Errorf("CLK_TCK: AT_CLKTCK is %d", kv[1])
		}
	}
	return 0, errors.New("CLK_TCK: the auxiliary vector has no AT_CLKTCK")
})

// atClkTck is AT_CLKTCK, the auxiliary-vector entry that sysconf(_SC_CLK_TCK)
// returns (elf.h); x/sys/unix has no constant for it.
const atClkTck = 17

// ClockTicks is the kernel's clock-tick rate, sysconf(_SC_CLK_TCK): the
// unit of utime and stime in /proc/PID/stat. Go has no sysconf and
// procfs assumes 100, so it is read from AT_CLKTCK in the process's
// auxiliary vector (unix.Auxv). An error means it could not be measured;
// Sample then leaves TicksNs 0 rather than assume a rate.
func ClockTicks() (int64, error) { return clkTck() }

// TicksTolerance is how far TicksNs may lie from a nanosecond CPU counter
// (SchedstatNs or ClockNs) over one interval of cpuNs before the two are
// said to disagree: four ticks (utime and stime are each truncated to a
// tick at both ends of an interval) plus 2 % of cpuNs (the counters are
// read a few procfs reads apart, and schedstat of a running thread lags
// up to a scheduler tick).
func TicksTolerance(cpuNs, clkTck int64) int64 {
	return 4*int64(time.Second)/clkTck + cpuNs/50
}

// RSSKiB reads pid's resident memory (VmRSS) alone: cheap enough to sample
// every second through a long window.
func RSSKiB(pid int) (int64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, fmt.Errorf("procstat %d: %w", pid, err)
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, fmt.Errorf("procstat %d: status: %w", pid, err)
	}
	return int64(st.VmRSS / 1024), nil
}
