// Package result defines the records wafbench writes to disk: one Record per
// trial × workload in raw.jsonl, and one Meta per run in meta.json. Everything
// downstream (summary, report, charts, merge) is rebuilt from these files.
package result

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"wafbench/driver/maxrate"
	"wafbench/internal/atomicfile"
	"wafbench/internal/repopath"
)

// File names inside a run directory.
const (
	MetaFile = "meta.json"
	RawFile  = "raw.jsonl"
	// RawGzFile is RawFile gzipped, as a kept run (wafbench keep) holds it.
	RawGzFile = RawFile + ".gz"
)

// HasRaw reports whether dir holds a run's raw records: raw.jsonl, or the
// raw.jsonl.gz of a kept run.
func HasRaw(dir string) bool {
	for _, f := range []string{RawFile, RawGzFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// readRaw reads dir's raw.jsonl, or a kept run's raw.jsonl.gz.
func readRaw(dir string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, RawFile))
	if !errors.Is(err, fs.ErrNotExist) {
		return b, err
	}
	gz, gerr := os.ReadFile(filepath.Join(dir, RawGzFile))
	if gerr != nil {
		return nil, err // the plain file's "no such file" names what a run needs
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RawGzFile, err)
	}
	b, err = io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RawGzFile, err)
	}
	return b, nil
}

// Record is one measured workload within one trial, one line of raw.jsonl.
// Units are in field names. A feature's fields are grouped in an embedded
// struct (Case, EnvoyBinary, OpenLoop, Window, AttackStream, Soak) or a
// pointer that is nil when the feature is off (Slow, Instructions,
// Sidecar…). The groups carry no json tag, so encoding/json flattens them:
// every key sits at the top level of the line, as in records written before
// the grouping, and their fields promote (rec.Late is rec.OpenLoop.Late).
type Record struct {
	Case
	EnvoyBinary
	OpenLoop
	Window
	AttackStream
	Soak

	// Slow is a slow-client workload's outcome (profile slow); such a
	// record measures no load, and its load fields stay zero.
	Slow *Slow `json:"slow,omitempty"`

	// Classes holds each class of a weighted mix (profile mix), in the
	// mix's order; the record's totals cover them all, and its CPU per
	// request is the whole trial's. Nil for a plain workload.
	Classes []Class `json:"classes,omitempty"`

	// MaxRate holds run --max-rate-at's search (and/or sweep) of this
	// case; the record's window was then measured at the first one's rate.
	MaxRate []*maxrate.Result `json:"max_rate,omitempty"`

	// Instructions is what run --callgrind counted over the record's
	// requests (Envoy under valgrind: its CPU and latency figures are
	// valgrind's); nil otherwise.
	Instructions *Instructions `json:"instructions,omitempty"`

	// Sidecar is the wafbench-extproc server's settings and cost in the
	// external modes (ext_proc, ext_authz); nil in every other mode.
	Sidecar *Sidecar `json:"sidecar,omitempty"`

	CPU       CPU              `json:"envoy_cpu"`
	Memory    Memory           `json:"envoy_memory"`
	Startup   *Startup         `json:"envoy_startup,omitempty"` // set on the first workload of a trial
	Preflight *Preflight       `json:"preflight,omitempty"`     // what the trial proved before measuring (first workload of a WAF trial)
	Affinity  []ThreadAffinity `json:"affinity_observed,omitempty"`
	StatsFile string           `json:"stats_file,omitempty"` // relative path of the admin /stats dump
	PerfFile  string           `json:"perf_file,omitempty"`  // relative path of perf.data (run --perf); its flat report is beside it as .txt
	Error     string           `json:"error,omitempty"`      // why the trial failed, if it did
}

// Case is a record's identity: which trial, repeat and mode measured which
// workload, over how many connections and how.
type Case struct {
	Trial    int    `json:"trial"`           // 1-based index of the Envoy process (mode × repeat)
	Repeat   int    `json:"repeat"`          // 1-based repeat (block) number
	Position int    `json:"position"`        // 1-based position of the mode inside its repeat
	Mode     string `json:"mode"`            // a driver/modes name: passthrough, <engine>[@<build>], ref-*
	Build    string `json:"build,omitempty"` // the engine build the mode ran (its manifest is in meta.json's modules); "" without an engine
	Workload string `json:"workload"`        // profile workload name, e.g. "headers"
	Conns    int    `json:"conns"`           // persistent connections held by the client
	Load     string `json:"load"`            // "closed" or "open"
	// ConnMode is "per-request" when every request opened a new connection
	// (run --conn-mode, profile conn_mode); "" is keep-alive.
	ConnMode string `json:"conn_mode,omitempty"`
	// Downstream is the protocol the client spoke to the proxy (run
	// --downstream: h1-tls, h2-tls, h2c); "" is plain HTTP/1.1. Streams is
	// the concurrent HTTP/2 streams per connection (0 for HTTP/1.1).
	Downstream string `json:"downstream,omitempty"`
	Streams    int    `json:"streams,omitempty"`
	Shard      string `json:"shard,omitempty"` // "i/N" (0-based i) of a run --shard; "" when not sharded
}

