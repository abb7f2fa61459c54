package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"wafbench/driver/cpu"
	"wafbench/envoy"
)

// Upstream is the loopback upstream server, a child process of its own.
type Upstream struct {
	Addr string
	cmd  *exec.Cmd
	done chan error
}

// StartUpstream starts `self upstream` pinned to cpus and waits until it
// has written the address it listens on.
func StartUpstream(ctx context.Context, self string, cpus []int, workDir string) (*Upstream, error) {
	addrFile := filepath.Join(workDir, "upstream.addr")
	_ = os.Remove(addrFile)
	cmd := exec.Command(self, "upstream", "--listen", "127.0.0.1:0", "--addr-file", addrFile)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cpu.StartPinned(cmd, cpus); err != nil {
		return nil, fmt.Errorf("start upstream: %w", err)
	}
	u := &Upstream{cmd: cmd, done: make(chan error, 1)}
	go func() { u.done <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(b), "\n") {
			u.Addr = strings.TrimSpace(string(b))
			return u, nil
		}
		select {
		case err := <-u.done:
			return nil, fmt.Errorf("upstream exited before listening: %v", err)
		case <-ctx.Done():
			u.Stop()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			u.Stop()
			return nil, errors.New("upstream did not report its address within 10s")
		}
	}
}

// PID is the upstream's process id.
func (u *Upstream) PID() int { return u.cmd.Process.Pid }

// Stop ends the upstream's process group and reaps it.
func (u *Upstream) Stop() {
	if u == nil || u.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-u.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-u.done:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-u.cmd.Process.Pid, syscall.SIGKILL)
		<-u.done
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
}

// StartEnvoy writes the config for mode into dir and starts a fresh Envoy.
// Envoy's admin address file goes to a fresh directory under tmpDir.
func StartEnvoy(ctx context.Context, spec EnvoySpec, mode envoy.Mode, upstreamAddr, dir, tmpDir, tag string) (*envoy.Process, error) {
	cfg := envoy.Config{
		Mode:             mode,
		UpstreamAddr:     upstreamAddr,
		ModuleSearchPath: spec.ModuleDir,
		RulesFile:        spec.RulesFile,
		MaxBodyBytes:     1 << 20,
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
	p, err := envoy.Start(ctx, envoy.Options{
		Binary:      spec.Binary,
		ConfigPath:  cfgPath,
		WorkDir:     work,
		LogPath:     filepath.Join(dir, "envoy-"+tag+".log"),
		Concurrency: spec.Concurrency,
		CPUs:        spec.CPUs,
		Env:         append(envoy.Env(cfg), spec.ExtraEnv...),
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}
