//go:build integration

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"wafbench/driver/child"
	"wafbench/driver/envoy"
	"wafbench/driver/upstream"
	"wafbench/internal/crs"
)

// These tests run the real server binary (build/extproc/wafbench-extproc,
// from make -C filters/extproc), the real Envoy 1.40 (.venv) with
// envoy.filters.http.ext_proc or envoy.filters.http.ext_authz in front of an
// in-process upstream, over the real CRS 4.25.0 files, for both engines and
// both transports (a unix socket and loopback TCP).

const setupHint = "from the repository root run ./scripts/setup.sh (installs Envoy 1.40 into .venv), " +
	"then make -C filters/extproc (builds build/extproc/wafbench-extproc)"

// fx is the fixture shared by every test: one CRS export, one upstream.
var fx struct {
	once    sync.Once
	err     error
	tmp     string
	server  string // the server binary
	envoy   string // the Envoy binary
	config  string // the filter_config file both engines take
	up      *upstream.Server
	upPort  int
	upClose context.CancelFunc
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fx.upClose != nil {
		fx.upClose()
	}
	if fx.tmp != "" {
		os.RemoveAll(fx.tmp)
	}
	os.Exit(code)
}

func fixture(t *testing.T) {
	t.Helper()
	fx.once.Do(func() { fx.err = setupFixture() })
	if fx.err != nil {
		t.Fatalf("fixture: %v", fx.err)
	}
}

func setupFixture() error {
	root, err := envoy.RepoRoot()
	if err != nil {
		return err
	}
	fx.server = filepath.Join(root, "build", "extproc", "wafbench-extproc")
	if _, err := os.Stat(fx.server); err != nil {
		return fmt.Errorf("no server binary: %v; %s", err, setupHint)
	}
	if fx.envoy, err = envoy.FindBinary(""); err != nil {
		return fmt.Errorf("%v; %s", err, setupHint)
	}
	// Short: a unix socket path must fit in 108 bytes.
	if fx.tmp, err = os.MkdirTemp("", "wbx-"); err != nil {
		return err
	}
	man, err := crs.Export(filepath.Join(fx.tmp, "crs"), crs.Options{})
	if err != nil {
		return fmt.Errorf("crs export: %w", err)
	}
	fx.config = filepath.Join(fx.tmp, "filter.json")
	cfg := fmt.Sprintf(`{"rules_file":%q,"inspect_response":false,"max_body_bytes":1048576}`, man.MainConf)
	if err := os.WriteFile(fx.config, []byte(cfg), 0o644); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fx.upPort = ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithCancel(context.Background())
	fx.up, fx.upClose = new(upstream.Server), cancel
	go fx.up.Serve(ctx, ln)
	return nil
}

// wafServer is one running wafbench-extproc.
type wafServer struct {
	proc   *child.Process
	listen string // as the ready line gives it: unix:PATH or tcp:HOST:PORT
	admin  string
	stderr string // file with the server's stderr
}