// EnvoyBinary names the Envoy binary the trial ran (`envoy --version`'s
// description and the file's hash) and its worker threads (--concurrency).
// Empty for hosts other than Envoy and in records written before they were
// recorded (meta.json's then holds for every trial).
type EnvoyBinary struct {
	EnvoyVersion     string `json:"envoy_version,omitempty"`
	EnvoySHA256      string `json:"envoy_sha256,omitempty"`
	EnvoyConcurrency int    `json:"envoy_concurrency,omitempty"`
}

// OpenLoop is how an open-loop window offered its load and whether the
// client kept to it. All zero for closed loop.
type OpenLoop struct {
	RateRequestedPerS float64 `json:"rate_requested_per_s"` // 0 for closed loop
	// Arrival is the window's arrival process, "uniform" or "poisson" (""
	// for closed loop and in records written before it was recorded:
	// uniform); ArrivalSeed seeds a Poisson schedule.
	Arrival     string `json:"arrival,omitempty"`
	ArrivalSeed int64  `json:"arrival_seed,omitempty"`
	// LoadFraction is a rate-sweep point's offered load as a fraction of
	// CapacityPerS, the closed-loop req/s it was scaled from (profile
	// capacity_from or capacity); both 0 for other workloads.
	LoadFraction float64 `json:"load_fraction,omitempty"`
	CapacityPerS float64 `json:"capacity_per_s,omitempty"`
	// Late counts sends more than the lag threshold behind their intended
	// time (Send.LagThresholdUs: half the mean inter-arrival time; 1 ms in
	// records without Send), waits for a busy connection included; Lagged
	// those the client itself held back (load.Result.Lagged); Due the
	// arrivals the schedule made due in the window (load.Result.Due; 0 in
	// records written before it was recorded); BehindRate flags a window
	// that did not hold its requested rate (see FellBehind).
	Late   int64 `json:"late,omitempty"`
	Lagged int64 `json:"client_lagged,omitempty"`
	// Stalled: of Lagged, the sends also past the stall threshold, the lag
	// threshold but at least 1 ms (load.Result.Stalled), which FellBehind
	// judges by; 0 in records written before it was recorded.
	Stalled    int64 `json:"client_stalled,omitempty"`
	Due        int64 `json:"due,omitempty"`
	BehindRate bool  `json:"behind_rate,omitempty"`
	// Send is the window's send delay kept apart from its latency
	// (load.SendStats); nil for closed loop and in records written before
	// it was recorded.
	Send *SendDelay `json:"send,omitempty"`
}

// Window is the measured window's intent and outcome: how long it ran,
// the status a valid response had, what was answered and how fast.
type Window struct {
	WarmupS     float64 `json:"warmup_s"`
	DurationS   float64 `json:"duration_s"` // measured window actually elapsed
	Interrupted bool    `json:"interrupted,omitempty"`

	ExpectStatus int `json:"expect_status"`
	// DeclaredStatus is set when the verdict was measured (profile
	// measure_verdict): ExpectStatus is then the status a probe request got
	// before the window, and DeclaredStatus what the profile says a correct
	// answer is (403 for an attack in a WAF mode).
	DeclaredStatus int `json:"declared_status,omitempty"`
	// VerdictProbeMs is how long a measure_verdict workload's verdict probe
	// took to be answered, ms (profile min_responses stretches the window
	// from it); 0 for other workloads.
	VerdictProbeMs float64 `json:"verdict_probe_ms,omitempty"`
	// RequestBytes is the size of the request as sent (head and body).
	RequestBytes int `json:"request_bytes,omitempty"`

	Requests     int64            `json:"requests"`                // completed and valid in the window
	WarmupErrors int64            `json:"warmup_errors,omitempty"` // errors of any kind during the warmup (not in Errors)
	Errors       map[string]int64 `json:"errors,omitempty"`        // by kind: status, connect, read, timeout…
	Statuses     map[string]int64 `json:"statuses,omitempty"`      // observed status codes in the window
	ReqPerS      float64          `json:"req_per_s"`
	// RateAchievedPerS is the rate the window achieved: the open loop's
	// pacer rate, else ReqPerS.
	RateAchievedPerS float64 `json:"rate_achieved_per_s"`

	Latency    Latency `json:"latency"`
	HistBase64 string  `json:"hist_b64,omitempty"` // hdrhistogram-go encoded histogram (µs)
	PerSecond  []int64 `json:"per_second"`         // completions in each second of the window
}

// AttackStream is a concurrent attack stream's outcome (profile
// attack_stream): Attacks counts its answers during the window, by status
// or "refused", "reset", "timeout"; AttackWorkload names the attack and
// AttackExpect the status a correct WAF gives it. Zero without a stream.
type AttackStream struct {
	Attacks        map[string]int64 `json:"attacks,omitempty"`
	AttackWorkload string           `json:"attack_workload,omitempty"`
	AttackExpect   int              `json:"attack_expect,omitempty"`
}

