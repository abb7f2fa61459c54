package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"wafbench/driver/child"
	"wafbench/driver/upstream"
	"wafbench/envoy"
)

// Upstream is the loopback upstream server, a child process of its own.
type Upstream struct {
	Addr string
	proc *child.Process
}

// StartUpstream starts `self upstream` pinned to cpus and waits until it
// has written the address it listens on.
func StartUpstream(ctx context.Context, self string, cpus []int, workDir string) (*Upstream, error) {
	return StartUpstreamKind(ctx, upstream.Own, self, cpus, workDir)
}

// StartUpstreamKind starts the upstream of kind k (self is the wafbench
// executable, which serves upstream.Own) pinned to cpus and waits until it
// has written the address it listens on.
func StartUpstreamKind(ctx context.Context, k upstream.Kind, self string, cpus []int, workDir string) (*Upstream, error) {
	addrFile := filepath.Join(workDir, "upstream.addr")
	_ = os.Remove(addrFile)
	root, err := upstreamRoot(k)
	if err != nil {
		return nil, err
	}
	if err := k.Check(root, self); err != nil {
		return nil, err
	}
	cmd := k.Command(root, self, "127.0.0.1:0", addrFile)
	cmd.Stderr = os.Stderr
	proc, err := child.Start(cmd, cpus)
	if err != nil {
		return nil, fmt.Errorf("start upstream: %w", err)
	}
	u := &Upstream{proc: proc}
	err = proc.Poll(ctx, 10*time.Second, 5*time.Millisecond, func() bool {
		b, err := os.ReadFile(addrFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		u.Addr = strings.TrimSpace(string(b))
		return true
	})
	if err != nil {
		u.Stop()
		return nil, fmt.Errorf("upstream did not report its address: %w", err)
	}
	return u, nil
}

// PID is the upstream's process id.
func (u *Upstream) PID() int { return u.proc.PID() }

// Stop ends the upstream's process group and reaps it.
func (u *Upstream) Stop() {
	if u != nil {
		u.proc.Stop(syscall.SIGTERM, 3*time.Second)
	}
}

// EnvoySpec is what a fresh Envoy needs besides its mode.
type EnvoySpec struct {
	Binary      string
	Concurrency int
	CPUs        []int
	ModuleDir   string
	RulesFile   string
	ExtraEnv    []string
	// MatchLog and InspectResponse are the crs-test settings of the
	// modules (wafbench crs-test); off for measured trials.
	MatchLog        bool
	InspectResponse bool
	// WasmStartTimeout bounds the start of a coraza-wasm Envoy, which
	// compiles its whole module in V8 before the listener opens; 0 means
	// DefaultWasmStartTimeout. Other modes keep envoy.Start's default.
	WasmStartTimeout time.Duration
}

// DefaultWasmStartTimeout is the start-up bound of a coraza-wasm Envoy:
// V8 takes ~30 s on an idle 2-CPU machine and over 2 min with both CPUs busy.
const DefaultWasmStartTimeout = 180 * time.Second

// StartEnvoy writes the config for mode into dir and starts a fresh Envoy.
// Envoy's admin address file goes to a fresh directory under tmpDir.
func StartEnvoy(ctx context.Context, spec EnvoySpec, mode envoy.Mode, upstreamAddr, dir, tmpDir, tag string) (*envoy.Process, error) {
	cfg := envoy.Config{
		Mode:             mode,
		UpstreamAddr:     upstreamAddr,
		ModuleSearchPath: spec.ModuleDir,
		RulesFile:        spec.RulesFile,
		MaxBodyBytes:     1 << 20,
		MatchLog:         spec.MatchLog,
		InspectResponse:  spec.InspectResponse,
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "envoy-"+tag+".yaml")
	if err := envoy.WriteYAML(cfg, cfgPath); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(tmpDir, "envoy-"+tag+"-")
	if err != nil {
		return nil, err
	}
	var startTimeout time.Duration // envoy.Start's default
	if mode == envoy.CorazaWasm {
		startTimeout = spec.WasmStartTimeout
		if startTimeout <= 0 {
			startTimeout = DefaultWasmStartTimeout
		}
	}
	p, err := envoy.Start(ctx, envoy.Options{
		StartTimeout: startTimeout,
		Binary:       spec.Binary,
		ConfigPath:   cfgPath,
		WorkDir:      work,
		LogPath:      filepath.Join(dir, "envoy-"+tag+".log"),
		Concurrency:  spec.Concurrency,
		CPUs:         spec.CPUs,
		Env:          append(envoy.Env(cfg), spec.ExtraEnv...),
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}
