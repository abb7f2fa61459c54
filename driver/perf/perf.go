// Package perf records Linux perf profiles of a running process over the
// measured window, on request (wafbench run --perf), and folds and draws
// them as flame graphs (flame.go). Sampling uses the cpu-clock software
// event, which works where hardware counters are absent.
package perf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wafbench/driver/child"
)

// Recording is a perf record process attached to one pid.
type Recording struct {
	proc   *child.Process
	out    string
	stderr bytes.Buffer
}

// Available reports whether perf can be run and its profiles drawn as
// flame graphs (inferno, see FlameAvailable), with a reason when not.
func Available() error {
	if _, err := exec.LookPath("perf"); err != nil {
		return errors.New("perf not found: install linux-perf (./scripts/setup.sh does)")
	}
	return FlameAvailable()
}

// Start attaches `perf record -e cpu-clock -g` at freqHz to pid, writing to
// out. perf itself runs on cpus so it does not steal the profiled CPU.
func Start(pid int, out string, freqHz int, cpus []int) (*Recording, error) {
	r := &Recording{out: out}
	cmd := exec.Command("perf", "record", "-e", "cpu-clock", "-F", fmt.Sprint(freqHz), "-g",
		"-p", fmt.Sprint(pid), "-o", out, "--quiet")
	cmd.Stderr = &r.stderr
	proc, err := child.Start(cmd, cpus)
	if err != nil {
		return nil, fmt.Errorf("perf record: %w", err)
	}
	r.proc = proc
	// Wait until perf has opened its events on the target, so that the
	// profile covers the window from its start (perf takes a while to
	// start on a busy machine). A perf that exits instead is reported by
	// Stop.
	deadline := time.Now().Add(attachTimeout)
	for !attached(proc.PID()) && time.Now().Before(deadline) {
		select {
		case <-proc.Done():
			return r, nil
		case <-time.After(time.Millisecond):
		}
	}
	return r, nil
}

// attachTimeout bounds Start's wait for perf to attach.
const attachTimeout = 10 * time.Second

// attached reports whether process pid holds perf event descriptors: perf
// record has opened its events on the target.
func attached(pid int) bool {
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return false
	}
	for _, fd := range fds {
		l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
		if err == nil && l == "anon_inode:[perf_event]" {
			return true
		}
	}
	return false
}

// Stop ends the recording (SIGINT, as perf expects) and waits for the data
// file to be complete.
func (r *Recording) Stop() error {
	if killed := r.proc.Stop(syscall.SIGINT, 30*time.Second); killed {
		return fmt.Errorf("perf record did not stop within 30s: %s", r.stderr.String())
	}
	if st, err := os.Stat(r.out); err != nil || st.Size() == 0 {
		return fmt.Errorf("perf record wrote no data: %s", bytes.TrimSpace(r.stderr.Bytes()))
	}
	return nil
}

// Report writes `perf report --stdio --no-children` sorted by symbol, the
// top of the flat profile, to out, and the folded stacks of the data (Fold)
// beside it with the extension .folded.
func Report(data, out string) error {
	if err := report(data, out); err != nil {
		return err
	}
	return Fold(data, strings.TrimSuffix(out, filepath.Ext(out))+".folded")
}

func report(data, out string) error {
	cmd := exec.Command("perf", "report", "--stdio", "--no-children", "--sort", "dso,symbol",
		"--percent-limit", "0.5", "-g", "none", "-i", data)
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("perf report %s: %w", data, err)
	}
	// perf pads every row to the terminal-less default width; keep the text.
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " -")
	}
	return os.WriteFile(out, bytes.Join(lines, []byte("\n")), 0o644)
}