// Soak is the once-a-second series of a window of RSSSeriesMin or longer
// (the soak suite); nil series for shorter windows.
type Soak struct {
	// RSSSeriesKiB is the proxy's VmRSS once a second through the measured
	// window: the report fits its slope.
	RSSSeriesKiB []int64 `json:"rss_series_kib,omitempty"`
	// CPUSeriesUs is the proxy's CPU time (µs, all threads, cumulative)
	// read with each RSSSeriesKiB reading: with PerSecond, the soak
	// report's CPU per request over the window. Nil in records written
	// before it was recorded.
	CPUSeriesUs []int64 `json:"cpu_series_us,omitempty"`
	// WaitSeriesUs is the proxy's live threads' run-queue wait (µs,
	// cumulative, schedstat: runnable but not on a CPU) and StealSeriesUs
	// the machine's steal time (µs, cumulative, every CPU, /proc/stat:
	// time the hypervisor gave this machine's CPUs to others), read with
	// each RSSSeriesKiB reading: a latency drift at flat CPU per request
	// shows here when something else took the proxy's CPU. Nil in records
	// written before they were recorded.
	WaitSeriesUs  []int64 `json:"wait_series_us,omitempty"`
	StealSeriesUs []int64 `json:"steal_series_us,omitempty"`
	// AllocatorStart and AllocatorEnd are the proxy's allocator statistics
	// (bytes by name; Envoy's admin /memory: allocated, heap_size,
	// pageheap_free, pageheap_unmapped, total_thread_cache, …) at the
	// window's start and end; nil for hosts without them and in records
	// written before they were recorded.
	AllocatorStart map[string]int64 `json:"allocator_start,omitempty"`
	AllocatorEnd   map[string]int64 `json:"allocator_end,omitempty"`
	// LatencySlots holds the window's valid responses' latencies by when
	// they completed: the soak report compares the first minute's with the
	// last's. Nil in records written before it was recorded.
	LatencySlots *LatencySlots `json:"latency_slots,omitempty"`
}

// SendDelay is what an open-loop window's client added to its latency.
// Latency (Record.Latency) runs from each request's intended send time; the
// send delay is the part of it before the request's actual write, Own the
// part of that the client itself added (from the later of the intended time
// and the connection falling free: its pacer, its wait for a CPU; the rest
// is a wait for a busy connection, the server's), and FromSend the latency
// from the actual write, what a generator that does not correct for
// coordinated omission reports. All over the window's valid responses, µs.
type SendDelay struct {
	LagThresholdUs float64 `json:"lag_threshold_us"` // how late a send counted in Late and Lagged was
	Delay          Latency `json:"delay"`
	Own            Latency `json:"own"`
	FromSend       Latency `json:"from_send"`
	// OwnHistBase64 and FromSendHistBase64 are Own's and FromSend's
	// histograms, encoded as Record.HistBase64.
	OwnHistBase64      string `json:"own_hist_b64,omitempty"`
	FromSendHistBase64 string `json:"from_send_hist_b64,omitempty"`
}

// ClientBoundShare is the share of a window's latency p99 above which its
// client's own send delay p99 makes the window client-bound: the client,
// not the server, decided its tail.
const ClientBoundShare = 0.25

// ClientBound reports whether the client's own send-delay p99 is more than
// ClientBoundShare of latencyP99Us, the window's latency p99 from the
// intended time. False for nil (closed loop, older records).
func (s *SendDelay) ClientBound(latencyP99Us float64) bool {
	return s != nil && IsClientBound(s.Own.P99Us, latencyP99Us)
}

// IsClientBound reports whether a client's own send-delay p99 ownP99Us is
// more than ClientBoundShare of the latency p99 latencyP99Us.
func IsClientBound(ownP99Us, latencyP99Us float64) bool {
	return latencyP99Us > 0 && ownP99Us > ClientBoundShare*latencyP99Us
}

// Class is one class of a mix record: the workload it sends, its weight,
// the status its responses must have, and what the window measured of it.
type Class struct {
	Workload     string           `json:"workload"`
	Weight       int              `json:"weight"`
	ExpectStatus int              `json:"expect_status"`
	Requests     int64            `json:"requests"` // valid responses
	Errors       map[string]int64 `json:"errors,omitempty"`
	Statuses     map[string]int64 `json:"statuses,omitempty"`
	Latency      Latency          `json:"latency"`
	HistBase64   string           `json:"hist_b64,omitempty"`
}

// Instructions are callgrind's instruction counts (Ir) of one workload in
// one Envoy process: Warmup requests unmeasured, then Requests requests
// counted over the whole process (every thread), then, in a WAF mode, as
// many again with the module's hooks excluded by the meter (filters/meter).
// Each window's requests go one at a time over one connection.
type Instructions struct {
	Tool           string `json:"tool"` // valgrind --version
	WarmupRequests int64  `json:"warmup_requests"`
	Requests       int64  `json:"requests"` // per window
	Envoy          int64  `json:"envoy"`    // the whole process over the first window
	// OutsideHooks is the whole process over the second window with every
	// outermost call of an envoy_dynamic_module_on_* hook excluded; 0 in
	// passthrough, which loads no module.
	OutsideHooks int64 `json:"outside_hooks,omitempty"`
	// Account splits the instructions inside the hooks (Envoy less
	// OutsideHooks, which its values sum to) by who executed them, category
	// (callgrind.Categories) to instructions over the window; nil in
	// passthrough and in records written before it existed.
	Account map[string]int64 `json:"account,omitempty"`
}

