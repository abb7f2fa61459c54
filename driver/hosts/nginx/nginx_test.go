//go:build integration

package nginx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wafbench/driver/hosts"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/upstream/upstreamtest"
)

// These tests run Debian's nginx with the ModSecurity connector over the CRS
// export in build/crs, in front of the real upstream server; ./scripts/setup.sh
// installs nginx and libnginx-mod-http-modsecurity, `make crs` writes the
// rules. Nothing here depends on speed: every exchange is a fixed number of
// requests, and the checks are counts.

func rulesFile(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../build/crs/main.conf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("CRS export missing (%v): run 'make crs'", err)
	}
	return p
}

// mode is ref-nginx-modsecurity on Debian's libmodsecurity.
func mode(t *testing.T) modes.Mode {
	t.Helper()
	n, err := modes.Parse(modes.RefNginxModSecurity)
	if err != nil {
		t.Fatal(err)
	}
	return modes.Mode{Name: n}
}

func requireNginx(t *testing.T) {
	t.Helper()
	if err := (Host{}).Check(mode(t), hosts.Stack{}); err != nil {
		t.Fatalf("ref-nginx-modsecurity cannot run on this machine: %v", err)
	}
}

// run sends n copies of req through addr on one connection and returns the
// load result.
func run(t *testing.T, addr string, req load.Request, n int64) *load.Result {
	t.Helper()
	res, err := load.Run(context.Background(), load.Options{Target: addr, Conns: 1, Duration: time.Hour, MaxRequests: n, Timeout: time.Hour}, req)
	if err != nil {
		t.Fatalf("%s through nginx: %v", req.Name, err)
	}
	return res
}

// TestNginxModSecurity starts nginx with ModSecurity and the CRS in front of
// the upstream: benign requests pass and reach the upstream one for one, an
// SQL injection is denied and reaches it not at all, and Stop leaves no
// process behind.
func TestNginxModSecurity(t *testing.T) {
	requireNginx(t)
	srv, upAddr := upstreamtest.Start(t)
	dir := t.TempDir()
	p, err := Host{}.Start(context.Background(), mode(t), hosts.Stack{RulesFile: rulesFile(t)},
		hosts.Where{UpstreamAddr: upAddr, Dir: dir, TmpDir: t.TempDir(), Tag: "t01"})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			p.Stop()
		}
	}()
	if p.PID <= 0 || p.Startup == nil || p.Startup.ListenerReadyMs <= 0 || p.Addr == "" {
		t.Fatalf("got %+v; want a PID, an address and a ready time", p)
	}
	conf, err := os.ReadFile(filepath.Join(dir, "nginx-t01.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"master_process off;", "modsecurity on;", "modsecurity_rules_file " + rulesFile(t) + ";", "server " + upAddr + ";"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("nginx-t01.conf lacks %q", want)
		}
	}

	base := [][2]string{{"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}}
	const n = 200
	benign := load.Build("GET", "/safe", base, nil, "bench.local")
	benign.Name = "benign"
	before := srv.Stats().Requests
	res := run(t, p.Addr, benign, n)
	if res.Requests != n || len(res.Errors) != 0 {
		t.Errorf("benign: %d valid, errors %v; want %d × 200", res.Requests, res.Errors, n)
	}
	if got := srv.Stats().Requests - before; got != n {
		t.Errorf("benign: upstream served %d, want %d (one per request)", got, n)
	}

	attack := load.Build("POST", "/attack", append(base, [2]string{"Content-Type", "application/x-www-form-urlencoded"}),
		[]byte("user=1234+OR+1%3D1"), "bench.local")
	attack.Name, attack.ExpectStatus = "sqli", 403
	before = srv.Stats().Requests
	res = run(t, p.Addr, attack, n)
	if res.Requests != n || len(res.Errors) != 0 {
		t.Errorf("SQL injection: %d valid, errors %v, statuses %v; want %d × 403", res.Requests, res.Errors, res.Statuses, n)
	}
	if got := srv.Stats().Requests - before; got != 0 {
		t.Errorf("SQL injection: upstream served %d, want 0 (denied in nginx)", got)
	}

	if v := version(); !strings.Contains(v, "nginx/1") || !strings.Contains(v, "ModSecurity-nginx connector") {
		t.Errorf("Version: got %q, want nginx/1… + ModSecurity-nginx connector …", v)
	}

	pid := p.PID
	p.Stop()
	stopped = true
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has members after Stop (kill 0: %v)", pid, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nginx-t01.log")); err != nil {
		t.Errorf("nginx log: %v", err)
	}
}

// TestNginxBadRules: rules nginx cannot load make Start fail with the
// error from nginx's log, not hang.
func TestNginxBadRules(t *testing.T) {
	requireNginx(t)
	_, upAddr := upstreamtest.Start(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(rules, []byte("SecRuleEngine On\nSecNoSuchDirective 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Host{}.Start(context.Background(), mode(t), hosts.Stack{RulesFile: rules},
		hosts.Where{UpstreamAddr: upAddr, Dir: dir, TmpDir: t.TempDir(), Tag: "bad"})
	if err == nil {
		p.Stop()
		t.Fatal("Start with an unloadable rules file succeeded")
	}
	for _, want := range []string{"nginx did not listen", "exited", "SecNoSuchDirective"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
