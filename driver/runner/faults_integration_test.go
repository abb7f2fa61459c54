//go:build integration

package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/envoy"
	"wafbench/driver/modes"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// TestUpstreamKilledMidWindow kills the upstream inside the first trial's
// measured window: that window is recorded as failed, naming the upstream's
// death, and the upstream is restarted so the second trial measures.
func TestUpstreamKilledMidWindow(t *testing.T) {
	recs, _, err, errs := passthroughRun(t, nil, nil, func(t *testing.T, p *proxy, up *Upstream) {
		if err := syscall.Kill(up.pid(), syscall.SIGKILL); err != nil {
			t.Error(err)
		}
		<-up.proc.Done()
	})
	if len(recs) != 2 {
		t.Fatalf("got %d records (run error %v), want 2", len(recs), err)
	}
	if got, want := recs[0].Error, "upstream (pid "; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "exited (signal 9) during headers@1") {
		t.Errorf("first window's error: got %q, want %q…exited (signal 9) during headers@1", got, want)
	}
	if recs[1].Error != "" || recs[1].Requests == 0 {
		t.Errorf("second trial: got error %q and %d requests, want it measured after the upstream restart", recs[1].Error, recs[1].Requests)
	}
	if !strings.Contains(errs, "restarted it") {
		t.Errorf("stderr does not report the restart:\n%s", errs)
	}
}

// TestEnvoyKilledMidWindow kills Envoy inside the first trial's window: the
// record and the failure line say so, in words, not as a procfs error.
func TestEnvoyKilledMidWindow(t *testing.T) {
	recs, _, _, errs := passthroughRun(t, nil, nil, func(t *testing.T, p *proxy, up *Upstream) {
		if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
			t.Error(err)
		}
		<-p.Done
	})
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	const want = "Envoy exited (signal 9) during headers@1"
	if recs[0].Error != want {
		t.Errorf("first window's error: got %q, want %q", recs[0].Error, want)
	}
	if !strings.Contains(errs, "failed: "+want+"\n") {
		t.Errorf("stderr has no line ending in %q:\n%s", want, errs)
	}
	if recs[1].Error != "" || recs[1].Requests == 0 {
		t.Errorf("second trial: got error %q and %d requests, want it measured", recs[1].Error, recs[1].Requests)
	}
}

// TestDiskFullEndsRun makes raw.jsonl unwritable as on a full disk (a
// symlink to /dev/full, ENOSPC from the kernel): the run ends at once with
// an error naming the write, instead of measuring trials it cannot keep.
func TestDiskFullEndsRun(t *testing.T) {
	recs, windows, err, _ := passthroughRun(t, func(dir string) {
		if err := os.Symlink("/dev/full", filepath.Join(dir, result.RawFile)); err != nil {
			t.Fatal(err)
		}
	}, nil, func(*testing.T, *proxy, *Upstream) {})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "run ended") {
		t.Errorf("run error: got %v, want ENOSPC and \"run ended\"", err)
	}
	if windows != 1 || len(recs) != 0 {
		t.Errorf("got %d windows measured and %d records kept, want 1 and 0 (no trial after the failed write)", windows, len(recs))
	}
}

// TestUpstreamCannotRestartEndsRun: when the upstream dies and a new one
// cannot start, the run ends at once, saying so, instead of failing every
// trial left.
func TestUpstreamCannotRestartEndsRun(t *testing.T) {
	once := func(t *testing.T, self string) string {
		// Starts the real upstream the first time, fails every later time.
		dir := t.TempDir()
		script := filepath.Join(dir, "wafbench-once")
		body := "#!/bin/sh\nif [ -e " + dir + "/started ]; then echo 'upstream refuses to start again' >&2; exit 3; fi\n" +
			"touch " + dir + "/started\nexec " + self + " \"$@\"\n"
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return script
	}
	recs, windows, err, _ := passthroughRun(t, nil, once, func(t *testing.T, p *proxy, up *Upstream) {
		syscall.Kill(up.pid(), syscall.SIGKILL)
		<-up.proc.Done()
	})
	if err == nil || !strings.Contains(err.Error(), "exited (signal 9) and could not be restarted") || !strings.Contains(err.Error(), "run ended before trial 2 of 2") {
		t.Errorf("run error: got %v, want the upstream's death, the failed restart and the run's end", err)
	}
	if windows != 1 || len(recs) != 1 {
		t.Errorf("got %d windows and %d records, want 1 and 1", windows, len(recs))
	}
}

// passthroughRun is a run of two passthrough trials of headers@1 through
// the real Envoy, upstream and load engine, with a fault injected into the
// first trial's measured window. The window is short: nothing here depends
// on its length or on the machine's speed.
//
// prepare, if not nil, runs on the run directory first. windows counts the
// measured windows that started.
func passthroughRun(t *testing.T, prepare func(dir string), selfOverride func(t *testing.T, self string) string, fault func(t *testing.T, p *proxy, up *Upstream)) (recs []result.Record, windows int, runErr error, stderr string) {
	t.Helper()
	root, err := envoy.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := envoy.FindBinary("")
	if err != nil {
		t.Fatalf("%v: run ./scripts/setup.sh", err)
	}
	set, err := profile.LoadDir(filepath.Join(root, "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := set.Cases([]string{"headers@1"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := reg.Resolve("passthrough")
	if err != nil {
		t.Fatal(err)
	}
	trials, err := plan.Build(plan.Options{Modes: []string{"passthrough"}, Cases: 1, Repeats: 2, Order: plan.Latin, Scope: plan.PerModeRepeat})
	if err != nil {
		t.Fatal(err)
	}
	online, err := cpu.Online()
	if err != nil {
		t.Fatal(err)
	}
	// Every process may use every CPU: the test measures nothing.
	var errs bytes.Buffer
	var mu sync.Mutex
	injected := false
	self := wafbenchBinary(t)
	if selfOverride != nil {
		self = selfOverride(t, self)
	}
	cfg := &Config{
		Dir: t.TempDir(), Self: self, Set: set, Cases: cases, Trials: trials,
		Duration:   300 * time.Millisecond,
		Envoy:      EnvoySpec{Binary: bin, Concurrency: 1, CPUs: online},
		ClientCPUs: online, UpstreamCPU: online,
		Errs:  &errs,
		Modes: map[string]modes.Mode{"passthrough": pt},
	}
	if prepare != nil {
		prepare(cfg.Dir)
	}
	var hooks testHooks
	hooks.onWindowStart = func(p *proxy, up *Upstream) {
		mu.Lock()
		defer mu.Unlock()
		windows++
		if !injected {
			injected = true
			fault(t, p, up)
		}
	}
	if err := cpu.PinSelf(online); err != nil {
		t.Fatal(err)
	}
	recs, runErr = runAll(context.Background(), &runner{Config: cfg, testHooks: hooks})
	return recs, windows, runErr, errs.String()
}