// AccountPerRequest is category's instructions per request inside the
// hooks (0 when the account has none).
func (in *Instructions) AccountPerRequest(category string) float64 {
	return perRequest(in.Account[category], in.Requests)
}

// EnvoyPerRequest is the whole process's instructions per request.
func (in *Instructions) EnvoyPerRequest() float64 { return perRequest(in.Envoy, in.Requests) }

// HooksPerRequest is the instructions per request inside the module's
// hooks, inclusive of everything they call: the first window's count less
// the second's (0 without a module).
func (in *Instructions) HooksPerRequest() float64 {
	if in.OutsideHooks == 0 {
		return 0
	}
	return perRequest(in.Envoy-in.OutsideHooks, in.Requests)
}

// OutsidePerRequest is Envoy's instructions per request outside the hooks
// (the whole process without a module).
func (in *Instructions) OutsidePerRequest() float64 {
	if in.OutsideHooks == 0 {
		return in.EnvoyPerRequest()
	}
	return perRequest(in.OutsideHooks, in.Requests)
}

func perRequest(n, reqs int64) float64 {
	if reqs <= 0 {
		return 0
	}
	return float64(n) / float64(reqs)
}

// Sidecar is what a record of an external mode holds of the
// wafbench-extproc server beside Envoy: how it ran, and its CPU and memory
// over the same measured window as Envoy's (Record.CPU, Record.Memory).
type Sidecar struct {
	Integration string `json:"integration"` // "ext_proc" or "ext_authz"
	Process     string `json:"process"`     // "wafbench-extproc"
	Transport   string `json:"transport"`   // "uds" or "tcp" (loopback)
	// Placement is where it was pinned: "envoy" (Envoy's CPUs, the
	// default), "own" (CPUs Envoy does not use) or the list given; CPUs is
	// that set.
	Placement string `json:"placement"`
	CPUs      []int  `json:"cpus"`
	// GoMaxProcs is the server's GOMAXPROCS, which follows CPUs; 0 in
	// records written before it was recorded.
	GoMaxProcs int `json:"gomaxprocs,omitempty"`
	// FailureModeAllow is the Envoy filter's failure_mode_allow: true lets
	// requests through uninspected when the server fails (fail open).
	FailureModeAllow bool    `json:"failure_mode_allow"`
	CPU              CPU     `json:"cpu"`
	Memory           Memory  `json:"memory"`
	ReadyMs          float64 `json:"ready_ms,omitempty"` // spawn to its ready line (first workload of a trial)
}

// TotalCPUUsPerRequest is the CPU per request of Envoy and, in an
// external mode, its wafbench-extproc server together.
func (r *Record) TotalCPUUsPerRequest() float64 {
	if r.Sidecar == nil {
		return r.CPU.UsPerRequest
	}
	return r.CPU.UsPerRequest + r.Sidecar.CPU.UsPerRequest
}

// Latency holds client-side latency percentiles in microseconds.
type Latency struct {
	P50Us  float64 `json:"p50_us"`
	P90Us  float64 `json:"p90_us"`
	P95Us  float64 `json:"p95_us"`
	P99Us  float64 `json:"p99_us"`
	P999Us float64 `json:"p999_us"`
	MaxUs  float64 `json:"max_us"`
	MeanUs float64 `json:"mean_us"`
}

// CPU is Envoy's CPU use over the measured window.
type CPU struct {
	SchedstatNs  int64   `json:"schedstat_ns"`   // summed over all threads
	TicksNs      int64   `json:"ticks_ns"`       // utime+stime from /proc, cross-check (10 ms resolution)
	ClockNs      int64   `json:"clock_ns"`       // process CPU clock (clock_gettime), includes exited threads
	UsPerRequest float64 `json:"us_per_request"` // schedstat based
	Utilization  float64 `json:"utilization"`    // CPU seconds per wall second
}

// RSSSeriesMin is the shortest measured window whose RSS is sampled every
// second (Record.RSSSeriesKiB).
const RSSSeriesMin = time.Minute

