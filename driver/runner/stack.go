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
	"wafbench/driver/hosts"
	"wafbench/driver/upstream"
)

// Upstream is the loopback upstream server, a child process of its own.
type Upstream struct {
	Addr string
	proc *child.Process
}

// startUpstream starts `self upstream` pinned to cpus and waits until it
// has written the address it listens on.
func startUpstream(ctx context.Context, self string, cpus []int, workDir string) (*Upstream, error) {
	return startUpstreamKind(ctx, upstream.Own, self, cpus, workDir)
}

// startUpstreamKind starts the upstream of kind k (self is the wafbench
// executable, which serves upstream.Own) pinned to cpus and waits until it
// has written the address it listens on.
func startUpstreamKind(ctx context.Context, k upstream.Kind, self string, cpus []int, workDir string) (*Upstream, error) {
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
	err = proc.Poll(ctx, upstreamStartTimeout, 5*time.Millisecond, func() bool {
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

// upstreamStartTimeout bounds the upstream's start. It catches a hang, not
// slowness: pinned to a CPU that a loaded machine shares, the 50 MB wafbench
// binary took more than 10 s to start and write its address in a fresh-clone
// make test (TestRunDownstream).
const upstreamStartTimeout = time.Minute

// pid is the upstream's process id.
func (u *Upstream) pid() int { return u.proc.PID() }

// Stop ends the upstream's process group and reaps it.
func (u *Upstream) Stop() {
	if u != nil {
		u.proc.Stop(syscall.SIGTERM, 3*time.Second)
	}
}

// EnvoySpec is what every host of a run shares (hosts.Stack; the name is
// from when only Envoy ran).
type EnvoySpec = hosts.Stack

// DefaultWasmStartTimeout is the start-up bound of a coraza-wasm Envoy
// (hosts.DefaultWasmStartTimeout).
const DefaultWasmStartTimeout = hosts.DefaultWasmStartTimeout
