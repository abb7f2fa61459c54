package child

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestStartPollStop(t *testing.T) {
	p, err := Start(exec.Command("sleep", "30"), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := p.Poll(context.Background(), 5*time.Second, time.Millisecond, func() bool { n++; return n == 3 }); err != nil {
		t.Fatalf("Poll: %v", err)
	}
	if killed := p.Stop(syscall.SIGTERM, 5*time.Second); killed {
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

func TestStopKillsWhatIgnoresTheSignal(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "trap '' TERM; sleep 30"), nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the shell set its trap
	if killed := p.Stop(syscall.SIGTERM, 200*time.Millisecond); !killed {
		t.Error("a child ignoring SIGTERM was not reported killed")
	}
}

func TestPollSeesExit(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "exit 3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Poll(context.Background(), 5*time.Second, time.Millisecond, func() bool { return false })
	if !errors.Is(err, ErrExited) {
		t.Errorf("Poll after exit: got %v, want ErrExited", err)
	}
}

func TestPollTimeout(t *testing.T) {
	p, err := Start(exec.Command("sleep", "30"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(syscall.SIGKILL, time.Second)
	if err := p.Poll(context.Background(), 30*time.Millisecond, 5*time.Millisecond, func() bool { return false }); err == nil {
		t.Error("Poll: got nil, want a timeout error")
	}
}