// Slow is what a slow-client workload's connections got: its plan, each
// connection's answer and time, the proxy's RSS before, while every
// connection had sent what it would, and after, and how many requests each
// of the host's client timeouts ended.
type Slow struct {
	HeadChunk  int     `json:"head_chunk"` // bytes of the head per write; 0 = all at once
	BodyChunk  int     `json:"body_chunk"` // bytes of the body per write; 0 = all at once
	IntervalMs float64 `json:"interval_ms"`
	StopAfter  int     `json:"stop_after"` // body bytes sent before holding; -1 = the whole body
	BodyBytes  int     `json:"body_bytes"` // the body's declared length
	MaxWaitS   float64 `json:"max_wait_s"` // the client's bound on each exchange
	// Answers counts the connections' answers by status, or "reset"
	// (closed before a response head), "refused", "timeout" (nothing
	// within MaxWaitS).
	Answers map[string]int64 `json:"answers"`
	// ElapsedMs is each connection's time from connect to its answer (or
	// to giving up), in the connections' order.
	ElapsedMs []float64 `json:"elapsed_ms"`
	// SentBytes is each connection's bytes written before its answer.
	SentBytes    []int `json:"sent_bytes"`
	RSSBeforeKiB int64 `json:"rss_before_kib,omitempty"`
	RSSHeldKiB   int64 `json:"rss_held_kib,omitempty"`
	RSSAfterKiB  int64 `json:"rss_after_kib,omitempty"`
	// Timeouts are the host's client timeouts; nil when it states none.
	Timeouts []SlowTimeout `json:"timeouts,omitempty"`
}

// SlowTimeout is one of the host's client timeouts and how many of the
// workload's requests it ended (its counter's change; -1 when the host has
// no counter for it).
type SlowTimeout struct {
	Name   string  `json:"name"`
	AfterS float64 `json:"after_s"`
	Fired  int64   `json:"fired"`
}

// LatencySlotEvery is the slot of Record.LatencySlots.
const LatencySlotEvery = 10 * time.Second

// LatencySlots are consecutive slots of a measured window, each with the
// latencies (µs) of the valid responses that completed in it.
type LatencySlots struct {
	EveryS float64 `json:"every_s"` // slot length; the last slot may be partial
	// HistBase64 holds one hdrhistogram-go histogram per slot (as
	// Record.HistBase64, at 2 significant figures), from the window's
	// start.
	HistBase64 []string `json:"hist_b64"`
}

// Memory is Envoy's resident memory in KiB.
type Memory struct {
	RSSAfterWarmupKiB int64 `json:"rss_after_warmup_kib"`
	RSSEndKiB         int64 `json:"rss_end_kib"`
	PeakKiB           int64 `json:"peak_kib"` // VmHWM
}

// Startup is how long a fresh Envoy took to become usable, in milliseconds.
type Startup struct {
	AdminReadyMs    float64 `json:"admin_ready_ms"`
	ListenerReadyMs float64 `json:"listener_ready_ms"`
	// TcmallocPerCPU: whether Envoy's tcmalloc ran with its per-CPU caches
	// (envoy.Process.PerCPUCaches); nil for other hosts, under callgrind and
	// in runs recorded before it was read.
	TcmallocPerCPU *bool `json:"tcmalloc_per_cpu,omitempty"`
}

// ThreadAffinity is the CPU set observed on one thread of a pinned process.
type ThreadAffinity struct {
	Process string `json:"process"` // envoy | upstream | client
	TID     int    `json:"tid"`
	Name    string `json:"name"`
	CPUs    []int  `json:"cpus"`
	When    string `json:"when"` // after_warmup | end
}

