// Package child starts the driver's helper processes — the upstream, the
// reference hosts, perf — each pinned to its CPUs and in a process group of
// its own that dies with the driver, waits for them to become ready, and
// ends them. envoy.Start runs Envoy as one, adding its own readiness checks.
package child

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"wafbench/driver/cpu"
)

// Process is a started child.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // exit status; read after done is closed
	stop sync.Once
	kill bool
}

// Start starts cmd in its own process group with SIGKILL as its parent-death
// signal, pinned to cpus (nil: not pinned).
func Start(cmd *exec.Cmd, cpus []int) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	var err error
	if cpus != nil {
		err = cpu.StartPinned(cmd, cpus)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID is the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the child has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitErr is the child's exit status as exec.Cmd.Wait returned it (nil for
// a clean exit); it blocks until the child has exited.
func (p *Process) ExitErr() error { <-p.done; return p.err }

// errExited reports a child that exited while it was awaited.
var errExited = errors.New("exited")

// Poll calls ready every interval until it returns true. It fails when the
// child exits first (wrapping ErrExited and the exit status), when ctx ends,
// or after timeout.
func (p *Process) Poll(ctx context.Context, timeout, interval time.Duration, ready func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if ready() {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%w: %v", errExited, p.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %v", timeout)
		}
	}
}

// Stop sends sig to the child's process group, waits up to grace, then
// kills the group. It reports whether the kill was needed; calling it again
// returns the first answer.
func (p *Process) Stop(sig syscall.Signal, grace time.Duration) (killed bool) {
	p.stop.Do(func() {
		pgid := -p.cmd.Process.Pid
		_ = syscall.Kill(pgid, sig)
		select {
		case <-p.done:
		case <-time.After(grace):
			p.kill = true
			_ = syscall.Kill(pgid, syscall.SIGKILL)
			<-p.done
		}
		_ = syscall.Kill(pgid, syscall.SIGKILL) // anything else left in the group
	})
	return p.kill
}

// LastLines returns the last n lines of text (a child's log), without the
// surrounding blank space; none for blank text.
func LastLines(text string, n int) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
