// Package hosts is the one interface behind which every host of a mode runs:
// a fresh Envoy (with or without a WAF module, native or Wasm), nginx with the
// ModSecurity connector, Caddy with wafbench's Coraza handler, or no proxy at
// all. Each host lives in its own package under driver/hosts (envoy, nginx,
// caddy, direct) and owns its start, its preflight identity check, what
// meta.json records of it and its configuration; driver/hosts/all lists them.
// The runner, meta and the CLI ask a Host and never branch on a host's name.
//
// This package also holds what several hosts share: the module self-report
// line, the maps reader that tells which file a process really loaded, and
// the counters reader.
package hosts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"wafbench/driver/callgrind"
	"wafbench/driver/downstream"
	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// Host starts and identifies the processes of the modes one kind of host
// serves (modes.Mode.Host).
type Host interface {
	// Kind is the modes.Host this Host serves.
	Kind() modes.Host
	// ProcessName names the host's process in messages and affinity
	// records ("envoy", "nginx", "caddy", "no proxy").
	ProcessName() string
	// Title is how a sentence names the process ("Envoy"; the others as
	// ProcessName).
	Title() string
	// Proxy reports whether the host runs a process between the client and
	// the upstream (false only when the client talks to the upstream).
	Proxy() bool
	// Downstreams lists the protocols a client may speak to the host
	// (Stack.Downstream); every host serves downstream.H1.
	Downstreams() []downstream.Protocol
	// Check reports what mode m needs on this machine and lacks (software,
	// a module that is not built, a --module-dir without the module), as one
	// message that names the mode and says how to fix it.
	Check(m modes.Mode, st Stack) error
	// Start starts m's host and waits until it accepts connections.
	Start(ctx context.Context, m modes.Mode, st Stack, w Where) (*Process, error)
	// Identify proves, for a WAF mode, that the running host loaded the
	// engine and build m names (the first half of a preflight; the canary
	// requests are the caller's).
	Identify(ctx context.Context, m modes.Mode, p *Process) (*Identity, error)
	// Describe completes what meta.json records of WAF mode m's module
	// (mod holds the build's recipe when m runs one). moduleDir is
	// --module-dir. An error means the module file cannot be read;
	// anything else it cannot measure goes to unmeasured, one line each.
	Describe(m modes.Mode, moduleDir string, mod *result.Module, unmeasured *[]string) error
}

// Stack is what every host of a run shares: the Envoy binary, the worker
// count, where the host runs, where modules and rules come from.
type Stack struct {
	Binary      string // the Envoy executable
	Concurrency int    // Envoy's --concurrency; Caddy's GOMAXPROCS (0 means 1)
	CPUs        []int  // where the host's process runs
	// Releases are the Envoy binaries by release: "" is Binary's, the
	// others those of the modes that name an Envoy release
	// (`passthrough~1.39.3`, run --envoy-versions).
	Releases map[string]Release
	// ModuleDir is --module-dir: every Envoy WAF mode loads its module from
	// here instead of its build's directory.
	ModuleDir string
	RulesFile string   // CRS entry point the engines load
	ExtraEnv  []string // KEY=value added to Envoy's environment
	// MatchLog and InspectResponse are the crs-test settings of the
	// engines (wafbench crs-test): every match logged, responses inspected;
	// off for measured trials.
	MatchLog        bool
	InspectResponse bool
	// WasmStartTimeout bounds the start of a coraza-wasm Envoy, which
	// compiles its whole module in V8 before the listener opens; 0 means
	// DefaultWasmStartTimeout.
	WasmStartTimeout time.Duration
	// Downstream is the protocol clients speak to the host ("" = plain
	// HTTP/1.1), one of its Downstreams; the TLS protocols serve CertFile
	// and KeyFile, the run's certificate (driver/downstream).
	Downstream        downstream.Protocol
	CertFile, KeyFile string
	// Callgrind, when set (run --callgrind), starts Envoy under valgrind's
	// callgrind and a native WAF module behind the meter module found in
	// it (filters/meter). Other hosts refuse it (Check).
	Callgrind *Callgrind
	// Sidecar is how the external modes (ext_proc, ext_authz) run the
	// wafbench-extproc server beside Envoy; other modes ignore it.
	Sidecar SidecarSpec
}

// SidecarSpec is how the wafbench-extproc server of the external modes
// runs. The zero value is the default: on Envoy's CPUs, reached over a
// Unix socket, failing closed.
type SidecarSpec struct {
	// CPUs is where the server runs; nil means Envoy's CPUs (a sidecar
	// sharing Envoy's cores).
	CPUs []int
	// Placement names CPUs as records show it: "envoy" (the default),
	// "own" (CPUs Envoy does not use) or the CPU list given.
	Placement string
	// Transport is "uds" (the default) or "tcp" (loopback).
	Transport string
	// FailureModeAllow lets requests through uninspected when the server
	// fails (the Envoy filters' failure_mode_allow); false fails closed.
	FailureModeAllow bool
	// StartTimeout bounds the server's start to its ready line; 0 means
	// DefaultSidecarStartTimeout.
	StartTimeout time.Duration
}

// DefaultSidecarStartTimeout bounds the wafbench-extproc server's start: it
// loads CRS (about a second idle) before it prints its ready line.
const DefaultSidecarStartTimeout = time.Minute

// Sidecar is a running wafbench-extproc server beside a host's process.
type Sidecar struct {
	Name      string // the process name in messages, "wafbench-extproc"
	PID       int
	Admin     string // its admin endpoint, host:port
	Listen    string // its --listen address (unix:PATH or tcp:HOST:PORT)
	LogPath   string // its stderr and stdout: the module self-report line
	CPUs      []int  // where it was pinned
	Placement string // SidecarSpec.Placement as applied
	Transport string
	// FailureModeAllow is the Envoy filters' setting in this trial.
	FailureModeAllow bool
	GoMaxProcs       int             // the GOMAXPROCS its ready line names
	ReadyMs          float64         // spawn to its ready line, ms
	Done             <-chan struct{} // closed when the server has exited
	ExitErr          func() error    // its exit status, once Done
}