// Meta describes a whole run: intent, environment and versions.
type Meta struct {
	// RunID is random and set once when the run starts (NewRunID); merge
	// refuses to pool one run twice. Runs written before it existed have none.
	RunID string `json:"run_id,omitempty"`
	// MergedRuns lists the run IDs a merged run pools (wafbench merge).
	MergedRuns  []string          `json:"merged_run_ids,omitempty"`
	Name        string            `json:"name"`
	StartedUTC  string            `json:"started_utc"`
	FinishedUTC string            `json:"finished_utc,omitempty"`
	Status      string            `json:"status"` // running | complete | interrupted | failed
	Command     []string          `json:"command"`
	Flags       map[string]string `json:"flags"`
	Suite       string            `json:"suite"`
	Modes       []string          `json:"modes"`
	Workloads   []string          `json:"workloads"`
	Repeats     int               `json:"repeats"`
	Order       string            `json:"order"` // latin | shuffle
	Seed        int64             `json:"seed"`
	ModeOrder   [][]string        `json:"mode_order"`  // per repeat
	TrialScope  string            `json:"trial_scope"` // per-mode-repeat | per-workload

	GitSHA    string `json:"git_sha"`
	GitDirty  bool   `json:"git_dirty"`
	GoVersion string `json:"go_version"`
	Kernel    string `json:"kernel"`
	Arch      string `json:"arch"` // GOARCH of the driver
	CPUModel  string `json:"cpu_model"`
	// Processor names the CPU exactly (identity, the ISA extensions the
	// engines dispatch on, caches, hypervisor); nil in runs recorded before
	// it existed, which merge and the report then compare by CPUModel only.
	Processor *Processor `json:"processor,omitempty"`
	// ClkTck is the kernel's clock-tick rate (AT_CLKTCK) that converted
	// /proc ticks to ns; 0 in runs before it was recorded, or when it could
	// not be read (then Unmeasured says so and ticks_ns is 0).
	ClkTck int64 `json:"clk_tck,omitempty"`
	// Unmeasured lists what the run meant to measure about its environment
	// but could not (an engine version, a module hash, CLK_TCK), one line
	// each with the reason; the report shows every line.
	Unmeasured   []string `json:"unmeasured,omitempty"`
	NumCPU       int      `json:"num_cpu"`
	Governor     string   `json:"governor"`
	SMT          string   `json:"smt"`
	EnvoyPath    string   `json:"envoy_path"`
	EnvoyVersion string   `json:"envoy_version"`
	EnvoySHA256  string   `json:"envoy_sha256"`
	Concurrency  int      `json:"envoy_concurrency"`

	EnvoyCPUs    []int `json:"envoy_cpus"`
	ClientCPUs   []int `json:"client_cpus"`
	UpstreamCPUs []int `json:"upstream_cpus"`
	// Upstream is the server behind every mode: "wafbench" (the harness's
	// own; also meant when empty, in runs from before the field) or
	// "go-httpbin v2.21.0" (with the version linked into it).
	Upstream string `json:"upstream,omitempty"`
	// Downstream is the protocol every trial's client spoke to the proxy
	// (run --downstream); "" (runs before it, and h1) is plain HTTP/1.1.
	Downstream string `json:"downstream,omitempty"`

	Modules map[string]Module `json:"modules,omitempty"` // by mode
	CRS     *CRS              `json:"crs,omitempty"`
	Notes   []string          `json:"notes,omitempty"`
	// Protection is the run's protection.json (ReadProtection), filled by
	// the report; it is not part of meta.json.
	Protection *Protection `json:"-"`

	// Machine identifies the machine the run ran on (a hash of its boot ID):
	// runs with the same Machine pool as one block in merge --blocks.
	Machine string `json:"machine,omitempty"`
	// Shard is set on a run of one slice of a design (run --shard).
	Shard *Shard `json:"shard,omitempty"`
	// Shards is set on a merge of shards of one design; Blocks on a merge
	// that pools machines as blocks (merge --blocks).
	Shards *ShardSet `json:"shards,omitempty"`
	Blocks []Block   `json:"blocks,omitempty"`
	// Precision is the run's precision goal and, for run --precision, how
	// the repeats it added ended; nil for runs with no target.
	Precision *Precision `json:"precision,omitempty"`
}

// Precision is the half-width a run aims for on the comparisons it targets
// (the suite's precision_targets, or run --precision), and how run
// --precision's added repeats ended.
type Precision struct {
	TargetPct      float64           `json:"target_pct"`         // 95% CI half-width of each targeted ratio, % of the ratio
	BudgetS        float64           `json:"budget_s,omitempty"` // run --budget in seconds, planned repeats included; 0 = planned allocation only
	Targets        []PrecisionTarget `json:"targets"`
	PlannedRepeats int               `json:"planned_repeats"`
	AddedRepeats   int               `json:"added_repeats,omitempty"` // whole blocks run --precision added
	Stop           string            `json:"stop,omitempty"`          // why no further block was added (run --precision)
}

// PrecisionTarget is one targeted comparison: Ratio "num/den" (mode names),
// Metric a stats metric name (req_per_s, cpu_us_per_req, p99_us), Workload
// "name@conns".
type PrecisionTarget struct {
	Ratio    string `json:"ratio"`
	Metric   string `json:"metric"`
	Workload string `json:"workload"`
}

// Module identifies a WAF dynamic module and the engine inside it.
type Module struct {
	Path          string `json:"path"`
	SHA256        string `json:"sha256"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Build         string `json:"build"` // compiler and flags
	// BuildName is the engine build (a driver/modes name, e.g.
	// modsecurity@3.0.14-pgo); Manifest is that build's manifest.json as
	// written by `wafbench build` (nil for builds without one).
	BuildName string          `json:"build_name,omitempty"`
	Manifest  json.RawMessage `json:"manifest,omitempty"`
	// Loaded is what the module reported about itself when Envoy loaded it
	// (the wafbench-module log line), checked against the mode by preflight.
	Loaded *ModuleInfo `json:"loaded,omitempty"`
}

// Preflight is what a WAF trial proved before its first measured window: the
// mode enforced (a benign canary passed, a canary attack was denied, the
// module's counters moved) and the module loaded is the engine and build the
// mode names.
type Preflight struct {
	Module       *ModuleInfo `json:"module,omitempty"`        // the module's self-report (Envoy modes)
	ModulePath   string      `json:"module_path,omitempty"`   // the module file mapped into Envoy
	ModuleSHA256 string      `json:"module_sha256,omitempty"` // its SHA-256 at preflight time
	EngineLib    string      `json:"engine_lib,omitempty"`    // the libmodsecurity mapped into nginx
	GOMAXPROCS   int         `json:"gomaxprocs,omitempty"`    // Go threads the Caddy host ran with (its own report)
}

// ModuleInfo is the identity a WAF module reports when it loads.
type ModuleInfo struct {
	Module        string `json:"module"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Build         string `json:"build"`
	Rules         int    `json:"rules"`
}