// startServer runs the server for engine on transport ("unix" or "tcp")
// and waits for its ready line.
func startServer(t *testing.T, engine, transport, name string) *wafServer {
	t.Helper()
	dir := filepath.Join(fx.tmp, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	listen := "tcp:127.0.0.1:0"
	if transport == "unix" {
		listen = "unix:" + filepath.Join(dir, "waf.sock")
	}
	s := &wafServer{stderr: filepath.Join(dir, "server.log")}
	logf, err := os.Create(s.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(fx.server, "--engine", engine, "--config", fx.config, "--listen", listen, "--admin", "127.0.0.1:0")
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if s.proc, err = child.Start(cmd, nil); err != nil {
		t.Fatalf("start %s: %v", fx.server, err)
	}
	t.Cleanup(func() { s.proc.Stop(syscall.SIGTERM, 10*time.Second) })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		f := readyFields(t, line)
		if f["engine"] != engine {
			t.Fatalf("ready line %q: want engine=%s", line, engine)
		}
		if n, err := strconv.Atoi(f["gomaxprocs"]); err != nil || n < 1 {
			t.Fatalf("ready line %q: want gomaxprocs= a positive count", line)
		}
		s.listen, s.admin = f["listen"], f["admin"]
	case <-s.proc.Done():
		t.Fatalf("server exited before its ready line: %v\n%s", s.proc.ExitErr(), readFile(t, s.stderr))
	case <-time.After(3 * time.Minute):
		t.Fatalf("no ready line within 3m\n%s", readFile(t, s.stderr))
	}
	return s
}

// readyFields parses "wafbench-extproc ready engine=E listen=L admin=A gomaxprocs=N".
func readyFields(t *testing.T, line string) map[string]string {
	t.Helper()
	words := strings.Fields(line)
	if len(words) != 6 || words[0] != "wafbench-extproc" || words[1] != "ready" {
		t.Fatalf("ready line %q: want `wafbench-extproc ready engine=… listen=… admin=… gomaxprocs=…`", line)
	}
	out := map[string]string{}
	for _, w := range words[2:] {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			t.Fatalf("ready line %q: word %q is not key=value", line, w)
		}
		out[k] = v
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}

// startEnvoy runs Envoy with filter ("ext_proc" or "ext_authz") calling s;
// ext_proc sends the response headers.
func startEnvoy(t *testing.T, s *wafServer, filter, name string) *envoy.Process {
	t.Helper()
	return startEnvoyMode(t, s, filter, name, "SEND")
}

// startEnvoyMode is startEnvoy with ext_proc's response_header_mode.
func startEnvoyMode(t *testing.T, s *wafServer, filter, name, responseHeaderMode string) *envoy.Process {
	t.Helper()
	dir := filepath.Join(fx.tmp, name)
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "envoy.yaml.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	data := struct {
		Filter             string
		ResponseHeaderMode string
		UpstreamPort       int
		WAFSocket          string
		WAFPort            int
	}{Filter: filter, ResponseHeaderMode: responseHeaderMode, UpstreamPort: fx.upPort}
	if path, ok := strings.CutPrefix(s.listen, "unix:"); ok {
		data.WAFSocket = path
	} else {
		_, port, err := net.SplitHostPort(strings.TrimPrefix(s.listen, "tcp:"))
		if err != nil {
			t.Fatalf("listen %q: %v", s.listen, err)
		}
		data.WAFPort, _ = strconv.Atoi(port)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "envoy.yaml")
	f, err := os.Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.Execute(f, data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := envoy.Start(ctx, envoy.Options{Binary: fx.envoy, ConfigPath: cfg, WorkDir: dir, StartTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatalf("envoy: %v; %s", err, setupHint)
	}
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Errorf("envoy stop: %v", err)
		}
	})
	return p
}

