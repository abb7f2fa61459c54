package envoyhost

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wafbench/driver/child"
	"wafbench/driver/envoy"
	"wafbench/driver/hosts"
	"wafbench/driver/modes"
)

// sidecarName names the server process in messages and records.
const sidecarName = "wafbench-extproc"

// readyPrefix starts the line the server prints on stdout once it accepts
// requests: `wafbench-extproc ready engine=<engine> listen=<addr> admin=<addr> gomaxprocs=<n>`.
const readyPrefix = sidecarName + " ready "

// sidecarProc is a started wafbench-extproc server.
type sidecarProc struct {
	*hosts.Sidecar
	proc *child.Process
}

// stop sends the server SIGTERM (it stops gracefully) and, after 5 s,
// SIGKILL.
func (s *sidecarProc) stop() { s.proc.Stop(syscall.SIGTERM, 5*time.Second) }

// stats reads the server's counters, in the shape of Envoy's admin
// /stats?format=json.
func (s *sidecarProc) stats(ctx context.Context) ([]byte, error) {
	return hosts.HTTPGet(ctx, "http://"+s.Admin+"/stats?format=json")
}

// startSidecar writes the server's configuration (the filter_config the
// engine's module would receive, from cfg) and starts the server of m,
// pinned where st.Sidecar says, listening on a Unix socket under w.TmpDir
// or on a loopback port; it returns once the server printed its ready
// line. Its stderr and stdout go to w.Dir/extproc-<tag>.log.
func startSidecar(ctx context.Context, m modes.Mode, st hosts.Stack, w hosts.Where, cfg envoy.Config) (*sidecarProc, error) {
	bin := m.ModuleFile()
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("mode %s: %s: %v: run 'make modules'", m, sidecarName, err)
	}
	tr, err := envoy.ParseTransport(st.Sidecar.Transport)
	if err != nil {
		return nil, fmt.Errorf("mode %s: %v", m, err)
	}
	js, err := envoy.SidecarConfig(cfg)
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(w.Dir, "extproc-"+w.Tag+".json")
	if err := os.WriteFile(confPath, js, 0o644); err != nil {
		return nil, err
	}
	listen, admin, err := sidecarAddrs(tr, w.TmpDir)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(w.Dir, "extproc-"+w.Tag+".log")
	cmd := exec.Command(bin, "--engine", m.Engine, "--config", confPath, "--listen", listen, "--admin", admin)
	cpus := st.Sidecar.CPUs
	if cpus == nil {
		cpus = st.CPUs
	}
	spawn := time.Now()
	proc, ready, err := spawnSidecar(cmd, cpus, logPath)
	if err != nil {
		return nil, err
	}
	placement := st.Sidecar.Placement
	if placement == "" {
		placement = "envoy"
	}
	s := &sidecarProc{proc: proc, Sidecar: &hosts.Sidecar{
		Name: sidecarName, PID: proc.PID(), Admin: admin, Listen: listen, LogPath: logPath, CPUs: cpus,
		Placement: placement, Transport: string(tr), FailureModeAllow: st.Sidecar.FailureModeAllow,
		Done: proc.Done(), ExitErr: proc.ExitErr,
	}}
	if err := s.awaitReady(ctx, m, ready, spawn, st.Sidecar.StartTimeout); err != nil {
		return nil, err
	}
	return s, nil
}

// sidecarAddrs picks the server's listen address for transport tr (a Unix
// socket in a new directory under tmpDir, or a free loopback port) and
// its admin address.
func sidecarAddrs(tr envoy.Transport, tmpDir string) (listen, admin string, err error) {
	dir, err := os.MkdirTemp(tmpDir, "extproc-")
	if err != nil {
		return "", "", err
	}
	tcp, err := freeAddr()
	if err != nil {
		return "", "", err
	}
	listen = tr.ListenAddr(filepath.Join(dir, "s.sock"), tcp)
	admin, err = freeAddr()
	if err != nil {
		return "", "", err
	}
	return listen, admin, nil
}