// CRS identifies the rule set both engines evaluated.
type CRS struct {
	Version     string            `json:"version"`
	Dir         string            `json:"dir"`
	SHA256      string            `json:"sha256"` // over all files, sorted by name, hashed at run start from the files the engines load
	RuleFiles   int               `json:"rule_files"`
	Files       map[string]string `json:"files"` // name -> sha256
	Adaptations []string          `json:"adaptations"`
	Notes       []string          `json:"notes,omitempty"` // e.g. files changed since export
	// ParanoiaLevel is CRS's blocking paranoia level.
	ParanoiaLevel int `json:"paranoia_level,omitempty"`
	// Settings are the lines of the configuration both engines load before
	// CRS (wafbench-common.conf: body limits and processors, the denials of
	// unparsable bodies and of too many arguments), by directive name or
	// "rule <id>".
	Settings map[string]string `json:"settings,omitempty"`
	// Configurations are the run's configuration axis (--configs,
	// --waf-config); nil when every WAF mode loads Dir's rules.
	Configurations []Configuration `json:"configurations,omitempty"`
}

// Configuration is one rule configuration of the axis: the WAF modes
// qualified "+Name" load it.
type Configuration struct {
	Name          string            `json:"name"`
	Kind          string            `json:"kind"`                     // paranoia, release or dir
	CRSVersion    string            `json:"crs_version,omitempty"`    // built-in configurations
	ParanoiaLevel int               `json:"paranoia_level,omitempty"` // blocking = detection level (built-in)
	Dir           string            `json:"dir"`                      // where main.conf is, relative to the checkout when inside it
	SHA256        string            `json:"sha256"`                   // over "name sha256\n" lines in the order the engines read the files
	Files         map[string]string `json:"files"`                    // name -> sha256
}

// NewRunID returns a random 128-bit run ID in hex.
func NewRunID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	return hex.EncodeToString(b[:])
}

// Fell-behind thresholds of an open-loop window: its responses fell short
// of BehindRatio of the arrivals its schedule made due in it, or the client
// itself held back more than BehindLateShare of its sends (FellBehind).
const (
	BehindRatio     = 0.95
	BehindLateShare = 0.01
)

// FellBehind reports whether an open-loop window did not hold its requested
// rate. due is the number of arrivals its schedule made due in the window
// (load.Result.Due), responses those answered in it (any status), stalled
// the sends the client itself held back past the stall threshold — half the
// mean inter-arrival time but at least 1 ms (load.Result.Stalled: behind the
// later of their intended time and their connection becoming free). Runs
// recorded between the lag threshold's change to half the inter-arrival
// time and the stall threshold judged by the lag threshold alone (Lagged),
// which at tens of thousands of requests per second is a few tens of µs:
// below a client thread's wake-up on a virtual machine, so it flagged
// windows that held their rate. It fell behind when
//
//   - responses < BehindRatio × due − 1: the requests were not served at the
//     rate asked (one request's worth of slack for the window's edges cutting
//     an arrival). due is the schedule's own count, not Rate × window: a
//     Poisson schedule's count in a window is itself Poisson, with a standard
//     deviation of √(Rate × window) — 7 of 50 in a 0.5-s window at 100 req/s —
//     so against Rate × window a client answering every arrival would "fall
//     behind" in a third of such windows, and since a seed fixes the schedule,
//     in every repeat of that window. For uniform, due is Rate × window, as
//     before.
//   - stalled − 1 > BehindLateShare × responses: the generator could not keep
//     to its own schedule (one send's slack, as above: a single pacer wait
//     overslept on a busy machine does not fail a 70-request window). A send delayed by its busy connection is not counted
//     here: it is the server's queueing, in the open-loop latency from the
//     intended time, where it belongs. Counting it (as load.Result.Late does)
//     failed Poisson windows at every rate above a few percent of capacity,
//     since exponential gaps shorter than the service time are normal there.
//
// A client too slow for the rate still fails under either process: its
// sends lag its own pacer, and its responses fall short of due. Closed loop
// (due 0) never falls behind.
func FellBehind(due, responses, stalled int64) bool {
	if due <= 0 {
		return false
	}
	if float64(responses) < BehindRatio*float64(due)-1 {
		return true
	}
	return responses > 0 && float64(stalled-1) > BehindLateShare*float64(responses)
}

// End records in m how the run ended: the finish time and the status —
// complete, interrupted (runErr is context.Canceled) or failed (runErr
// noted).
func (m *Meta) End(runErr error) {
	m.FinishedUTC = time.Now().UTC().Format(time.RFC3339)
	switch {
	case runErr == nil:
		m.Status = "complete"
	case errors.Is(runErr, context.Canceled):
		m.Status = "interrupted"
	default:
		m.Status = "failed"
		m.Notes = append(m.Notes, "run error: "+runErr.Error())
	}
}

// ReadMeta reads dir/meta.json.
func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(dir + "/" + MetaFile)
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", dir, MetaFile, err)
	}
	return &m, nil
}

