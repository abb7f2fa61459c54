//go:build integration

package envoyhost

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wafbench/driver/envoy"
	"wafbench/driver/hosts"
	"wafbench/driver/modes"
	"wafbench/driver/upstream/upstreamtest"
)

// externalStack is a stack running the real Envoy and the real CRS export,
// and the mode named, resolved against the real build file; the test fails
// saying how to build what is missing.
func externalStack(t *testing.T, name, transport string) (modes.Mode, hosts.Stack) {
	t.Helper()
	root, err := envoy.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := envoy.FindBinary("")
	if err != nil {
		t.Fatalf("%v: run ./scripts/setup.sh", err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := reg.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckBuilt(); err != nil {
		t.Fatalf("%v (filters/extproc builds the wafbench-extproc server)", err)
	}
	rules := filepath.Join(root, "build", "crs", "main.conf")
	if _, err := os.Stat(rules); err != nil {
		t.Fatalf("CRS export: %v: run 'make' (it exports CRS into build/crs)", err)
	}
	return m, hosts.Stack{Binary: bin, Concurrency: 1, RulesFile: rules,
		Sidecar: hosts.SidecarSpec{Transport: transport}}
}

// startExternal starts mode m's Envoy and server in front of a test
// upstream that answers 200 to everything.
func startExternal(t *testing.T, m modes.Mode, st hosts.Stack) *hosts.Process {
	t.Helper()
	_, up := upstreamtest.Start(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := Host{}.Start(ctx, m, st, hosts.Where{UpstreamAddr: up, Dir: dir, TmpDir: dir, Tag: "t"})
	if err != nil {
		t.Fatalf("start %s: %v", m, err)
	}
	t.Cleanup(p.Stop)
	return p
}

// send sends one HTTP/1.1 request to addr and returns its status.
func send(t *testing.T, addr, method, target string, header map[string]string, body string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: bench.local\r\nUser-Agent: wafbench-test/1.0\r\nAccept: */*\r\n", method, target)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	if body != "" || method == "POST" {
		fmt.Fprintf(&b, "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("Connection: close\r\n\r\n" + body)
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestExternalModesEnforce runs each external mode, over a Unix socket and
// over loopback TCP, through the real Envoy and the real wafbench-extproc
// server on CRS: a benign GET passes, an SQL injection in the query and in
// a form body and the phase-1 block header are denied, the server's
// counters (read with Envoy's) move, its self-report names the engine and
// the process proved is the server the mode names.
func TestExternalModesEnforce(t *testing.T) {
	for _, tt := range []struct{ mode, transport string }{
		{modes.CorazaExtProc, "uds"},
		{modes.CorazaExtProc, "tcp"},
		{modes.CorazaExtAuthz, "uds"},
		{modes.CorazaExtAuthz, "tcp"},
		{modes.ModSecurityExtProc, "uds"},
	} {
		t.Run(tt.mode+"/"+tt.transport, func(t *testing.T) {
			m, st := externalStack(t, tt.mode, tt.transport)
			p := startExternal(t, m, st)
			if p.Sidecar == nil || p.Sidecar.Transport != tt.transport || !strings.HasPrefix(p.Sidecar.Listen, map[string]string{"uds": "unix:", "tcp": "tcp:"}[tt.transport]) {
				t.Fatalf("sidecar = %+v, want one listening over %s", p.Sidecar, tt.transport)
			}
			ctx := context.Background()
			id, err := Host{}.Identify(ctx, m, p)
			if err != nil {
				t.Fatalf("Identify: %v", err)
			}
			if id.Module.Engine != m.Engine || id.Module.Rules < 100 || id.ModuleSHA256 == "" || filepath.Base(id.ModulePath) != "wafbench-extproc" {
				t.Errorf("identity = %+v %+v, want engine %s, CRS's rules, the server's executable hashed", id, id.Module, m.Engine)
			}
			before, err := hosts.ModuleCounters(ctx, p.Stats, m.Engine)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name, method, target string
				header               map[string]string
				body                 string
				want                 int
			}{
				{"benign", "GET", "/get?q=hello", nil, "", 200},
				{"benign form", "POST", "/post", nil, "name=alice&city=paris", 200},
				{"sqli query", "GET", "/get?id=1%27%20OR%20%271%27%3D%271", nil, "", 403},
				{"sqli body", "POST", "/post", nil, "id=1%27%20OR%20%271%27%3D%271", 403},
				{"phase-1 header", "GET", "/get", map[string]string{envoy.BlockHeader: envoy.BlockValue}, "", 403},
				// Over the engine's 1 MiB body limit: 413, as the module answers.
				{"body over the limit", "POST", "/post", nil, "a=" + strings.Repeat("b", 1<<20), 413},
			} {
				if got := send(t, p.Addr, c.method, c.target, c.header, c.body); got != c.want {
					t.Errorf("%s: status %d, want %d", c.name, got, c.want)
				}
			}
			after, err := hosts.ModuleCounters(ctx, p.Stats, m.Engine)
			if err != nil {
				t.Fatal(err)
			}
			prefix := "wafbench_" + m.Engine + "_"
			if d := after[prefix+"requests"] - before[prefix+"requests"]; d < 5 {
				t.Errorf("%srequests moved by %d over 6 requests", prefix, d)
			}
			// The merged document still holds Envoy's own counters.
			b, err := p.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all, err := envoy.ParseStats(b)
			if err != nil {
				t.Fatal(err)
			}
			if all["http."+envoy.StatPrefix+".downstream_rq_total"] < 5 {
				t.Errorf("merged stats lack Envoy's http.%s.downstream_rq_total", envoy.StatPrefix)
			}
			// Stop: Envoy first, then the server, which exits cleanly on SIGTERM.
			p.Stop()
			select {
			case <-p.Sidecar.Done:
			case <-time.After(10 * time.Second):
				t.Fatal("the server still runs after Stop")
			}
			if err := p.Sidecar.ExitErr(); err != nil {
				t.Errorf("server exit after SIGTERM: %v, want a clean exit", err)
			}
		})
	}
}

// TestExternalServerKilledFailsClosed kills the server under a running
// Envoy: with failure_mode_allow false (the default) a benign request is
// answered with a server error, never passed to the upstream, and the
// sidecar's Done says the server died.
func TestExternalServerKilledFailsClosed(t *testing.T) {
	for _, mode := range []string{modes.CorazaExtProc, modes.CorazaExtAuthz} {
		t.Run(mode, func(t *testing.T) {
			m, st := externalStack(t, mode, "uds")
			p := startExternal(t, m, st)
			if got := send(t, p.Addr, "GET", "/get?q=hello", nil, ""); got != 200 {
				t.Fatalf("benign before the kill: %d, want 200", got)
			}
			if err := syscall.Kill(p.Sidecar.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.Sidecar.Done:
			case <-time.After(10 * time.Second):
				t.Fatal("the killed server's Done did not close")
			}
			got := send(t, p.Addr, "GET", "/get?q=hello", nil, "")
			if got < 500 {
				t.Errorf("benign request with the server dead: %d, want a 5xx (fail closed)", got)
			}
		})
	}
}

// TestExternalFailureModeAllow: with --extproc-failure-mode-allow the same
// kill lets the request through uninspected, as Envoy documents.
func TestExternalFailureModeAllow(t *testing.T) {
	m, st := externalStack(t, modes.CorazaExtProc, "uds")
	st.Sidecar.FailureModeAllow = true
	p := startExternal(t, m, st)
	if !p.Sidecar.FailureModeAllow {
		t.Fatal("the sidecar does not record failure_mode_allow")
	}
	if err := syscall.Kill(p.Sidecar.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Sidecar.Done
	if got := send(t, p.Addr, "GET", "/get?id=1%27%20OR%20%271%27%3D%271", nil, ""); got != 200 {
		t.Errorf("an attack with the server dead and failure_mode_allow: %d, want 200 (fails open, uninspected)", got)
	}
}
