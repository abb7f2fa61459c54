package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"wafbench/filters/coraza/engine"
)

// Runtime is the Go runtime settings a filter configuration of the native
// module may carry beside the engine's keys. The Go runtime is one per
// Envoy process: the settings are process-wide, and the configuration
// created last wins. A nil field leaves the runtime as it is (GOGC and
// GOMEMLIMIT from the environment, else Go's defaults).
type Runtime struct {
	// GCPercent is debug.SetGCPercent's argument (GOGC): the heap growth,
	// in percent of the live heap, that triggers a collection; -1 turns
	// pacing by growth off (then only GoMemoryLimit triggers one).
	GCPercent *int `json:"go_gc_percent,omitempty"`
	// MemoryLimitBytes is debug.SetMemoryLimit's argument (GOMEMLIMIT), in
	// bytes: the runtime collects as often as needed to stay under it.
	MemoryLimitBytes *int64 `json:"go_memory_limit_bytes,omitempty"`
	// MemProfileRate is runtime.MemProfileRate: bytes allocated per
	// heap-profile sample, 0 = no sampling. The native module starts with
	// 0 (Go's linker turns heap profiling off when nothing reads the
	// profiles); a rate turns sampling on.
	MemProfileRate *int `json:"go_mem_profile_rate,omitempty"`
	// MaxProcs is runtime.GOMAXPROCS's argument: the Ps the runtime runs
	// Go code on. The native module starts with at least MinMaxProcs
	// (DefaultMaxProcs); 1 restores the runtime's own choice on a one-CPU
	// Envoy.
	MaxProcs *int `json:"go_max_procs,omitempty"`
}

// DefaultMaxProcs raises GOMAXPROCS to MinMaxProcs when the environment
// does not set GOMAXPROCS and the runtime chose fewer (from the CPU
// affinity Envoy started with), and returns the value in force.
// MinMaxProcs (minprocs.go) is 2, or 1 in the coraza@maxprocs1 build (tag
// wafbench_maxprocs1), the module as it was before, kept to measure the
// difference in one run; GOMAXPROCS or go_max_procs set any other value.
//
// Why two on a one-CPU Envoy: every hook is a call from Envoy's C++ into
// Go that returns with its P left in the syscall state (cgocallbackg
// re-enters the syscall it came from). With a single P none is idle, and
// the runtime's monitor thread (sysmon) takes such a P back after one of
// its ticks, then stays awake polling every 20 µs while it keeps finding
// one; with a second, idle P it leaves a P in a syscall alone for 10 ms
// and sleeps. The second P costs nothing while idle; the collector's idle
// workers may use it, on the same CPU.
func DefaultMaxProcs(env string) int {
	n := runtime.GOMAXPROCS(0)
	if env == "" && n < MinMaxProcs {
		runtime.GOMAXPROCS(MinMaxProcs)
		n = MinMaxProcs
	}
	return n
}

// Validate reports whether r can be applied.
func (r Runtime) Validate() error {
	if r.GCPercent != nil && *r.GCPercent < -1 {
		return fmt.Errorf("filter_config: go_gc_percent: want -1 (off) or a percentage >= 0, got %d", *r.GCPercent)
	}
	if r.MemoryLimitBytes != nil && *r.MemoryLimitBytes <= 0 {
		return fmt.Errorf("filter_config: go_memory_limit_bytes: want bytes > 0, got %d", *r.MemoryLimitBytes)
	}
	if r.MaxProcs != nil && *r.MaxProcs < 1 {
		return fmt.Errorf("filter_config: go_max_procs: want Ps >= 1, got %d", *r.MaxProcs)
	}
	if r.MemProfileRate != nil && *r.MemProfileRate < 0 {
		return fmt.Errorf("filter_config: go_mem_profile_rate: want bytes per sample >= 0 (0 = off), got %d", *r.MemProfileRate)
	}
	return nil
}

// Apply sets the runtime as r asks; fields left nil are not touched.
func (r Runtime) Apply() {
	if r.GCPercent != nil {
		debug.SetGCPercent(*r.GCPercent)
	}
	if r.MemoryLimitBytes != nil {
		debug.SetMemoryLimit(*r.MemoryLimitBytes)
	}
	if r.MemProfileRate != nil {
		runtime.MemProfileRate = *r.MemProfileRate
	}
	if r.MaxProcs != nil {
		runtime.GOMAXPROCS(*r.MaxProcs)
	}
}

// ParseModuleConfig decodes the native module's filter_config: the engine's
// keys (as ParseConfig) and the Go runtime's (Runtime), rejecting unknown
// fields and trailing data.
func ParseModuleConfig(raw []byte) (engine.Config, Runtime, error) {
	var c struct {
		engine.Config
		Runtime
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return c.Config, c.Runtime, fmt.Errorf("filter_config: %w", err)
	}
	if d.More() {
		return c.Config, c.Runtime, fmt.Errorf("filter_config: trailing data after the JSON object")
	}
	if err := c.Runtime.Validate(); err != nil {
		return c.Config, c.Runtime, err
	}
	return c.Config, c.Runtime, c.Config.Validate()
}

