//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wafbench/driver/envoy"
)

// TestCorazaGoRuntimeOptions starts Envoy with the Coraza module, the Go
// runtime keys in its filter_config (go_gc_percent, go_memory_limit_bytes,
// go_mem_profile_rate, go_max_procs)
// and the Go runtime counters on (WAFBENCH_GO_STATS=1): the module must
// report the settings in force, still pass a benign request and block an
// attack, and its go_* counters must move with the requests.
func TestCorazaGoRuntimeOptions(t *testing.T) {
	const gcPercent, memLimit, memProfileRate, maxProcs, n = 400, 1 << 30, 64 << 10, 3, 10
	if fx.setupE != nil {
		t.Fatalf("e2e fixture: %v", fx.setupE)
	}
	cfg := envoy.Config{Mode: envoy.Coraza, UpstreamAddr: fx.upAddr, ModuleSearchPath: fx.modules,
		RulesFile: fx.rules, MaxBodyBytes: maxBody, RouteTimeout: ioTimeout(envoy.Coraza)}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("%v; %s", err, setupHint)
	}
	dir := filepath.Join(fx.tmp, "coraza-goruntime")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "envoy.yaml")
	if err := envoy.WriteYAML(cfg, path); err != nil {
		t.Fatal(err)
	}
	// The driver writes the engine keys only; add the runtime keys to the
	// module's filter_config JSON (a YAML string).
	y, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := fmt.Sprintf(`{"go_gc_percent":%d,"go_memory_limit_bytes":%d,"go_mem_profile_rate":%d,"go_max_procs":%d,"rules_file":`, gcPercent, memLimit, memProfileRate, maxProcs)
	if c := bytes.Count(y, []byte(`{"rules_file":`)); c != 1 {
		t.Fatalf("%s: want one filter_config with rules_file first, found %d", path, c)
	}
	if err := os.WriteFile(path, bytes.Replace(y, []byte(`{"rules_file":`), []byte(keys), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := envoy.Start(ctx, envoy.Options{Binary: fx.binary, ConfigPath: path, WorkDir: dir, Concurrency: 1,
		Env: append(envoy.Env(cfg), "WAFBENCH_GO_STATS=1"), StartTimeout: time.Minute})
	if err != nil {
		t.Fatalf("envoy with go runtime keys: %v", err)
	}
	defer p.Stop(5 * time.Second)

	// n benign GETs (200) and n SQLi POSTs (403), alternating, on one connection.
	if err := drive(p.ListenerAddr, nil, 0, 2*n); err != nil {
		t.Fatal(err)
	}

	log, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	_, js, ok := strings.Cut(string(log), "wafbench-go-runtime ")
	if !ok {
		t.Fatalf("%s has no wafbench-go-runtime line", p.LogPath)
	}
	js, _, _ = strings.Cut(js, "\n")
	var rt struct {
		GOMAXPROCS       int   `json:"gomaxprocs"`
		GCPercent        int64 `json:"gc_percent"`
		MemoryLimitBytes int64 `json:"memory_limit_bytes"`
		MemProfileRate   *int  `json:"mem_profile_rate"`
	}
	if err := json.Unmarshal([]byte(js), &rt); err != nil {
		t.Fatalf("wafbench-go-runtime line %q: %v", js, err)
	}
	if rt.GCPercent != gcPercent || rt.MemoryLimitBytes != memLimit || rt.GOMAXPROCS != maxProcs || rt.MemProfileRate == nil || *rt.MemProfileRate != memProfileRate {
		t.Errorf("runtime line %s: want gc_percent %d, memory_limit_bytes %d, gomaxprocs %d, mem_profile_rate %d", js, gcPercent, memLimit, maxProcs, memProfileRate)
	}

	all := processStats(t, p)
	const prefix = "dynamicmodulescustom.wafbench_coraza_"
	if got := all[prefix+"requests"]; got != 2*n {
		t.Errorf("requests = %d, want %d", got, 2*n)
	}
	if got := all[prefix+"blocked_phase2"]; got != n {
		t.Errorf("blocked_phase2 = %d, want %d", got, n)
	}
	// Each request makes Go→C calls (headers, attributes, counters).
	if got := all[prefix+"go_to_c_calls"]; got < 2*n {
		t.Errorf("go_to_c_calls = %d, want >= %d", got, 2*n)
	}
	for _, k := range []string{"go_gc_cycles", "go_gc_cpu_ns", "go_gc_idle_ns", "go_goroutines_created"} {
		if _, ok := all[prefix+k]; !ok {
			t.Errorf("counter %s%s not defined", prefix, k)
		}
	}
}
