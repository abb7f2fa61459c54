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
	// ctl and ack are perf's control pipe ends, open while perf runs: a
	// closed control pipe makes perf's poll loop wake at once, forever.
	ctl, ack *os.File
}

// Available reports whether perf can be run and its profiles drawn as
// flame graphs (inferno, see FlameAvailable), with a reason when not.
func Available() error {
	if _, err := exec.LookPath("perf"); err != nil {
		return errors.New("perf not found: install linux-perf (./scripts/setup.sh does)")
	}
	return FlameAvailable()
}

// Start attaches `perf record -e cpu-clock -g` at freqHz to pids (Envoy,
// and in an external mode its wafbench-extproc server too), writing to
// out, and returns once perf samples: perf starts with its events disabled
// (-D -1) and Start enables them over perf's control pipe (--control) and
// waits for perf's acknowledgement, so the profile covers the window from
// its first request even on a busy machine, where perf takes most of a
// second to start (a window shorter than that used to have no samples at
// all). perf itself runs on cpus so it does not steal the profiled CPU.
func Start(pids []int, out string, freqHz int, cpus []int) (*Recording, error) {
	ids := make([]string, len(pids))
	for i, pid := range pids {
		ids[i] = fmt.Sprint(pid)
	}
	r := &Recording{out: out}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("perf record: %w", err)
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	r.ctl, r.ack = ctlW, ackR
	// The child's fds 3 and 4 are ExtraFiles[0] and [1].
	cmd := exec.Command("perf", "record", "-e", "cpu-clock", "-F", fmt.Sprint(freqHz), "-g",
		"-p", strings.Join(ids, ","), "-o", out, "--quiet", "-D", "-1", "--control", "fd:3,4")
	cmd.ExtraFiles = []*os.File{ctlR, ackW}
	cmd.Stderr = &r.stderr
	proc, err := child.Start(cmd, cpus)
	ctlR.Close()
	ackW.Close()
	if err != nil {
		r.closePipes()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	r.proc = proc
	if err := enable(ctlW, ackR); err != nil {
		select {
		case <-proc.Done(): // perf exited (no such process…): Stop reports it with perf's message
			return r, nil
		case <-time.After(time.Second):
		}
		r.proc.Stop(syscall.SIGKILL, time.Second)
		r.closePipes()
		return nil, fmt.Errorf("perf record: %v: %s", err, bytes.TrimSpace(r.stderr.Bytes()))
	}
	return r, nil
}

func (r *Recording) closePipes() {
	for _, f := range []*os.File{r.ctl, r.ack} {
		if f != nil {
			f.Close()
		}
	}
}

// attachTimeout bounds Start's wait for perf's acknowledgement.
const attachTimeout = 30 * time.Second

// enable sends perf's "enable" command on ctl and waits up to attachTimeout
// for its "ack" on ack. A perf that exits first closes ack: an error.
func enable(ctl, ack *os.File) error {
	if _, err := ctl.WriteString("enable\n"); err != nil {
		return fmt.Errorf("control pipe: %w", err)
	}
	ack.SetReadDeadline(time.Now().Add(attachTimeout)) // pipes support deadlines (os.Pipe is non-blocking)
	buf := make([]byte, 16)
	n, err := ack.Read(buf)
	if err != nil {
		return fmt.Errorf("no acknowledgement of enable within %v: %w", attachTimeout, err)
	}
	if !bytes.HasPrefix(buf[:n], []byte("ack")) {
		return fmt.Errorf("control pipe: %q, want ack", buf[:n])
	}
	return nil
}

// Stop ends the recording (SIGINT, as perf expects) and waits for the data
// file to be complete.
func (r *Recording) Stop() error {
	killed := r.proc.Stop(syscall.SIGINT, 30*time.Second)
	r.closePipes()
	if killed {
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
	return fold(data, strings.TrimSuffix(out, filepath.Ext(out))+".folded")
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
