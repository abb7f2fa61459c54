// Package envoyhost is the Envoy host: a fresh Envoy per trial (package
// wafbench/driver/envoy builds its bootstrap and runs the process) whose filter chain
// is the router alone (passthrough), one engine's dynamic module (any build
// of modsecurity or coraza), the Coraza proxy-wasm filter in V8
// (coraza-wasm), or Envoy's ext_proc or ext_authz filter calling the
// wafbench-extproc server, which this host starts first, beside Envoy
// (coraza-extproc, modsecurity-extproc, coraza-extauthz). It owns how a
// mode maps to a filter chain and a module file, the preflight's proof of which module Envoy loaded, and what
// meta.json records of that module.
package envoyhost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"wafbench/driver/builds"
	"wafbench/driver/callgrind"
	"wafbench/driver/downstream"
	"wafbench/driver/envoy"
	"wafbench/driver/hosts"
	"wafbench/driver/internal/host"
	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// Host is the Envoy host.
type Host struct{}

// callgrindTimeout bounds a request's route and filters under valgrind.
const callgrindTimeout = 10 * time.Minute

// Kind is modes.Envoy.
func (Host) Kind() modes.Host { return modes.Envoy }

// Proxy is true.
func (Host) Proxy() bool { return true }

// Downstreams is every protocol: plain HTTP/1.1, TLS termination with
// HTTP/1.1 or HTTP/2, and HTTP/2 with prior knowledge (envoy.Config).
func (Host) Downstreams() []downstream.Protocol { return downstream.Protocols }

// Title is "Envoy".
func (Host) Title() string { return "Envoy" }

// ProcessName is "envoy".
func (Host) ProcessName() string { return "envoy" }

// chain is the filter chain of m: every build of an engine runs its
// engine's module; a mode without an engine runs the router alone.
func chain(m modes.Mode) envoy.Mode {
	switch {
	case m.IsWasm():
		return envoy.CorazaWasm
	case m.Integration() == modes.ExtProc:
		return envoy.ExtProc
	case m.Integration() == modes.ExtAuthz:
		return envoy.ExtAuthz
	case m.Engine != "":
		return envoy.Mode(m.Engine)
	}
	return envoy.Passthrough
}

// moduleFile is the file name of the module m loads (libwafbench_<engine>.so
// or coraza.wasm; "" for passthrough): what --module-dir must hold.
func moduleFile(m modes.Mode) string { return chain(m).ModuleFile() }

// Check reports a WAF mode whose module is not built, or missing from
// --module-dir, and a callgrind run of coraza-wasm.
func (Host) Check(m modes.Mode, st hosts.Stack) error {
	if st.Callgrind != nil && m.IsWasm() {
		return fmt.Errorf("mode %s: --callgrind counts native modules only (V8 under valgrind is not measured here)", m)
	}
	if m.IsExternal() {
		if st.Callgrind != nil {
			return fmt.Errorf("mode %s: --callgrind counts native modules only (not the %s server)", m, sidecarName)
		}
		if _, err := envoy.ParseTransport(st.Sidecar.Transport); err != nil {
			return fmt.Errorf("mode %s: %v", m, err)
		}
		return m.CheckBuilt() // the server is never taken from --module-dir
	}
	if st.ModuleDir != "" && m.Engine != "" {
		so := filepath.Join(st.ModuleDir, moduleFile(m))
		if _, err := os.Stat(so); err != nil {
			return fmt.Errorf("mode %s: module %s not found (--module-dir)", m, so)
		}
		return nil
	}
	return m.CheckBuilt()
}

// Start writes the bootstrap of m into w.Dir and starts a fresh Envoy whose
// admin address file goes to a fresh directory under w.TmpDir. A WAF mode's
// module comes from its build's directory unless st.ModuleDir is set.
func (Host) Start(ctx context.Context, m modes.Mode, st hosts.Stack, w hosts.Where) (*hosts.Process, error) {
	moduleDir := st.ModuleDir
	if moduleDir == "" && (m.Build != nil || m.IsWasm()) {
		moduleDir = m.Dir
	}
	if m.IsExternal() {
		moduleDir = "" // the engine is in the server, not in Envoy
	}
	cfg := envoy.Config{
		Mode:             chain(m),
		UpstreamAddr:     w.UpstreamAddr,
		ModuleSearchPath: moduleDir,
		RulesFile:        st.RulesFile,
		MaxBodyBytes:     1 << 20,
		MatchLog:         st.MatchLog,
		InspectResponse:  st.InspectResponse,
		Downstream:       st.Downstream,
		CertFile:         st.CertFile,
		KeyFile:          st.KeyFile,
	}
	if st.Callgrind != nil {
		cfg.NoFlushTimer = true
		// Valgrind slows Envoy 50-100×: a json_64k request through
		// coraza took over a minute, and Envoy's 15 s route timeout,
		// then its 30 s stream idle timeout (nothing sent or received
		// while the filter works) answered 504 (run --callgrind on
		// json_64k@1).
		cfg.RouteTimeout, cfg.RequestTimeout, cfg.StreamIdleTimeout = callgrindTimeout, callgrindTimeout, callgrindTimeout
		if m.Engine != "" {
			cfg.MeterDir = st.Callgrind.MeterDir
		}
	}
	if !m.IsExternal() {
		return startEnvoy(ctx, m, st, w, cfg)
	}
	// The server first: Envoy's filter fails closed until it listens.
	sc, err := startSidecar(ctx, m, st, w, cfg)
	if err != nil {
		return nil, err
	}
	cfg.Sidecar = &envoy.Sidecar{Listen: sc.Listen, FailureModeAllow: sc.FailureModeAllow}
	p, err := startEnvoy(ctx, m, st, w, cfg)
	if err != nil {
		sc.stop()
		return nil, err
	}
	attachSidecar(p, sc)
	return p, nil
}

