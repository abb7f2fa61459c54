// Package cpu parses and formats CPU lists, pins processes (and the driver
// itself) to CPUs, and reads back the affinity every thread actually has.
//
// Linux keeps a CPU affinity mask per thread, not per process. A new thread
// or a forked child starts with a copy of the mask of the thread that created
// it, and execve keeps it. Everything here follows from that.
package cpu

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// parseList parses a Linux CPU list such as "0,2-3" into ascending CPU
// numbers. Empty lists, reversed ranges and CPUs named twice are errors.
func parseList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("cpu list: empty")
	}
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("cpu list %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("cpu list %q: range %q is reversed", s, part)
			}
		}
		for c := a; c <= b; c++ {
			if seen[c] {
				return nil, fmt.Errorf("cpu list %q: CPU %d given twice", s, c)
			}
			seen[c] = true
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out, nil
}

func parseCPU(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n >= maxCPUs {
		return 0, fmt.Errorf("bad CPU number %q", s)
	}
	return n, nil
}

// Format renders CPUs as a compact Linux CPU list ("0-1,3"). The input need
// not be sorted; duplicates are merged. Format(nil) is "".
func Format(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Online returns the CPUs the kernel has online
// (/sys/devices/system/cpu/online), or, if that file is unreadable, the
// CPUs in this thread's affinity mask. It does not see cpuset restrictions
// narrower than the online set; those surface as EINVAL when pinning.
func Online() ([]int, error) {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if cpus, err := parseList(strings.TrimSpace(string(b))); err == nil {
			return cpus, nil
		}
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	return fromSet(&set), nil
}

// ParseOnline parses the CPU list s (ParseList) and checks that every CPU
// it names is online (Check).
func ParseOnline(s string) ([]int, error) {
	l, err := parseList(s)
	if err == nil {
		err = check(l)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// check returns an error naming the first CPU of cpus that is not online.
func check(cpus []int) error {
	if len(cpus) == 0 {
		return errors.New("no CPUs given")
	}
	online, err := Online()
	if err != nil {
		return err
	}
	for _, c := range cpus {
		if !slices.Contains(online, c) {
			return fmt.Errorf("CPU %d is not available (online: %s)", c, Format(online))
		}
	}
	return nil
}

// maxCPUs is the number of CPUs a unix.CPUSet holds (CPU_SETSIZE, 1024).
const maxCPUs = int(unsafe.Sizeof(unix.CPUSet{})) * 8

func toSet(cpus []int) (*unix.CPUSet, error) {
	if len(cpus) == 0 {
		return nil, errors.New("no CPUs given")
	}
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= maxCPUs {
			return nil, fmt.Errorf("bad CPU number %d", c)
		}
		set.Set(c)
	}
	return &set, nil
}

func fromSet(set *unix.CPUSet) []int {
	var out []int
	for c := 0; c < maxCPUs; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// StartPinned starts cmd with its CPU affinity already set to cpus, so that
// no instruction of the child (not even the dynamic loader) runs elsewhere
// and every thread it ever creates inherits the mask.
//
// Why this is correct: os/exec forks (clone) on the OS thread of the calling
// goroutine, and the child gets a copy of that thread's mask, which execve
// keeps. StartPinned locks a fresh goroutine to its thread, narrows that
// thread's mask, calls cmd.Start, and restores the previous mask before
// unlocking, so no other goroutine ever runs on the narrowed thread. While
// the goroutine is locked, the Go runtime does not clone new threads from it
// (newm hands thread creation to its template thread when the current M is
// locked), so the narrowed mask cannot leak into the runtime's own threads.
//
// The thread stays alive after the call (it is unlocked, not retired), which
// matters for a cmd.SysProcAttr.Pdeathsig: Linux sends it when the thread
// that forked the child exits. If restoring the mask fails, the thread is
// retired instead (the goroutine exits locked), the child is killed and
// reaped, and the error is returned.
func StartPinned(cmd *exec.Cmd, cpus []int) error {
	set, err := toSet(cpus)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("pin %s: read own mask: %w", Format(cpus), err)
			return
		}
		if err := unix.SchedSetaffinity(0, set); err != nil {
			unix.SchedSetaffinity(0, &old)
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("pin to CPUs %s: %w", Format(cpus), err)
			return
		}
		startErr := cmd.Start()
		if err := unix.SchedSetaffinity(0, &old); err != nil {
			// Leave the thread locked: the runtime retires it when this
			// goroutine exits, so the narrowed mask dies with it.
			if startErr == nil {
				cmd.Process.Kill()
				cmd.Wait()
			}
			errc <- fmt.Errorf("pin to CPUs %s: restore thread mask: %w", Format(cpus), err)
			return
		}
		runtime.UnlockOSThread()
		errc <- startErr
	}()
	return <-errc
}

// PinSelf pins every thread of the current process to cpus. Threads the Go
// runtime creates later are cloned from existing threads and so inherit the
// mask; the task list is re-read until a pass finds no thread it has not
// already pinned, which covers threads created while it runs.
func PinSelf(cpus []int) error {
	set, err := toSet(cpus)
	if err != nil {
		return err
	}
	done := map[int]bool{}
	for pass := 0; pass < 10; pass++ {
		tids, err := taskIDs(os.Getpid())
		if err != nil {
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			if err := unix.SchedSetaffinity(tid, set); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // exited meanwhile
				}
				return fmt.Errorf("pin thread %d to CPUs %s: %w", tid, Format(cpus), err)
			}
			done[tid] = true
		}
		if fresh == 0 {
			return nil
		}
	}
	return errors.New("pin self: threads kept appearing")
}

// thread is one thread of a process and the CPUs it may run on.
type thread struct {
	TID  int
	Name string // comm, e.g. "wrk:worker_0"
	CPUs []int
}

func taskIDs(pid int) ([]int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	return tids, nil
}

// Threads returns every thread of pid with its name and affinity, sorted by
// TID. Threads that exit while being read are left out.
func Threads(pid int) ([]thread, error) {
	tids, err := taskIDs(pid)
	if err != nil {
		return nil, fmt.Errorf("threads of %d: %w", pid, err)
	}
	var out []thread
	for _, tid := range tids {
		comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(tid), "comm"))
		if err != nil {
			continue
		}
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue
			}
			return nil, fmt.Errorf("affinity of thread %d: %w", tid, err)
		}
		out = append(out, thread{TID: tid, Name: strings.TrimSpace(string(comm)), CPUs: fromSet(&set)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("threads of %d: none found", pid)
	}
	return out, nil
}

// Verify reads every thread of pid and checks that each may run only on
// CPUs in want. It returns all threads read, and an error naming the first
// thread allowed outside want, prefixed with the process name, e.g.
// "envoy thread 1234 (wrk:worker_0) on CPUs 0-1, want 0".
func Verify(pid int, want []int) ([]thread, error) {
	threads, err := Threads(pid)
	if err != nil {
		return nil, err
	}
	proc := "process"
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
		proc = strings.TrimSpace(string(b))
	}
	for _, t := range threads {
		for _, c := range t.CPUs {
			if !slices.Contains(want, c) {
				return threads, fmt.Errorf("%s thread %d (%s) on CPUs %s, want %s",
					proc, t.TID, t.Name, Format(t.CPUs), Format(want))
			}
		}
	}
	return threads, nil
}
