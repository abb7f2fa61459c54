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
//     threads, but in clock ticks (10 ms with CLK_TCK=100).
//   - ClockNs is the process CPU-time clock (clock_getcpuclockid(3) of the
//     PID): the kernel's sum_exec_runtime over all live threads plus those
//     that exited, in ns. It is the best single number; SchedstatNs is kept
//     because it is what the result schema names and cross-checks ClockNs.
//
// Envoy creates its threads at startup and keeps them, so in practice the
// three agree to within the tick resolution.
package procstat

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Snapshot is one reading of a process's counters.
type Snapshot struct {
	At          time.Time
	SchedstatNs int64 // sum of on-CPU time over threads alive at At
	TicksNs     int64 // (utime+stime) × 1e9/CLK_TCK, includes exited threads
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
	// procfs's ProcStat.CPUTime assumes CLK_TCK=100; use the real value.
	s.TicksNs = int64(st.UTime+st.STime) * int64(time.Second) / clockTicks()

	status, err := p.NewStatus()
	if err != nil {
		return Snapshot{}, fmt.Errorf("procstat %d: status: %w", pid, err)
	}
	s.RSSKiB = int64(status.VmRSS / 1024) // procfs converts kB to bytes
	s.HWMKiB = int64(status.VmHWM / 1024)
	return s, nil
}

// Interval is the change between two snapshots of one process.
type Interval struct {
	Wall        time.Duration
	SchedstatNs int64
	TicksNs     int64
	ClockNs     int64 // 0 if either snapshot lacks it
}

// Utilization is CPU seconds per wall second, from ClockNs when both
// snapshots have it and from SchedstatNs otherwise.
func (d Interval) Utilization() float64 {
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
func Delta(a, b Snapshot) Interval {
	d := Interval{
		Wall:        b.At.Sub(a.At),
		SchedstatNs: b.SchedstatNs - a.SchedstatNs,
		TicksNs:     b.TicksNs - a.TicksNs,
	}
	if a.ClockNs > 0 && b.ClockNs > 0 {
		d.ClockNs = b.ClockNs - a.ClockNs
	}
	return d
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

var clkTck = sync.OnceValue(func() int64 {
	// AT_CLKTCK from the auxiliary vector is what sysconf(_SC_CLK_TCK)
	// returns; Go has no sysconf and procfs hard-codes 100, so read it by
	// hand. Entries are (type, value) pairs of native-endian uint64s.
	const atClkTck = 17
	b, err := os.ReadFile("/proc/self/auxv")
	if err == nil {
		for i := 0; i+16 <= len(b); i += 16 {
			if binary.NativeEndian.Uint64(b[i:]) == atClkTck {
				if v := int64(binary.NativeEndian.Uint64(b[i+8:])); v > 0 {
					return v
				}
			}
		}
	}
	return 100
})

func clockTicks() int64 { return clkTck() }
