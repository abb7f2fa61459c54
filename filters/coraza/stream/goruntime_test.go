package stream

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParseModuleConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     string
		wantGC  *int
		wantMem *int64
		wantErr string
	}{
		{name: "engine keys only", raw: `{"rules_file":"/crs/main.conf"}`},
		{name: "gc percent", raw: `{"rules_file":"/crs/main.conf","go_gc_percent":400}`, wantGC: ptr(400)},
		{name: "gc off with a limit", raw: `{"rules_file":"/crs/main.conf","go_gc_percent":-1,"go_memory_limit_bytes":268435456}`,
			wantGC: ptr(-1), wantMem: ptr(int64(268435456))},
		{name: "gc percent too low", raw: `{"rules_file":"/crs/main.conf","go_gc_percent":-2}`, wantErr: "go_gc_percent: want -1 (off) or a percentage >= 0, got -2"},
		{name: "mem profile rate negative", raw: `{"rules_file":"/crs/main.conf","go_mem_profile_rate":-1}`, wantErr: "go_mem_profile_rate: want bytes per sample >= 0 (0 = off), got -1"},
		{name: "max procs zero", raw: `{"rules_file":"/crs/main.conf","go_max_procs":0}`, wantErr: "go_max_procs: want Ps >= 1, got 0"},
		{name: "memory limit zero", raw: `{"rules_file":"/crs/main.conf","go_memory_limit_bytes":0}`, wantErr: "go_memory_limit_bytes: want bytes > 0, got 0"},
		{name: "gc percent not a number", raw: `{"rules_file":"/crs/main.conf","go_gc_percent":"400"}`, wantErr: "go_gc_percent"},
		{name: "unknown key", raw: `{"rules_file":"/crs/main.conf","go_gogc":400}`, wantErr: `unknown field "go_gogc"`},
		{name: "engine key still validated", raw: `{"rules_file":"crs/main.conf","go_gc_percent":400}`, wantErr: "rules_file: want an absolute path"},
		{name: "trailing data", raw: `{"rules_file":"/crs/main.conf"} {}`, wantErr: "trailing data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ec, rt, err := ParseModuleConfig([]byte(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ec.RulesFile != "/crs/main.conf" {
				t.Errorf("rules_file: got %q", ec.RulesFile)
			}
			if !samePtr(rt.GCPercent, tc.wantGC) || !samePtr(rt.MemoryLimitBytes, tc.wantMem) {
				t.Errorf("got %+v, want gc %v mem %v", rt, tc.wantGC, tc.wantMem)
			}
		})
	}
}

// TestParseConfigRejectsRuntimeKeys: the Wasm filter and ext_proc read
// the engine keys alone; the Go runtime keys are the native module's.
func TestParseConfigRejectsRuntimeKeys(t *testing.T) {
	if _, err := ParseConfig([]byte(`{"rules_file":"/crs/main.conf","go_gc_percent":400}`)); err == nil {
		t.Fatal("got no error, want unknown field go_gc_percent")
	}
}

func ptr[T any](v T) *T { return &v }

func samePtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func TestRuntimeApply(t *testing.T) {
	prevGC := debug.SetGCPercent(100)
	prevMem := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevMem) })

	prevRate := runtime.MemProfileRate
	t.Cleanup(func() { runtime.MemProfileRate = prevRate })
	runtime.MemProfileRate = 4096
	Runtime{}.Apply() // nil fields touch nothing
	var got goRuntimeInfo
	readLine(t, &got)
	if got.GCPercent != 100 || got.MemProfileRate != 4096 {
		t.Errorf("after an empty Apply: gc_percent %d mem_profile_rate %d, want 100 and 4096", got.GCPercent, got.MemProfileRate)
	}
	Runtime{GCPercent: ptr(-1), MemoryLimitBytes: ptr(int64(1 << 30)), MemProfileRate: ptr(0)}.Apply()
	readLine(t, &got)
	if got.GCPercent != -1 || got.MemoryLimitBytes != 1<<30 || got.MemProfileRate != 0 {
		t.Errorf("got gc_percent %d memory_limit_bytes %d mem_profile_rate %d, want -1, %d, 0", got.GCPercent, got.MemoryLimitBytes, got.MemProfileRate, 1<<30)
	}
	if got.GOMAXPROCS != runtime.GOMAXPROCS(0) || got.Threads == 0 || got.Goroutines == 0 {
		t.Errorf("runtime line: %+v", got)
	}
}

func readLine(t *testing.T, dst *goRuntimeInfo) {
	t.Helper()
	line := GoRuntimeLine()
	js, ok := strings.CutPrefix(line, goRuntimePrefix)
	if !ok {
		t.Fatalf("line %q lacks prefix %q", line, goRuntimePrefix)
	}
	if err := json.Unmarshal([]byte(js), dst); err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
}

// TestGoStatsDeltas: forced collections and new goroutines show up in the
// next Deltas and only there.
func TestGoStatsDeltas(t *testing.T) {
	g := NewGoStats()
	runtime.GC()
	runtime.GC()
	done := make(chan struct{})
	for range 3 {
		go func() { done <- struct{}{} }()
	}
	for range 3 {
		<-done
	}
	d := g.Deltas()
	if d[goGCCycles] < 2 {
		t.Errorf("gc cycles: got %d, want >= 2", d[goGCCycles])
	}
	if d[goGoroutinesCreated] < 3 {
		t.Errorf("goroutines created: got %d, want >= 3", d[goGoroutinesCreated])
	}
	if d := g.Deltas(); d[goGCCycles] != 0 || d[goGoroutinesCreated] != 0 {
		t.Errorf("second Deltas with nothing in between: got %v, want no cycles and no goroutines", d)
	}
	for i, n := range GoStatNames {
		if !strings.HasPrefix(n, counterPrefix+"go_") {
			t.Errorf("counter %d: name %q", i, n)
		}
	}
}

// TestDefaultMaxProcs: without GOMAXPROCS in the environment the module's
// runtime gets at least MinMaxProcs Ps; with it, the runtime's value
// stands; go_max_procs sets any count.
func TestDefaultMaxProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	if got := DefaultMaxProcs("1"); got != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("GOMAXPROCS=1 set: got %d (runtime %d), want 1", got, runtime.GOMAXPROCS(0))
	}
	if got := DefaultMaxProcs(""); got != MinMaxProcs || runtime.GOMAXPROCS(0) != MinMaxProcs {
		t.Errorf("GOMAXPROCS unset: got %d (runtime %d), want %d", got, runtime.GOMAXPROCS(0), MinMaxProcs)
	}
	runtime.GOMAXPROCS(3)
	if got := DefaultMaxProcs(""); got != 3 {
		t.Errorf("runtime at 3: got %d, want 3 (never lowered)", got)
	}
	Runtime{MaxProcs: ptr(1)}.Apply()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("go_max_procs 1: runtime at %d", got)
	}
}
