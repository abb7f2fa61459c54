package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"wafbench/driver/runlock"
)

// Tests and the children they start run wafbench concurrently with other
// packages' tests: each test process gets a lock file of its own unless one
// is set, so only the lock test below contends for it.
func init() {
	if os.Getenv(runlock.EnvPath) == "" {
		os.Setenv(runlock.EnvPath, filepath.Join(os.TempDir(), fmt.Sprintf("wafbench-test-%d.lock", os.Getpid())))
	}
}

// TestSharedCPUsRefused: Envoy on the client's CPU is refused with a line
// that names the flag; the flag lets the run through (checked by the
// refusal not happening, with a bad --perf rate stopping the run before
// anything is written).
func TestSharedCPUsRefused(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results")
	args := []string{"run", "--suite", "quick", "--modes", "passthrough", "--workloads", "headers@1", "--results", results,
		"--envoy-cpus", "0", "--client-cpus", "0", "--upstream-cpus", "0"}
	var stdout, stderr, msg bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	if got := exitCode(err, &msg); got != 2 {
		t.Fatalf("exit status: got %d, want 2 (err %v)", got, err)
	}
	if line := msg.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, "--allow-shared-cpus") || !strings.Contains(line, "overlap") {
		t.Errorf("got %q, want one line naming the overlap and --allow-shared-cpus", line)
	}
	msg.Reset()
	err = run(context.Background(), append(args, "--allow-shared-cpus", "--perf", "-1"), &stdout, &stderr)
	if exitCode(err, &msg); !strings.Contains(msg.String(), "--perf") {
		t.Errorf("with --allow-shared-cpus: got %q, want the run to pass the CPU check (and stop at --perf)", msg.String())
	}
	if _, err := os.Stat(results); !os.IsNotExist(err) {
		t.Errorf("a refused run created %s", results)
	}
}

// TestLoadClosedPortExits1: a target that refuses connections is a failure
// while running (exit 1), the flags being valid.
func TestLoadClosedPortExits1(t *testing.T) {
	var stdout, stderr, msg bytes.Buffer
	err := run(context.Background(), []string{"load", "--target", "http://127.0.0.1:1/", "--duration", "1s", "--warmup", "0"}, &stdout, &stderr)
	if got := exitCode(err, &msg); got != 1 {
		t.Fatalf("exit status: got %d, want 1 (err %v)", got, err)
	}
	if line := msg.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, "connect 127.0.0.1:1") {
		t.Errorf("got %q, want one line naming the refused connect", line)
	}
}

// lineSignal is a writer that closes ready at its first newline.
type lineSignal struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (w *lineSignal) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Contains(w.buf.Bytes(), []byte("\n")) {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}
