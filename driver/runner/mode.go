package runner

import (
	"context"
	"fmt"
	"os"

	"wafbench/driver/result"
)

// Session is the upstream of a run with nothing measured yet: it starts one
// mode at a time the way a trial does, for callers that send their own
// requests (the request matrix) instead of a workload.
type Session struct {
	cfg *runner
	up  *Upstream
	tmp string
}

// Open starts cfg's upstream, as Run does, with a fresh temporary directory
// for process work files. cfg.Dir must exist: each mode's configuration and
// log are written there, as for a trial.
func Open(ctx context.Context, given *Config) (*Session, error) {
	cfg := &runner{Config: given}
	tmp, err := os.MkdirTemp("", "wafbench-session-")
	if err != nil {
		return nil, err
	}
	up, err := cfg.startUpstream(ctx, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Session{cfg: cfg, up: up, tmp: tmp}, nil
}

// upstreamAddr is the address of the session's upstream.
func (s *Session) upstreamAddr() string { return s.up.Addr }

// Close stops the upstream and removes the temporary directory.
func (s *Session) Close() {
	s.up.Stop()
	os.RemoveAll(s.tmp)
}

// host is one mode started and preflighted by a Session.
type host struct {
	Mode string
	Addr string // where requests go: the proxy's listener, or the upstream for ref-direct
	PID  int    // the proxy process; 0 for ref-direct
	// LogPath is the host's log (Envoy's stdout and stderr, nginx's error log).
	LogPath string
	// Preflight is what the start proved (nil for modes without an engine).
	Preflight *result.Preflight
	p         *proxy
}

// Start starts mode as a trial starts it — a fresh pinned Envoy or reference
// host whose configuration and log go to cfg.Dir under names that carry tag
// — and runs the trial preflight. The error names the mode and the cause.
func (s *Session) Start(ctx context.Context, mode, tag string) (*host, error) {
	if s.up.proc != nil && exited(s.up.proc.Done(), 0) {
		old := s.up
		old.Stop()
		up, err := s.cfg.startUpstream(ctx, s.tmp)
		if err != nil {
			return nil, fmt.Errorf("upstream (pid %d) exited and could not be restarted: %w", old.pid(), err)
		}
		s.up = up
	}
	m, ok := s.cfg.Modes[mode]
	if !ok {
		return nil, fmt.Errorf("mode %s: not resolved in the run's modes", mode)
	}
	h1 := *s.cfg.Config
	h1.Downstream = "" // a session's clients (matrix, crs-test) speak plain HTTP/1.1
	p, err := startProxy(ctx, &runner{Config: &h1}, mode, s.up.Addr, s.tmp, tag)
	if err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", mode, s.cfg.processName(mode), err)
	}
	pf, err := preflight(ctx, m, p, s.cfg.Conformance, client{})
	if err != nil {
		p.Stop()
		removeIfEmpty(p.LogPath)
		return nil, err
	}
	logPath := p.LogPath
	if p.Sidecar != nil {
		logPath = p.Sidecar.LogPath // the engine, and its match lines, are in the server
	}
	return &host{Mode: mode, Addr: p.Addr, PID: p.PID, LogPath: logPath, Preflight: pf.Record(), p: p}, nil
}

// Exited reports whether the host's process, or the wafbench-extproc
// server beside it, has ended (false for hosts whose end the session does
// not watch).
func (h *host) Exited() bool {
	if sc := h.p.Sidecar; sc != nil && exited(sc.Done, 0) {
		return true
	}
	return h.p.Done != nil && exited(h.p.Done, 0)
}

// Stop ends the mode's process (nothing for ref-direct).
func (h *host) Stop() {
	h.p.Stop()
	removeIfEmpty(h.p.LogPath)
}

// startUpstream starts the upstream cfg names, pinned to its CPUs.
func (cfg *Config) startUpstream(ctx context.Context, tmp string) (*Upstream, error) {
	return startUpstreamKind(ctx, cfg.Upstream, cfg.Self, cfg.UpstreamCPU, tmp)
}
