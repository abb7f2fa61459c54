//go:build integration

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/runlock"
)

// TestRunRefusedWhileLocked holds the run lock as another run would: a
// second run is refused at once, naming the holder, exit 1, and creates no
// run directory.
func TestRunRefusedWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wafbench.lock")
	t.Setenv(runlock.EnvPath, path)
	held, err := runlock.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	held.SetRun("/somewhere/20261130T000000Z-other")
	results := filepath.Join(t.TempDir(), "results")
	var stdout, stderr, msg bytes.Buffer
	err = run(context.Background(), []string{"run", "--suite", "quick", "--modes", "passthrough", "--workloads", "headers@1", "--results", results}, &stdout, &stderr)
	if got := exitCode(err, &msg); got != 1 {
		t.Fatalf("exit status: got %d, want 1 (err %v)", got, err)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", os.Getpid()), "run /somewhere/20261130T000000Z-other", path} {
		if !strings.Contains(msg.String(), want) {
			t.Errorf("refusal %q does not name %q", msg.String(), want)
		}
	}
	if _, err := os.Stat(results); !os.IsNotExist(err) {
		t.Errorf("a refused run created %s", results)
	}
}

// TestServeCreatesLogDir: serve --log-dir with a directory that does not
// exist yet creates it and puts Envoy's config and log there.
func TestServeCreatesLogDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "logs")
	t.Setenv("WAFBENCH_AS_MAIN", "1") // the upstream child is this test binary running main
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lineSignal{ready: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--mode", "passthrough", "--log-dir", dir}, out, io.Discard)
	}()
	select {
	case <-out.ready: // the URL: Envoy is up
	case err := <-done:
		t.Fatalf("serve ended before printing its URL: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "envoy-*.log"))
	yamls, _ := filepath.Glob(filepath.Join(dir, "envoy-*.yaml"))
	if len(logs) != 1 || len(yamls) != 1 {
		t.Errorf("%s holds logs %v and configs %v, want one of each", dir, logs, yamls)
	}
}
