//go:build integration

package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
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
	"wafbench/driver/stats"
)

// externalRun is a run of one trial of mode (an external mode) over the
// given cases, through the real Envoy, wafbench-extproc server, CRS,
// upstream and load engine; fault, when set, runs as the first measured
// window starts. The windows are short: nothing here depends on their
// length or on the machine's speed. edit, when given, changes the
// configuration before the run.
func externalRun(t *testing.T, mode string, caseKeys []string, fault func(t *testing.T, p *proxy), edit ...func(*Config)) ([]result.Record, string) {
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
	cases, err := set.Cases(caseKeys)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := reg.Resolve(mode)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckBuilt(); err != nil {
		t.Fatalf("%v (filters/extproc builds the wafbench-extproc server)", err)
	}
	rules := filepath.Join(root, "build", "crs", "main.conf")
	if _, err := os.Stat(rules); err != nil {
		t.Fatalf("CRS export: %v: run 'make'", err)
	}
	trials, err := plan.Build(plan.Options{Modes: []string{mode}, Cases: len(cases), Repeats: 1, Order: plan.Latin, Scope: plan.PerModeRepeat})
	if err != nil {
		t.Fatal(err)
	}
	online, err := cpu.Online()
	if err != nil {
		t.Fatal(err)
	}
	var errs bytes.Buffer
	cfg := &Config{
		Dir: t.TempDir(), Self: wafbenchBinary(t), Set: set, Cases: cases, Trials: trials,
		Duration:   300 * time.Millisecond,
		Envoy:      EnvoySpec{Binary: bin, Concurrency: 1, CPUs: online, RulesFile: rules},
		ClientCPUs: online, UpstreamCPU: online,
		Errs:  &errs,
		Modes: map[string]modes.Mode{mode: m},
	}
	for _, e := range edit {
		e(cfg)
	}
	var once sync.Once
	var hooks testHooks
	if fault != nil {
		hooks.onWindowStart = func(p *proxy, _ *Upstream) { once.Do(func() { fault(t, p) }) }
	}
	if err := cpu.PinSelf(online); err != nil {
		t.Fatal(err)
	}
	recs, _ := runAll(context.Background(), &runner{Config: cfg, testHooks: hooks})
	return recs, errs.String()
}

// TestExternalTrialRecordsBothSides: a coraza-extproc trial passes its
// preflight and records, beside Envoy's, the server's CPU, memory, start-up,
// placement, transport and fail-closed setting, and the affinity of its
// threads.
func TestExternalTrialRecordsBothSides(t *testing.T) {
	recs, errs := externalRun(t, modes.CorazaExtProc, []string{"headers@1", "blocked_sqli@1"}, nil)
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2; stderr:\n%s", len(recs), errs)
	}
	for i, r := range recs {
		if r.Error != "" || r.Requests == 0 {
			t.Fatalf("%s: error %q, %d requests", r.Workload, r.Error, r.Requests)
		}
		sc := r.Sidecar
		if sc == nil {
			t.Fatalf("%s: no sidecar in the record", r.Workload)
		}
		if sc.Integration != "ext_proc" || sc.Process != "wafbench-extproc" || sc.Transport != "uds" || sc.Placement != "envoy" || sc.FailureModeAllow {
			t.Errorf("%s: sidecar settings %+v, want ext_proc over uds on Envoy's CPUs, failing closed", r.Workload, sc)
		}
		if sc.CPU.SchedstatNs <= 0 || sc.CPU.UsPerRequest <= 0 || sc.Memory.RSSEndKiB <= 0 {
			t.Errorf("%s: server's CPU %+v memory %+v, want both measured", r.Workload, sc.CPU, sc.Memory)
		}
		if got := r.TotalCPUUsPerRequest(); got <= r.CPU.UsPerRequest {
			t.Errorf("%s: total CPU/request %.1f µs not above Envoy's %.1f", r.Workload, got, r.CPU.UsPerRequest)
		}
		if sc.GoMaxProcs < 1 || sc.GoMaxProcs > len(sc.CPUs) {
			t.Errorf("%s: server GOMAXPROCS %d, want 1..%d (its CPUs %v)", r.Workload, sc.GoMaxProcs, len(sc.CPUs), sc.CPUs)
		}
		if (i == 0) != (sc.ReadyMs > 0) {
			t.Errorf("%s: server start-up %.1f ms, want it on the trial's first record only", r.Workload, sc.ReadyMs)
		}
		if !slices.ContainsFunc(r.Affinity, func(a result.ThreadAffinity) bool { return a.Process == "wafbench-extproc" }) {
			t.Errorf("%s: no affinity observed for the server's threads", r.Workload)
		}
	}
	if recs[0].Preflight == nil || recs[0].Preflight.Module == nil || recs[0].Preflight.Module.Engine != modes.Coraza {
		t.Errorf("preflight = %+v, want the server's self-report", recs[0].Preflight)
	}
}

// TestExternalServerKilledMidWindow kills the server as the first measured
// window of an attack workload starts: the window fails naming the server,
// and nothing of it counts (the record is not valid), although Envoy
// itself runs on.
func TestExternalServerKilledMidWindow(t *testing.T) {
	for _, mode := range []string{modes.CorazaExtProc, modes.CorazaExtAuthz} {
		t.Run(mode, func(t *testing.T) {
			recs, errs := externalRun(t, mode, []string{"blocked_sqli@1"}, func(t *testing.T, p *proxy) {
				if err := syscall.Kill(p.Sidecar.PID, syscall.SIGKILL); err != nil {
					t.Error(err)
				}
				<-p.Sidecar.Done
			})
			if len(recs) != 1 {
				t.Fatalf("got %d records, want 1; stderr:\n%s", len(recs), errs)
			}
			r := recs[0]
			if !strings.HasPrefix(r.Error, "wafbench-extproc server (pid ") || !strings.Contains(r.Error, "exited (signal 9) during blocked_sqli@1") {
				t.Errorf("error %q, want it to name the server's death", r.Error)
			}
			if stats.Valid(&r) {
				t.Errorf("the window with the server dead counts as valid (%d requests)", r.Requests)
			}
			if !strings.Contains(errs, "wafbench-extproc server") {
				t.Errorf("stderr does not name the server:\n%s", errs)
			}
		})
	}
}