// startEnvoy writes cfg into w.Dir and starts a fresh Envoy on it.
func startEnvoy(ctx context.Context, m modes.Mode, st hosts.Stack, w hosts.Where, cfg envoy.Config) (*hosts.Process, error) {
	mode := cfg.Mode
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(w.Dir, "envoy-"+w.Tag+".yaml")
	if err := envoy.WriteYAML(cfg, cfgPath); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(w.TmpDir, "envoy-"+w.Tag+"-")
	if err != nil {
		return nil, err
	}
	var startTimeout time.Duration // envoy.Start's default
	if mode == envoy.CorazaWasm {
		startTimeout = st.WasmStartTimeout
		if startTimeout <= 0 {
			startTimeout = hosts.DefaultWasmStartTimeout
		}
	}
	opts := envoy.Options{
		StartTimeout: startTimeout,
		Binary:       st.BinaryOf(m.Name),
		ConfigPath:   cfgPath,
		WorkDir:      work,
		LogPath:      filepath.Join(w.Dir, "envoy-"+w.Tag+".log"),
		Concurrency:  st.Concurrency,
		CPUs:         st.CPUs,
		Env:          append(envoy.Env(cfg), st.ExtraEnv...),
	}
	stopWait := 5 * time.Second
	var meter *callgrind.Meter
	outFile := filepath.Join(work, "callgrind.out")
	if st.Callgrind != nil {
		opts.Wrapper = callgrind.Command(outFile)
		opts.StartTimeout = st.Callgrind.StartTimeout
		opts.Env = append(opts.Env, callgrind.Env...)
		stopWait = 30 * time.Second // valgrind writes its last dump on exit
		if cfg.MeterDir != "" {
			if meter, err = callgrind.NewMeter(filepath.Join(work, "meter.flag")); err != nil {
				return nil, err
			}
			opts.Env = append(opts.Env, callgrind.MeterFlagEnv+"="+meter.Path())
		}
	}
	e, err := envoy.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	p := hosts.NewProcess(func() { e.Stop(stopWait) })
	if st.Callgrind != nil {
		p.Callgrind, p.Meter = callgrind.Attach(e.PID, outFile), meter
	}
	p.Addr, p.PID, p.Admin, p.Stats, p.Done, p.ExitErr = e.ListenerAddr, e.PID, e.AdminAddr, e.Stats, e.Done(), e.ExitErr
	p.Startup = &result.Startup{AdminReadyMs: ms(e.AdminReady), ListenerReadyMs: ms(e.ListenerReady)}
	// Under valgrind there is no tcmalloc to ask; an unreadable answer
	// stays unknown (nil) rather than failing a trial over a fact.
	if st.Callgrind == nil {
		p.Memory = e.Memory
		if on, err := e.PerCPUCaches(ctx); err == nil {
			p.Startup.TcmallocPerCPU = &on
		}
	}
	p.LogPath, p.ModuleOverride, p.RulesFile = e.LogPath, st.ModuleDir != "", st.RulesFile
	for _, t := range envoy.ClientTimeouts {
		p.Timeouts = append(p.Timeouts, hosts.Timeout(t))
	}
	return p, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// Identify proves that Envoy loaded the module m names: the module's
// self-report in Envoy's log names m's engine, build and version and some
// rules; the file mapped into Envoy (the .wasm V8 read, for coraza-wasm) is
// hashed, and for a build's own module compared with its manifest.
func (Host) Identify(ctx context.Context, m modes.Mode, p *hosts.Process) (*hosts.Identity, error) {
	if m.IsExternal() {
		return identifySidecar(m, p)
	}
	info, err := hosts.ReadModuleInfo(p.LogPath)
	if err != nil {
		return nil, err
	}
	id := &hosts.Identity{Module: info}
	if err := checkIdentity(m, info); err != nil {
		return nil, err
	}
	if m.IsWasm() {
		// Envoy reads the .wasm file into V8; nothing is mapped.
		id.ModulePath = m.ModuleFile()
	} else if id.ModulePath, err = hosts.MappedFile(p.PID, moduleFile(m)); err != nil {
		return nil, err
	}
	if id.ModuleSHA256, err = host.FileSHA256(id.ModulePath); err != nil {
		return nil, err
	}
	if m.Build != nil && !p.ModuleOverride {
		if man, err := builds.ReadManifest(m.Dir); err == nil && man.ModuleSHA256 != "" && man.ModuleSHA256 != id.ModuleSHA256 {
			return nil, fmt.Errorf("loaded module %s has SHA-256 %.12s…, but build %s's manifest says %.12s… — rebuild it ('build/wafbench build %s')",
				id.ModulePath, id.ModuleSHA256, m.Build.Mode(), man.ModuleSHA256, m.Build.Mode())
		}
	}
	return id, nil
}

// identifySidecar proves that the wafbench-extproc server beside Envoy
// runs m's engine: its self-report (the module's line, in the server's
// log) names the engine and some rules, and the executable it runs is
// hashed.
func identifySidecar(m modes.Mode, p *hosts.Process) (*hosts.Identity, error) {
	if p.Sidecar == nil {
		return nil, fmt.Errorf("mode %s: no %s server beside Envoy", m, sidecarName)
	}
	info, err := hosts.ReadModuleInfo(p.Sidecar.LogPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sidecarName, err)
	}
	if err := checkIdentity(m, info); err != nil {
		return nil, fmt.Errorf("%s: %w", sidecarName, err)
	}
	id := &hosts.Identity{Module: info}
	if id.ModulePath, err = os.Readlink(fmt.Sprintf("/proc/%d/exe", p.Sidecar.PID)); err != nil {
		return nil, fmt.Errorf("%s: %w", sidecarName, err)
	}
	if id.ModuleSHA256, err = host.FileSHA256(id.ModulePath); err != nil {
		return nil, err
	}
	return id, nil
}