// WriteMeta writes dir/meta.json atomically (atomicfile.WriteFile), every
// path in it portable (repopath.Portable: relative to the repository root,
// or $TMPDIR/… and $HOME/… outside it).
func WriteMeta(dir string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(dir+"/"+MetaFile, append(repopath.Portable(b), '\n'))
}

// reserveFile holds space in a run directory so that its final meta.json
// can be written even when the disk fills during the run.
const reserveFile = ".reserve"

// reserveSize is how much Reserve holds.
const reserveSize = 1 << 20

// Reserve writes dir/.reserve of ReserveSize bytes and returns a function
// that removes it (call it just before writing the final meta.json). It
// fails when the directory has less room than that.
func Reserve(dir string) (release func(), err error) {
	path := dir + "/" + reserveFile
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(make([]byte, reserveSize)) // written, not sparse: the blocks are really held
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("reserve %d KiB in %s for the final meta.json: %w", reserveSize>>10, dir, err)
	}
	return func() { os.Remove(path) }, nil
}

// Append adds one record to dir/raw.jsonl and syncs it, so a crash or Ctrl-C
// never loses a finished row. If the write fails (a full disk), the file is
// cut back to its previous length, so no partial line is left. Paths in the
// record (its preflight's module file, error texts) are made portable as in
// WriteMeta.
func Append(dir string, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = repopath.Portable(b)
	path := dir + "/" + RawFile
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() && st.Size() > size {
			f.Truncate(size)
		}
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}

// ReadRecords reads every record of dir/raw.jsonl. A torn last line (a crash
// or a full disk mid-write: no final newline and not valid JSON) is not a
// record; dropped counts such lines (0 or 1). Any other malformed line is an
// error naming it.
func ReadRecords(dir string) (recs []Record, dropped int, err error) {
	b, err := readRaw(dir)
	if err != nil {
		return nil, 0, err
	}
	line := 0
	for len(b) > 0 {
		line++
		l, rest, complete := bytes.Cut(b, []byte{'\n'})
		b = rest
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(l, &r); err != nil {
			if !complete {
				return recs, 1, nil
			}
			return nil, 0, fmt.Errorf("%s/%s line %d: %w", dir, RawFile, line, err)
		}
		recs = append(recs, r)
	}
	return recs, 0, nil
}

// Processor is the CPU a run ran on, read with the CPUID instruction (what
// the engines' libraries dispatch on) and from /proc/cpuinfo (the kernel's
// model name and clock).
type Processor struct {
	Vendor    string  `json:"vendor"` // CPUID vendor string, e.g. AuthenticAMD
	Family    int     `json:"family"`
	Model     int     `json:"model"`
	Stepping  int     `json:"stepping"`
	ModelName string  `json:"model_name"`    // CPUID brand string
	MHz       float64 `json:"mhz,omitempty"` // /proc/cpuinfo "cpu MHz" of CPU 0 when the run started
	// ISA says, for each extension the libraries dispatch on (ISAChecked),
	// whether CPUID reports it usable.
	ISA    map[string]bool `json:"isa"`
	L1dKiB int             `json:"l1d_kib,omitempty"` // 0: not reported
	L2KiB  int             `json:"l2_kib,omitempty"`
	L3KiB  int             `json:"l3_kib,omitempty"`
	// Hypervisor is CPUID's hypervisor-present bit; HypervisorVendor the
	// vendor string of leaf 0x40000000 (e.g. KVMKVMKVM), "" when none.
	Hypervisor       bool   `json:"hypervisor"`
	HypervisorVendor string `json:"hypervisor_vendor,omitempty"`
}

// ISAChecked lists the instruction-set extensions Processor.ISA records, in
// the order reports print them: what libmodsecurity's PCRE2 JIT, glibc's
// string functions, Go's runtime and crypto, and V8 choose code paths by.
var ISAChecked = []string{"sse4_2", "avx", "avx2", "bmi2", "sha_ni", "avx512f", "avx512bw", "avx512vl"}

// Fingerprint is p's identity as one string: vendor, family, model,
// stepping, caches, each checked extension and the hypervisor. Two runs
// with the same fingerprint ran on the same kind of CPU; the clock (MHz)
// is left out, as it varies from boot to boot on one machine.
func (p *Processor) Fingerprint() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s family %d model %d stepping %d; L1d %d KiB, L2 %d KiB, L3 %d KiB; ", p.Vendor, p.Family, p.Model, p.Stepping, p.L1dKiB, p.L2KiB, p.L3KiB)
	var have, lack []string
	for _, x := range ISAChecked {
		if p.ISA[x] {
			have = append(have, x)
		} else {
			lack = append(lack, x)
		}
	}
	fmt.Fprintf(&b, "has %s; lacks %s; ", orDash(strings.Join(have, " ")), orDash(strings.Join(lack, " ")))
	if p.Hypervisor {
		fmt.Fprintf(&b, "hypervisor %s", orDash(p.HypervisorVendor))
	} else {
		b.WriteString("no hypervisor")
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