// Release is one Envoy binary of a run.
type Release struct {
	Binary  string `json:"binary"`  // its executable
	Version string `json:"version"` // as `envoy --version` describes it
	SHA256  string `json:"sha256"`  // of Binary
}

// BinaryOf is the Envoy executable mode m runs: its release's, else Binary.
func (st Stack) BinaryOf(m modes.Name) string {
	if r, ok := st.Releases[m.Envoy]; ok && m.Envoy != "" {
		return r.Binary
	}
	return st.Binary
}

// Callgrind is how run --callgrind starts Envoy.
type Callgrind struct {
	MeterDir     string        // holds libwafbench_meter.so
	StartTimeout time.Duration // spawn to listener ready under valgrind
}

// CheckDownstream reports when h cannot serve mode m over protocol p (""
// is plain HTTP/1.1), naming the mode and what it serves.
func CheckDownstream(h Host, m modes.Mode, p downstream.Protocol) error {
	served := h.Downstreams()
	if slices.Contains(served, p.Or()) {
		return nil
	}
	switch {
	case len(served) == 0:
		return fmt.Errorf("%s serves no downstream protocol", m)
	case len(served) == 1 && served[0] == downstream.H1:
		return fmt.Errorf("%s serves plain HTTP/1.1 only", m)
	}
	names := make([]string, len(served))
	for i, s := range served {
		names[i] = string(s)
	}
	return fmt.Errorf("%s serves %s only", m, strings.Join(names, ", "))
}

// DefaultWasmStartTimeout is the start-up bound of a coraza-wasm Envoy:
// V8 takes ~30 s on an idle 2-CPU machine and over 2 min with both CPUs busy.
const DefaultWasmStartTimeout = 180 * time.Second

// Where is where one started host talks to and writes to.
type Where struct {
	UpstreamAddr string // host:port of the benchmark upstream
	Dir          string // the host's configuration and log go here
	TmpDir       string // work files; removed by the caller
	Tag          string // names the configuration and log files
}

// Process is a started host.
type Process struct {
	Addr string // where requests go: the listener, or the upstream for no proxy
	PID  int    // the process sampled and verified; 0 when there is none
	// Admin is the host's admin endpoint (host:port; "" when none).
	Admin   string
	Startup *result.Startup // nil when there is no process
	// Stats reads the host's counters in the shape of Envoy's admin
	// /stats?format=json; nil when the host has none.
	Stats func(context.Context) ([]byte, error)
	// Memory reads the host's allocator statistics in bytes by name (Envoy:
	// admin /memory); nil when the host has none.
	Memory func(context.Context) (map[string]int64, error)
	// Done is closed when the process has exited; nil when not watched.
	Done <-chan struct{}
	// ExitErr is the process's exit status, once Done.
	ExitErr func() error
	// LogPath is the log with the module's self-report line.
	LogPath string
	// GOMAXPROCS is the Go thread budget a Go host was started with; 0 for
	// hosts that are not Go programs.
	GOMAXPROCS int
	// ModuleOverride is set when the module came from --module-dir rather
	// than the mode's build directory (no manifest to compare with).
	ModuleOverride bool
	// RulesFile is the rules entry file the host loads.
	RulesFile string
	// Timeouts are the host's configured timeouts on slow clients (the
	// slow-client suite states them); nil when the host states none.
	Timeouts []Timeout
	// Callgrind is the host's process under callgrind and Meter its WAF
	// module's meter (Stack.Callgrind; Meter nil in passthrough).
	Callgrind *callgrind.Process
	Meter     *callgrind.Meter
	// Sidecar is the wafbench-extproc server of an external mode, started
	// before the host and stopped after it; nil in other modes.
	Sidecar *Sidecar

	stop func()
}

// Timeout is one of a host's timeouts on a slow client: its name in the
// host's configuration, its value, and the counter in Process.Stats that
// counts the requests it ended ("" when none does).
type Timeout struct {
	Name    string
	After   time.Duration
	Counter string
}

// NewProcess is a Process whose Stop calls stop (nil: nothing to stop).
func NewProcess(stop func()) *Process { return &Process{stop: stop} }

// StopAlso makes Stop call after once the host's own process is stopped
// (a second process the host started, such as a sidecar).
func (p *Process) StopAlso(after func()) {
	prev := p.stop
	p.stop = func() {
		if prev != nil {
			prev()
		}
		after()
	}
}

// Stop ends the host's process and reaps it.
func (p *Process) Stop() {
	if p != nil && p.stop != nil {
		p.stop()
	}
}

// Identity is what a preflight proved about the module a host loaded.
type Identity struct {
	Module       *result.ModuleInfo // the module's self-report
	ModulePath   string             // the module file mapped into the host (the executable for Caddy)
	ModuleSHA256 string             // its SHA-256, read at preflight time
	EngineLib    string             // the libmodsecurity mapped into nginx
	GOMAXPROCS   int                // a Go host's own report of its GOMAXPROCS
}

// Record is the identity as a trial record carries it.
func (id *Identity) Record() *result.Preflight {
	if id == nil {
		return nil
	}
	return &result.Preflight{Module: id.Module, ModulePath: id.ModulePath, ModuleSHA256: id.ModuleSHA256,
		EngineLib: id.EngineLib, GOMAXPROCS: id.GOMAXPROCS}
}