// checkIdentity compares a module's self-report with the mode it runs as.
// The wafbench-extproc server runs each engine's default build and may
// report it by the engine's name or by the mode's.
func checkIdentity(m modes.Mode, info *result.ModuleInfo) error {
	wantBuild := m.Engine
	if m.Build != nil {
		wantBuild = m.Build.Mode()
	}
	// The Wasm filter (and a server given the mode as its build) reports its
	// mode as its build, without the Envoy release or the rule configuration
	// (`+pl2` names the rules the mode loads, not what was built).
	mode := m.Name.WithConfig("").Unversioned()
	if m.IsWasm() || (m.IsExternal() && info.Build == mode) {
		wantBuild = mode
	}
	switch {
	case info.Engine != m.Engine:
		return fmt.Errorf("the loaded module reports engine %q (build %q), not %s — wrong module file in place?", info.Engine, info.Build, m.Engine)
	case info.Build != wantBuild:
		return fmt.Errorf("the loaded module reports build %q, not %s — rebuild it ('build/wafbench build %s')", info.Build, wantBuild, wantBuild)
	case m.Build != nil && m.Build.Version != "" && strings.TrimPrefix(info.EngineVersion, "v") != strings.TrimPrefix(m.Build.Version, "v"):
		return fmt.Errorf("the loaded module runs %s %s, but build %s declares %s", m.Engine, info.EngineVersion, wantBuild, m.Build.Version)
	case info.Rules <= 0:
		return fmt.Errorf("the loaded module reports %d rules loaded", info.Rules)
	}
	return nil
}

// Describe records the module file m loads (its build's module, the .wasm
// for coraza-wasm, or the same file name under moduleDir), its hash and, for
// Coraza, the coraza/v3 version linked into it.
func (Host) Describe(m modes.Mode, moduleDir string, mod *result.Module, unmeasured *[]string) error {
	mod.Path = m.ModuleFile()
	if m.IsExternal() {
		mod.Engine = m.Engine
		mod.Build = strings.TrimPrefix(mod.Build+"; "+sidecarName+" server beside Envoy, called through "+string(m.Integration())+" over gRPC", "; ")
	} else if moduleDir != "" {
		mod.Path = filepath.Join(moduleDir, moduleFile(m))
		mod.Build += " (module from --module-dir " + moduleDir + ")"
	}
	if m.IsWasm() {
		mod.Engine = m.Engine
		mod.Build = strings.TrimPrefix(mod.Build+"; proxy-wasm filter (GOOS=wasip1), V8", "; ")
	}
	sum, err := host.FileSHA256(mod.Path)
	if err != nil {
		return err
	}
	mod.SHA256 = sum
	if m.Engine == modes.Coraza {
		v, err := corazaVersion(mod.Path)
		if err != nil {
			*unmeasured = append(*unmeasured, fmt.Sprintf("mode %s: engine version: %v", m, err))
		}
		mod.EngineVersion = v
	}
	return nil
}

// attachSidecar makes p, a started Envoy, carry its wafbench-extproc
// server: stopped after Envoy, its counters read with Envoy's.
func attachSidecar(p *hosts.Process, sc *sidecarProc) {
	envoyStats := p.Stats
	p.Sidecar = sc.Sidecar
	p.Stats = func(ctx context.Context) ([]byte, error) {
		eb, err := envoyStats(ctx)
		if err != nil {
			return nil, err
		}
		sb, err := sc.stats(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s admin: %w", sidecarName, err)
		}
		return mergeStats(eb, sb)
	}
	p.StopAlso(sc.stop)
}
