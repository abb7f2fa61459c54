package child

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A grace long enough never to expire on a busy machine: Stop returns as soon
// as the child has exited, so only a child that ignores the signal waits it.
const patient = time.Minute

// startReady starts sh -c script, whose stdout is a pipe, and returns the
// first line it prints: the script prints it once it is ready.
func startReady(t *testing.T, script string) (*Process, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdout = w
	p, err := Start(cmd, nil)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(syscall.SIGKILL, patient) })
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: no ready line: %v", script, err)
	}
	return p, strings.TrimSpace(line)
}

func TestStartPollStop(t *testing.T) {
	p, err := Start(exec.Command("sleep", "30"), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := p.Poll(context.Background(), patient, time.Millisecond, func() bool { n++; return n == 3 }); err != nil {
		t.Fatalf("Poll: %v", err)
	}
	if n != 3 {
		t.Errorf("Poll called ready %d times, want 3", n)
	}
	if killed := p.Stop(syscall.SIGTERM, patient); killed {
		t.Error("sleep needed SIGKILL after SIGTERM")
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if killed := p.Stop(syscall.SIGTERM, time.Second); killed {
		t.Error("second Stop changed its answer")
	}
}

// TestStopKillsWhatIgnoresTheSignal: the shell says "ready" once its trap
// is set, so SIGTERM certainly finds it ignored.
func TestStopKillsWhatIgnoresTheSignal(t *testing.T) {
	p, _ := startReady(t, "trap '' TERM; echo ready; exec sleep 30")
	if killed := p.Stop(syscall.SIGTERM, 100*time.Millisecond); !killed {
		t.Error("a child ignoring SIGTERM was not reported killed")
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
}

// TestStopEndsTheGroup: a grandchild in the child's process group dies with
// it, even though its parent has gone.
func TestStopEndsTheGroup(t *testing.T) {
	p, line := startReady(t, "sleep 30 & echo $!; wait")
	grandchild, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("grandchild pid: %q: %v", line, err)
	}
	if pgid, err := syscall.Getpgid(grandchild); err != nil || pgid != p.PID() {
		t.Fatalf("grandchild %d: process group %d (%v), want %d", grandchild, pgid, err, p.PID())
	}
	p.Stop(syscall.SIGTERM, patient)
	// The grandchild is reparented and reaped once dead: wait for that
	// explicit state, bounded.
	for deadline := time.Now().Add(patient); syscall.Kill(grandchild, 0) == nil; {
		if state(grandchild) == "Z" {
			break // dead, not yet reaped by its new parent
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d outlived Stop by %v", grandchild, patient)
		}
		time.Sleep(time.Millisecond)
	}
}

// state is the process state letter of pid from /proc, "" if gone.
func state(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func TestPollSeesExit(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "exit 3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Poll(context.Background(), patient, time.Millisecond, func() bool { return false })
	if !errors.Is(err, errExited) {
		t.Errorf("Poll after exit: got %v, want ErrExited", err)
	}
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Poll after exit: got %q, want the exit status", err)
	}
}

func TestPollTimeout(t *testing.T) {
	p, err := Start(exec.Command("sleep", "30"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(syscall.SIGKILL, patient)
	if err := p.Poll(context.Background(), 30*time.Millisecond, 5*time.Millisecond, func() bool { return false }); err == nil {
		t.Error("Poll: got nil, want a timeout error")
	}
}

func TestPollCanceled(t *testing.T) {
	p, err := Start(exec.Command("sleep", "30"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(syscall.SIGKILL, patient)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = p.Poll(ctx, patient, time.Millisecond, func() bool {
		if n++; n == 2 {
			cancel()
		}
		return false
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Poll after cancel: got %v, want context.Canceled", err)
	}
}