// counters reads the server's admin /stats?format=json.
func counters(t *testing.T, s *wafServer) map[string]int64 {
	t.Helper()
	resp, err := http.Get("http://" + s.admin + "/stats?format=json")
	if err != nil {
		t.Fatalf("admin /stats: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("admin /stats: status %d, %v: %s", resp.StatusCode, err, b)
	}
	st, err := envoy.ParseStats(b)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var client = &http.Client{Timeout: 60 * time.Second}

// send sends one request through Envoy and returns the status and body.
func send(t *testing.T, p *envoy.Process, method, target, body string, hdr map[string]string) (int, string) {
	t.Helper()
	st, b := sendE(p, method, target, body, hdr)
	if st < 0 {
		t.Fatalf("%s %s: %s", method, target, b)
	}
	return st, b
}

// wantBody is the body of the engine's block, as its module sends it.
var wantBody = map[string]string{
	"coraza":      "Request blocked by wafbench coraza\n",
	"modsecurity": "Request blocked by wafbench modsecurity filter\n",
}

// TestEnforces: a benign GET and POST pass, a SQL injection in the query
// (phase 2 of a request without body), in a form body (phase 2 after the
// buffered body) and the phase-1 block header are answered 403 with the
// module's body and never reach the upstream; the counters move.
func TestEnforces(t *testing.T) {
	fixture(t)
	for _, engine := range []string{"coraza", "modsecurity"} {
		for _, transport := range []string{"unix", "tcp"} {
			t.Run(engine+"/"+transport, func(t *testing.T) {
				name := engine + "-" + transport
				s := startServer(t, engine, transport, name)
				report := readFile(t, s.stderr)
				want := fmt.Sprintf(`wafbench-module {"module":"wafbench_extproc","engine":%q,`, engine)
				if !strings.Contains(report, want) {
					t.Errorf("server stderr lacks the self-report %q…:\n%s", want, report)
				}
				for _, filter := range []string{"ext_proc", "ext_authz"} {
					t.Run(filter, func(t *testing.T) {
						p := startEnvoy(t, s, filter, name+"-"+filter)
						checkEnforces(t, s, p, engine)
					})
				}
			})
		}
	}
}

func checkEnforces(t *testing.T, s *wafServer, p *envoy.Process, engine string) {
	prefix := "wafbench_" + engine + "_"
	before := counters(t, s)
	up0 := fx.up.Stats().Requests

	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	cases := []struct {
		name, method, target, body string
		hdr                        map[string]string
		want                       int
	}{
		{"benign GET", "GET", "/index.html?page=2&sort=name", "", nil, 200},
		{"benign POST", "POST", "/search", "q=blue+shoes&size=42", form, 200},
		{"SQLi in the query", "GET", "/items?id=1%27%20OR%20%271%27%3D%271", "", nil, 403},
		{"SQLi in the body", "POST", "/login", "user=admin&pass=x%27%20OR%201%3D1--%20", form, 403},
		{"phase-1 block header", "GET", "/", "", map[string]string{"X-WAF-Benchmark": "phase1-block"}, 403},
	}
	for _, c := range cases {
		got, body := send(t, p, c.method, c.target, c.body, c.hdr)
		if got != c.want {
			t.Errorf("%s: status %d, want %d (body %q)", c.name, got, c.want, body)
			continue
		}
		if c.want == 403 && body != wantBody[engine] {
			t.Errorf("%s: body %q, want the module's %q", c.name, body, wantBody[engine])
		}
	}
	if got := fx.up.Stats().Requests - up0; got != 2 {
		t.Errorf("upstream answered %d requests, want the 2 benign ones", got)
	}
	after := counters(t, s)
	for _, c := range []struct {
		name string
		want int64
	}{{"requests", 5}, {"blocked_phase1", 1}, {"blocked_phase2", 2}, {"engine_errors", 0}, {"body_too_large", 0}} {
		if got := after[prefix+c.name] - before[prefix+c.name]; got != c.want {
			t.Errorf("counter %s%s moved by %d, want %d", prefix, c.name, got, c.want)
		}
	}
}

// TestBodyTooLarge: past max_body_bytes the server, not Envoy, answers 413
// through ext_proc (Envoy buffers a little more than the limit), counted in
// body_too_large.
func TestBodyTooLarge(t *testing.T) {
	fixture(t)
	s := startServer(t, "coraza", "unix", "coraza-large")
	p := startEnvoy(t, s, "ext_proc", "coraza-large-ext_proc")
	before := counters(t, s)
	body := "a=" + strings.Repeat("x", 1<<20)
	got, _ := send(t, p, "POST", "/upload", body, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if got != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", got)
	}
	if d := counters(t, s)["wafbench_coraza_body_too_large"] - before["wafbench_coraza_body_too_large"]; d != 1 {
		t.Errorf("wafbench_coraza_body_too_large moved by %d, want 1", d)
	}
}

// TestFailsClosed: with the server killed, Envoy answers every request 5xx
// through both filters (failure_mode_allow false), never 200.
func TestFailsClosed(t *testing.T) {
	fixture(t)
	for _, transport := range []string{"unix", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			name := "closed-" + transport
			s := startServer(t, "coraza", transport, name)
			procs := map[string]*envoy.Process{}
			for _, filter := range []string{"ext_proc", "ext_authz"} {
				procs[filter] = startEnvoy(t, s, filter, name+"-"+filter)
				if got, body := send(t, procs[filter], "GET", "/", "", nil); got != 200 {
					t.Fatalf("%s before the kill: status %d, want 200 (%q)", filter, got, body)
				}
			}
			if err := syscall.Kill(s.proc.PID(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-s.proc.Done()
			for filter, p := range procs {
				for i := range 3 {
					got, body := send(t, p, "GET", fmt.Sprintf("/after-kill/%d", i), "", nil)
					t.Logf("%s with the server dead: %d %q", filter, got, body)
					if got < 500 || got > 599 {
						t.Errorf("%s with the server dead: status %d, want 5xx (%q)", filter, got, body)
					}
				}
			}
		})
	}
}

// TestStopsOnSignal: SIGTERM stops the server with exit 0 and /ready says
// LIVE before.
func TestStopsOnSignal(t *testing.T) {
	fixture(t)
	s := startServer(t, "modsecurity", "unix", "sigterm")
	resp, err := http.Get("http://" + s.admin + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != "LIVE" {
		t.Errorf("/ready: %d %q, want 200 LIVE", resp.StatusCode, b)
	}
	if killed := s.proc.Stop(syscall.SIGTERM, 20*time.Second); killed {
		t.Fatal("server ignored SIGTERM for 20s")
	}
	if err := s.proc.ExitErr(); err != nil {
		t.Errorf("exit after SIGTERM: %v, want 0\n%s", err, readFile(t, s.stderr))
	}
	if _, err := os.Stat(strings.TrimPrefix(s.listen, "unix:")); !os.IsNotExist(err) {
		t.Errorf("socket %s left behind (%v)", s.listen, err)
	}
}

// TestRefusesBadConfig: a configuration the engine refuses is one line
// with the engine's message and exit 2.
func TestRefusesBadConfig(t *testing.T) {
	fixture(t)
	bad := filepath.Join(fx.tmp, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"rules_file":"/nonexistent/main.conf"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"coraza", "modsecurity"} {
		cmd := exec.Command(fx.server, "--engine", engine, "--config", bad, "--listen", "tcp:127.0.0.1:0", "--admin", "127.0.0.1:0")
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Errorf("%s: exit %v, want 2 (%s)", engine, err, out)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "/nonexistent/main.conf") {
			t.Errorf("%s: output %q, want one line naming the rules file", engine, out)
		}
	}
}

// TestConcurrentStreams: requests of several connections at once, benign
// and attacks interleaved, through both filters and both engines: every
// answer is the right one and the counters add up exactly (one engine
// shared by all gRPC streams and calls). Bounded: 4 connections × 20
// requests per Envoy.
func TestConcurrentStreams(t *testing.T) {
	fixture(t)
	const conns, perConn = 4, 20
	for _, engine := range []string{"coraza", "modsecurity"} {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, engine, "unix", "conc-"+engine)
			for _, filter := range []string{"ext_proc", "ext_authz"} {
				p := startEnvoy(t, s, filter, "conc-"+engine+"-"+filter)
				before := counters(t, s)
				form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
				var wg sync.WaitGroup
				errs := make(chan string, conns*perConn)
				for c := range conns {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range perConn {
							attack := (c+i)%2 == 1
							body, want := fmt.Sprintf("q=shoes&n=%d", i), 200
							if attack {
								body, want = fmt.Sprintf("q=1%%27%%20OR%%20%%27%d%%27%%3D%%27%d", i, i), 403
							}
							got, _ := sendE(p, "POST", fmt.Sprintf("/c%d/r%d", c, i), body, form)
							if got != want {
								errs <- fmt.Sprintf("conn %d req %d (attack %v): status %d, want %d", c, i, attack, got, want)
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for e := range errs {
					t.Errorf("%s: %s", filter, e)
				}
				after := counters(t, s)
				prefix := "wafbench_" + engine + "_"
				if d := after[prefix+"requests"] - before[prefix+"requests"]; d != conns*perConn {
					t.Errorf("%s: requests moved by %d, want %d", filter, d, conns*perConn)
				}
				if d := after[prefix+"blocked_phase2"] - before[prefix+"blocked_phase2"]; d != conns*perConn/2 {
					t.Errorf("%s: blocked_phase2 moved by %d, want %d", filter, d, conns*perConn/2)
				}
			}
		})
	}
}

// sendE is send for goroutines: a failure is status -1 and its message.
// Every request carries the headers a benign client sends (without them
// CRS's anomaly score rises).
func sendE(p *envoy.Process, method, target, body string, hdr map[string]string) (int, string) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://"+p.ListenerAddr+target, rd)
	if err != nil {
		return -1, err.Error()
	}
	req.Header.Set("User-Agent", "wafbench-extproc-test/1.0")
	req.Header.Set("Accept", "text/html,application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