// GoStatsEnv turns the Go runtime counters (GoStatNames) on when set to
// "1". Off, nothing is read or counted.
const GoStatsEnv = "WAFBENCH_GO_STATS"

// GoStat indexes the Go runtime counters.
type GoStat int

// The Go runtime counters, each the increase of one runtime/metrics value.
const (
	goGCCycles          GoStat = iota // /gc/cycles/total:gc-cycles
	goGCCPUNs                         // /cpu/classes/gc/total:cpu-seconds, in ns (the runtime's estimate)
	goGCIdleNs                        // /cpu/classes/gc/mark/idle:cpu-seconds, in ns: the part run by idle-priority mark workers
	goToCCalls                        // /cgo/go-to-c-calls:calls
	goGoroutinesCreated               // /sched/goroutines-created:goroutines
	NumGoStats
)

// GoStatNames are the counter names of the Go runtime counters.
var GoStatNames = [NumGoStats]string{
	goGCCycles:          counterPrefix + "go_gc_cycles",
	goGCCPUNs:           counterPrefix + "go_gc_cpu_ns",
	goGCIdleNs:          counterPrefix + "go_gc_idle_ns",
	goToCCalls:          counterPrefix + "go_to_c_calls",
	goGoroutinesCreated: counterPrefix + "go_goroutines_created",
}

var goStatMetrics = [NumGoStats]string{
	goGCCycles:          "/gc/cycles/total:gc-cycles",
	goGCCPUNs:           "/cpu/classes/gc/total:cpu-seconds",
	goGCIdleNs:          "/cpu/classes/gc/mark/idle:cpu-seconds",
	goToCCalls:          "/cgo/go-to-c-calls:calls",
	goGoroutinesCreated: "/sched/goroutines-created:goroutines",
}

// GoStats reads the Go runtime counters' metrics and hands out their
// increase since the previous read. It is safe for concurrent use.
type GoStats struct {
	mu      sync.Mutex
	samples [NumGoStats]metrics.Sample
	last    [NumGoStats]uint64
}

// NewGoStats starts counting from now.
func NewGoStats() *GoStats {
	g := &GoStats{}
	for i, name := range goStatMetrics {
		g.samples[i].Name = name
	}
	g.last = g.read()
	return g
}

// read samples the metrics (g.mu held, or g not yet shared).
func (g *GoStats) read() [NumGoStats]uint64 {
	metrics.Read(g.samples[:])
	var v [NumGoStats]uint64
	for i, s := range g.samples {
		switch s.Value.Kind() {
		case metrics.KindUint64:
			v[i] = s.Value.Uint64()
		case metrics.KindFloat64:
			v[i] = uint64(math.Round(s.Value.Float64() * 1e9)) // seconds → ns
		}
	}
	return v
}

// Deltas returns how much each counter grew since the previous call (or
// NewGoStats). The metrics are process-wide: the increase is the whole
// runtime's, whichever stream asks.
func (g *GoStats) Deltas() [NumGoStats]uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.read()
	var d [NumGoStats]uint64
	for i := range now {
		if now[i] > g.last[i] {
			d[i] = now[i] - g.last[i]
		}
	}
	g.last = now
	return d
}

// goRuntimeInfo is the Go runtime as the module finds it.
type goRuntimeInfo struct {
	GOMAXPROCS       int    `json:"gomaxprocs"`
	NumCPU           int    `json:"num_cpu"`
	Threads          uint64 `json:"threads"`
	Goroutines       uint64 `json:"goroutines"`
	GCPercent        int64  `json:"gc_percent"`
	MemoryLimitBytes uint64 `json:"memory_limit_bytes"`
	GCCycles         uint64 `json:"gc_cycles"`
	MemProfileRate   int    `json:"mem_profile_rate"`
	GoVersion        string `json:"go_version"`
}

// goRuntimePrefix starts the Go runtime report line.
const goRuntimePrefix = "wafbench-go-runtime "

// GoRuntimeLine reports the Go runtime's state now, e.g.
// `wafbench-go-runtime {"gomaxprocs":2,...}`: GOMAXPROCS in force (the
// runtime's choice from the CPU affinity it started with, raised to
// MinMaxProcs unless GOMAXPROCS or go_max_procs set it), the CPUs it saw, its
// OS threads and goroutines, the GC settings in force (gc_percent -1:
// off), the collections so far and the heap-profile sampling rate.
func GoRuntimeLine() string {
	s := []metrics.Sample{
		{Name: "/sched/threads/total:threads"},
		{Name: "/sched/goroutines:goroutines"},
		{Name: "/gc/gogc:percent"},
		{Name: "/gc/gomemlimit:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() == metrics.KindUint64 {
			return s[i].Value.Uint64()
		}
		return 0
	}
	b, _ := json.Marshal(goRuntimeInfo{GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), Threads: u(0),
		Goroutines: u(1), GCPercent: int64(u(2)), MemoryLimitBytes: u(3), GCCycles: u(4), MemProfileRate: runtime.MemProfileRate, GoVersion: runtime.Version()})
	return goRuntimePrefix + string(b)
}
