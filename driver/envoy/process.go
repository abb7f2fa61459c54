package envoy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"wafbench/driver/child"
)

// Options says how to run one Envoy process.
type Options struct {
	Binary      string   // Envoy executable (see FindBinary)
	ConfigPath  string   // bootstrap YAML (see WriteYAML)
	WorkDir     string   // holds admin.addr; required
	LogPath     string   // Envoy's stdout+stderr; default WorkDir/envoy.log
	Concurrency int      // worker threads; 0 means 1
	CPUs        []int    // pin every Envoy thread to these CPUs from exec on; nil: no pinning
	Env         []string // KEY=value added to the driver's environment (see Env)
	ExtraArgs   []string // appended to the command line
	// Wrapper, when set, is the command line Envoy runs under (its last
	// word a tool option, e.g. callgrind.Command(out)): the process started,
	// pinned and watched is the wrapper's, which runs Envoy in place
	// (valgrind keeps the PID).
	Wrapper []string

	// StartTimeout bounds spawn→listener ready; 0 means 30s.
	StartTimeout time.Duration
}

// Process is a running Envoy whose admin interface and listener are up.
type Process struct {
	PID           int
	AdminAddr     string // host:port of the admin interface
	ListenerAddr  string // host:port the wafbench listener is bound to
	AdminReady    time.Duration
	ListenerReady time.Duration
	LogPath       string

	proc   *child.Process
	client *http.Client
	stop   sync.Once
	stopE  error
}

// args returns Envoy's command line (without the binary) for o.
//
// Hot restart is disabled, so Envoy creates no shared-memory region and
// needs no --base-id: concurrent Envoys do not collide. The admin address
// is written to WorkDir/admin.addr. Logs go to stderr, which Start sends to
// LogPath together with stdout, so that output from modules and messages
// printed before Envoy's logger exists land in the same file.
func (o Options) args() []string {
	n := o.Concurrency
	if n <= 0 {
		n = 1
	}
	args := []string{
		"-c", o.ConfigPath,
		"--concurrency", strconv.Itoa(n),
		"--disable-hot-restart",
		"--admin-address-path", o.adminAddrPath(),
		"--log-level", "warn",
	}
	// The modules' one-line self-report (engine, version, build), which the
	// driver's preflight reads, is logged at info once per config. Envoy
	// refuses the flag twice, so ExtraArgs may replace it (e.g. at debug).
	if !slices.Contains(o.ExtraArgs, "--component-log-level") {
		args = append(args, "--component-log-level", "dynamic_modules:info,wasm:info")
	}
	return append(args, o.ExtraArgs...)
}

func (o Options) adminAddrPath() string { return filepath.Join(o.WorkDir, "admin.addr") }

func (o Options) logPath() string {
	if o.LogPath != "" {
		return o.LogPath
	}
	return filepath.Join(o.WorkDir, "envoy.log")
}

// Start runs Envoy and waits until its admin interface reports LIVE and its
// listener is bound. Envoy runs in its own process group, is sent SIGKILL if
// the driver thread that started it dies (a backstop; call Stop), and, if
// o.CPUs is set, is pinned before exec. If Envoy exits, the timeout expires
// or ctx ends first, Start kills it and returns an error with the log tail.
func Start(ctx context.Context, o Options) (*Process, error) {
	if o.Binary == "" || o.ConfigPath == "" || o.WorkDir == "" {
		return nil, errors.New("envoy start: Binary, ConfigPath and WorkDir are required")
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("envoy start: %w", err)
	}
	if err := os.Remove(o.adminAddrPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("envoy start: stale admin address file: %w", err)
	}
	logPath := o.logPath()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("envoy start: log: %w", err)
	}
	defer logf.Close() // the child keeps its own descriptor

	argv := append(append(slices.Clip(o.Wrapper), o.Binary), o.args()...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = o.WorkDir
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stdout = logf
	cmd.Stderr = logf

	t0 := time.Now()
	var cpus []int // nil: not pinned
	if len(o.CPUs) > 0 {
		cpus = o.CPUs
	}
	proc, err := child.Start(cmd, cpus)
	if err != nil {
		return nil, fmt.Errorf("envoy start %s: %w", o.Binary, err)
	}
	p := &Process{
		PID:     proc.PID(),
		LogPath: logPath,
		proc:    proc,
		client: &http.Client{
			Timeout:   5 * time.Second,
			Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 2},
		},
	}

	timeout := o.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := p.waitReady(sctx, o.adminAddrPath(), t0); err != nil {
		p.Stop(2 * time.Second)
		if line := wasmLoadFailure(logPath); line != "" {
			return nil, errors.New(line) // one line quoting Envoy (envoy/wasm.go)
		}
		return nil, fmt.Errorf("%w\n%s", err, logTail(logPath, 20))
	}
	return p, nil
}