// spawnSidecar starts cmd pinned to cpus, its stderr and stdout appended
// to logPath; ready receives the first ready line its stdout prints.
func spawnSidecar(cmd *exec.Cmd, cpus []int, logPath string) (*child.Process, <-chan string, error) {
	// O_APPEND for the server's stderr and the copier of its stdout alike:
	// neither overwrites the other's lines, and a reader following the
	// file's end (crs-test) sees every one.
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close() // the child and the copier below hold their own
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, logf
	proc, err := child.Start(cmd, cpus)
	pw.Close() // the child has its copy
	if err != nil {
		pr.Close()
		return nil, nil, fmt.Errorf("start %s: %w", sidecarName, err)
	}
	// Copy stdout into the log, watching for the ready line.
	ready := make(chan string, 1)
	copyLog, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		proc.Stop(syscall.SIGKILL, 0)
		pr.Close()
		return nil, nil, err
	}
	go func() {
		defer pr.Close()
		defer copyLog.Close()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			io.WriteString(copyLog, line+"\n")
			if strings.HasPrefix(line, readyPrefix) {
				select {
				case ready <- line:
				default:
				}
			}
		}
	}()
	return proc, ready, nil
}

// awaitReady waits for the server's ready line (spawned at spawn) and
// checks it; on any failure it stops the server and returns an error
// quoting its log's last lines. timeout 0 is
// hosts.DefaultSidecarStartTimeout.
func (s *sidecarProc) awaitReady(ctx context.Context, m modes.Mode, ready <-chan string, spawn time.Time, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = hosts.DefaultSidecarStartTimeout
	}
	fail := func(why string) error {
		s.stop()
		tail, _ := os.ReadFile(s.LogPath)
		return fmt.Errorf("mode %s: %s (pid %d) %s; %s", m, sidecarName, s.PID, why, strings.Join(child.LastLines(string(tail), 5), " | "))
	}
	select {
	case line := <-ready:
		s.ReadyMs = float64(time.Since(spawn).Microseconds()) / 1e3
		n, err := checkReady(line, m.Engine, s.Listen, s.Admin)
		if err != nil {
			return fail(err.Error())
		}
		s.GoMaxProcs = n
	case <-s.proc.Done():
		return fail(fmt.Sprintf("exited before it was ready (%v)", s.proc.ExitErr()))
	case <-ctx.Done():
		return fail("start interrupted")
	case <-time.After(timeout):
		return fail(fmt.Sprintf("printed no ready line within %v", timeout))
	}
	return nil
}

// checkReady checks the server's ready line against what it was asked to
// run and returns the GOMAXPROCS it names: `wafbench-extproc ready
// engine=<engine> listen=<addr> admin=<addr> gomaxprocs=<n>`.
func checkReady(line, engine, listen, admin string) (int, error) {
	got := map[string]string{}
	for _, f := range strings.Fields(strings.TrimPrefix(line, readyPrefix)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			got[k] = v
		}
	}
	if got["engine"] != engine {
		return 0, fmt.Errorf("reports engine %q in its ready line, not %s", got["engine"], engine)
	}
	if got["listen"] == "" || got["admin"] == "" {
		return 0, fmt.Errorf("ready line %q lacks listen= or admin=", line)
	}
	if got["listen"] != listen || got["admin"] != admin {
		return 0, fmt.Errorf("ready line %q: listens elsewhere than asked (listen=%s admin=%s)", line, listen, admin)
	}
	n, err := strconv.Atoi(got["gomaxprocs"])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("ready line %q lacks gomaxprocs= (a server built before it was reported: make modules)", line)
	}
	return n, nil
}

// freeAddr takes a loopback port from the kernel and releases it for the
// server, which is given its ports (a tiny window in which another process
// could take one).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// mergeStats is Envoy's admin /stats?format=json document with the
// server's stats appended to its "stats" list: one document with Envoy's
// counters and the engine's (envoy.ParseStats reads both).
func mergeStats(envoy, server []byte) ([]byte, error) {
	var e, s struct {
		Stats []json.RawMessage `json:"stats"`
	}
	if err := json.Unmarshal(envoy, &e); err != nil {
		return nil, fmt.Errorf("envoy admin /stats: %w", err)
	}
	if err := json.Unmarshal(server, &s); err != nil {
		return nil, fmt.Errorf("%s admin /stats: %w", sidecarName, err)
	}
	e.Stats = append(e.Stats, s.Stats...)
	return json.Marshal(e)
}
