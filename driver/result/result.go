// Package result defines the records wafbench writes to disk: one Record per
// trial × workload in raw.jsonl, and one Meta per run in meta.json. Everything
// downstream (summary, report, charts, merge) is rebuilt from these files.
package result

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// File names inside a run directory.
const (
	MetaFile = "meta.json"
	RawFile  = "raw.jsonl"
)

// Record is one measured workload within one trial. Units are in field names.
type Record struct {
	Trial    int    `json:"trial"`    // 1-based index of the Envoy process (mode × repeat)
	Repeat   int    `json:"repeat"`   // 1-based repeat (block) number
	Position int    `json:"position"` // 1-based position of the mode inside its repeat
	Mode     string `json:"mode"`     // passthrough | modsecurity | coraza | ref-*
	Workload string `json:"workload"` // profile workload name, e.g. "headers"
	Conns    int    `json:"conns"`    // persistent connections held by the client
	Load     string `json:"load"`     // "closed" or "open"

	RateRequestedPerS float64 `json:"rate_requested_per_s"` // 0 for closed loop
	RateAchievedPerS  float64 `json:"rate_achieved_per_s"`
	WarmupS           float64 `json:"warmup_s"`
	DurationS         float64 `json:"duration_s"` // measured window actually elapsed
	Interrupted       bool    `json:"interrupted,omitempty"`

	ExpectStatus int              `json:"expect_status"`
	Requests     int64            `json:"requests"`           // completed and valid in the window
	Errors       map[string]int64 `json:"errors,omitempty"`   // by kind: status, connect, read, timeout…
	Statuses     map[string]int64 `json:"statuses,omitempty"` // observed status codes in the window
	ReqPerS      float64          `json:"req_per_s"`

	Latency    Latency `json:"latency"`
	HistBase64 string  `json:"hist_b64,omitempty"` // hdrhistogram-go encoded histogram (µs)
	PerSecond  []int64 `json:"per_second"`         // completions in each second of the window

	CPU       CPU              `json:"envoy_cpu"`
	Memory    Memory           `json:"envoy_memory"`
	Startup   *Startup         `json:"envoy_startup,omitempty"` // set on the first workload of a trial
	Affinity  []ThreadAffinity `json:"affinity_observed,omitempty"`
	StatsFile string           `json:"stats_file,omitempty"` // relative path of the admin /stats dump
	PerfFile  string           `json:"perf_file,omitempty"`  // relative path of perf.data (run --perf); its flat report is beside it as .txt
	Error     string           `json:"error,omitempty"`      // why the trial failed, if it did
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

	GitSHA       string `json:"git_sha"`
	GitDirty     bool   `json:"git_dirty"`
	GoVersion    string `json:"go_version"`
	Kernel       string `json:"kernel"`
	Arch         string `json:"arch"` // GOARCH of the driver
	CPUModel     string `json:"cpu_model"`
	NumCPU       int    `json:"num_cpu"`
	Governor     string `json:"governor"`
	SMT          string `json:"smt"`
	EnvoyPath    string `json:"envoy_path"`
	EnvoyVersion string `json:"envoy_version"`
	EnvoySHA256  string `json:"envoy_sha256"`
	Concurrency  int    `json:"envoy_concurrency"`

	EnvoyCPUs    []int `json:"envoy_cpus"`
	ClientCPUs   []int `json:"client_cpus"`
	UpstreamCPUs []int `json:"upstream_cpus"`

	Modules map[string]Module `json:"modules,omitempty"` // by mode
	CRS     *CRS              `json:"crs,omitempty"`
	Notes   []string          `json:"notes,omitempty"`
}

// Module identifies a WAF dynamic module and the engine inside it.
type Module struct {
	Path          string `json:"path"`
	SHA256        string `json:"sha256"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Build         string `json:"build"` // compiler and flags
}

// CRS identifies the rule set both engines evaluated.
type CRS struct {
	Version     string            `json:"version"`
	Dir         string            `json:"dir"`
	SHA256      string            `json:"sha256"` // over all files, sorted by name
	RuleFiles   int               `json:"rule_files"`
	Files       map[string]string `json:"files"` // name -> sha256
	Adaptations []string          `json:"adaptations"`
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

// WriteMeta writes dir/meta.json atomically (temp file + rename).
func WriteMeta(dir string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := dir + "/" + MetaFile + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dir+"/"+MetaFile)
}

// Append adds one record to dir/raw.jsonl and syncs it, so a crash or Ctrl-C
// never loses a finished row.
func Append(dir string, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dir+"/"+RawFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadRecords reads every record of dir/raw.jsonl. A torn last line (a crash
// mid-write) is skipped; any other malformed line is an error naming it.
func ReadRecords(dir string) ([]Record, error) {
	f, err := os.Open(dir + "/" + RawFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	var pending error
	for sc.Scan() {
		line++
		if pending != nil {
			return nil, pending
		}
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			pending = fmt.Errorf("%s/%s line %d: %w", dir, RawFile, line, err)
			continue
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