// waitReady polls until admin /ready says LIVE (AdminReady) and then until
// /listeners shows a bound port (ListenerReady), both measured from t0.
func (p *Process) waitReady(ctx context.Context, addrPath string, t0 time.Time) error {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.proc.Done():
			return fmt.Errorf("envoy (pid %d) exited during startup: %v", p.PID, p.proc.ExitErr())
		case <-ctx.Done():
			stage := "admin /ready LIVE"
			if p.AdminAddr != "" && p.AdminReady > 0 {
				stage = "listener bound"
			}
			return fmt.Errorf("envoy (pid %d) not ready after %v (waiting for %s): %w",
				p.PID, time.Since(t0).Round(time.Millisecond), stage, context.Cause(ctx))
		case <-tick.C:
		}
		if p.AdminReady == 0 {
			if p.AdminAddr == "" {
				b, err := os.ReadFile(addrPath)
				if err != nil || !bytes.Contains(b, []byte(":")) {
					continue
				}
				p.AdminAddr = strings.TrimSpace(string(b))
			}
			body, err := p.admin(ctx, "/ready")
			if err != nil || strings.TrimSpace(string(body)) != "LIVE" {
				continue
			}
			p.AdminReady = time.Since(t0)
		}
		addr, err := p.listenerAddr(ctx)
		if err != nil || addr == "" {
			continue
		}
		p.ListenerAddr = addr
		p.ListenerReady = time.Since(t0)
		return nil
	}
}

// listenerAddr returns the bound address of the listener named
// listenerName, or "" while its port is still 0.
func (p *Process) listenerAddr(ctx context.Context) (string, error) {
	body, err := p.admin(ctx, "/listeners?format=json")
	if err != nil {
		return "", err
	}
	var ls struct {
		ListenerStatuses []struct {
			Name         string `json:"name"`
			LocalAddress struct {
				SocketAddress struct {
					Address   string `json:"address"`
					PortValue int    `json:"port_value"`
				} `json:"socket_address"`
			} `json:"local_address"`
		} `json:"listener_statuses"`
	}
	if err := json.Unmarshal(body, &ls); err != nil {
		return "", fmt.Errorf("admin /listeners: %w", err)
	}
	for _, l := range ls.ListenerStatuses {
		sa := l.LocalAddress.SocketAddress
		if l.Name == listenerName && sa.PortValue != 0 {
			return net.JoinHostPort(sa.Address, strconv.Itoa(sa.PortValue)), nil
		}
	}
	return "", nil
}

// admin GETs path from the admin interface and returns the body of a 200.
func (p *Process) admin(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.AdminAddr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("admin %s: status %d: %s", path, resp.StatusCode, bytes.TrimSpace(body))
	}
	return body, nil
}

// Stats returns the admin /stats?format=json document as Envoy wrote it.
func (p *Process) Stats(ctx context.Context) ([]byte, error) {
	return p.admin(ctx, "/stats?format=json")
}

// serverInfo returns the admin /server_info JSON document as Envoy wrote it.
func (p *Process) serverInfo(ctx context.Context) ([]byte, error) {
	return p.admin(ctx, "/server_info")
}

// Done is closed when the Envoy process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.proc.Done() }

// ExitErr is Envoy's exit status as exec.Cmd.Wait returned it (nil for a
// clean exit). Call it only after Done is closed.
func (p *Process) ExitErr() error { return p.proc.ExitErr() }

// Stop sends SIGTERM to Envoy's process group, waits up to timeout for Envoy
// to exit, then sends SIGKILL to the group and reaps it. It returns nil if
// Envoy exited on SIGTERM (or had already exited cleanly), and an error
// naming the exit status otherwise, with the log tail when Envoy died on its
// own. Calling Stop again returns the first result.
func (p *Process) Stop(timeout time.Duration) error {
	p.stop.Do(func() { p.stopE = p.doStop(timeout) })
	return p.stopE
}

func (p *Process) doStop(timeout time.Duration) error {
	defer p.client.CloseIdleConnections()
	var exitedFirst bool // by itself, before Stop
	select {
	case <-p.proc.Done():
		exitedFirst = true
	default:
	}
	killed := p.proc.Stop(syscall.SIGTERM, timeout) // the group: Envoy and anything it left
	err := p.proc.ExitErr()
	switch {
	case exitedFirst && err != nil:
		return fmt.Errorf("envoy (pid %d) had already exited: %v\n%s", p.PID, err, logTail(p.LogPath, 20))
	case exitedFirst:
		return nil
	case killed:
		return fmt.Errorf("envoy (pid %d) ignored SIGTERM for %v; killed", p.PID, timeout)
	case err != nil && !terminatedBy(err, syscall.SIGTERM):
		return fmt.Errorf("envoy (pid %d) stop: %v", p.PID, err)
	}
	return nil
}

func terminatedBy(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// logTail returns the last n lines of the file at path, indented, or a note
// saying why it could not.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "  (no envoy log: " + err.Error() + ")"
	}
	lines := child.LastLines(string(b), n)
	if len(lines) == 0 {
		return "  (envoy log " + path + " is empty)"
	}
	return "  envoy log " + path + " (last lines):\n    " + strings.Join(lines, "\n    ")
}
