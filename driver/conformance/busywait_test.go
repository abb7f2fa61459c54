package conformance

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// holdingHost listens on loopback and hands each accepted connection to
// serve; the test process itself is the host whose CPU busyWait reads.
func holdingHost(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

// TestBusyWait: with a raised timeout, a host that holds a request without
// spending CPU is given up on after the idle interval, while a host that
// keeps a core busy evaluating gets the raised timeout and its answer is
// read. The host is this test process, its CPU read from procfs.
func TestBusyWait(t *testing.T) {
	raw := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	o := options{Timeout: 20 * time.Second, idle: 400 * time.Millisecond}
	cpu := processCPU(os.Getpid())

	held := holdingHost(t, func(c net.Conn) { time.Sleep(30 * time.Second); c.Close() })
	tg := target{Addr: held, CPU: cpu}
	begin := time.Now()
	status, _, err := busyWait(context.Background(), tg, o, func(ctx context.Context) (int, []byte, error) {
		return exchange(ctx, held, raw, "GET", o.Timeout)
	})
	if !errors.Is(err, errHostIdle) || status != 0 {
		t.Fatalf("held request: status %d, err %v; want errHostIdle", status, err)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("held request ended after %v, want about the idle interval %v", took, o.idle)
	}

	working := holdingHost(t, func(c net.Conn) {
		defer c.Close()
		for end := time.Now().Add(4 * o.idle); time.Now().Before(end); { // evaluating: a core busy
		}
		c.Write([]byte(okResponse))
	})
	// Its run-queue wait counts as work: on a loaded machine the spinning
	// goroutine waits for a CPU as much as it runs.
	status, _, err = busyWait(context.Background(), target{Addr: working, CPU: cpu, Waiting: processWaiting(os.Getpid())}, o, func(ctx context.Context) (int, []byte, error) {
		return exchange(ctx, working, raw, "GET", o.Timeout)
	})
	if err != nil || status != 200 {
		t.Fatalf("busy host: status %d, err %v; want its 200 after 4 idle intervals", status, err)
	}
}

// TestBusyWaitStarved: a host that gets no CPU because the machine is
// loaded, its threads waiting in the run queue, is working, not holding:
// busyWait lets it answer after several idle intervals. The CPU clock
// stands still and the run-queue wait grows with the wall clock, as a
// starved host's do; the wait is read from procfs for this process too.
func TestBusyWaitStarved(t *testing.T) {
	if _, err := processWaiting(os.Getpid())(); err != nil {
		t.Fatalf("run-queue wait of this process: %v", err)
	}
	raw := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	o := options{Timeout: 20 * time.Second, idle: 200 * time.Millisecond}
	begin := time.Now()
	starved := target{
		CPU:     func() (time.Duration, error) { return time.Second, nil },
		Waiting: func() (time.Duration, error) { return time.Since(begin), nil },
	}
	slow := holdingHost(t, func(c net.Conn) {
		defer c.Close()
		time.Sleep(5 * o.idle)
		c.Write([]byte(okResponse))
	})
	starved.Addr = slow
	status, _, err := busyWait(context.Background(), starved, o, func(ctx context.Context) (int, []byte, error) {
		return exchange(ctx, slow, raw, "GET", o.Timeout)
	})
	if err != nil || status != 200 {
		t.Fatalf("starved host: status %d, err %v; want its 200 after 5 idle intervals", status, err)
	}
	starved.Waiting = func() (time.Duration, error) { return time.Second, nil } // neither on CPU nor waiting: idle
	_, _, err = busyWait(context.Background(), starved, o, func(ctx context.Context) (int, []byte, error) {
		return exchange(ctx, slow, raw, "GET", o.Timeout)
	})
	if !errors.Is(err, errHostIdle) {
		t.Fatalf("idle host: err %v; want errHostIdle", err)
	}
}
