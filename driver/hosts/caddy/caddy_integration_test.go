//go:build integration

package caddy

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wafbench/driver/envoy"
	"wafbench/driver/hosts"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/upstream/upstreamtest"
)

// TestCaddyCoraza: benign requests pass and reach the upstream one for one;
// an SQL injection (body), an XSS (query) and the phase-1 block header are
// denied with 403 in Caddy and never reach the upstream; the counters move
// by exactly the requests sent; the self-report names the engine; GOMAXPROCS
// is what the spec asked for; Stop leaves no process behind.
func TestCaddyCoraza(t *testing.T) {
	requireCaddy(t)
	srv, upAddr := upstreamtest.Start(t)
	p, dir := startCaddyT(t, upAddr, rulesFile(t), 2)
	if p.PID <= 0 || p.Startup == nil || p.Startup.ListenerReadyMs <= 0 || p.Addr == "" || p.Stats == nil || p.GOMAXPROCS != 2 {
		t.Fatalf("got %+v; want a PID, an address, a ready time, counters and GOMAXPROCS 2", p)
	}
	conf, err := os.ReadFile(filepath.Join(dir, "caddy-t01.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"handler": "wafbench_coraza"`, `"rules_file": "` + rulesFile(t) + `"`, `"dial": "` + upAddr + `"`} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("caddy-t01.json lacks %s", want)
		}
	}
	if got := counters(t, p)[gomaxprocsStat]; got != 2 {
		t.Errorf("%s: got %d, want 2", gomaxprocsStat, got)
	}

	base := [][2]string{{"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}}
	const n = 100
	form := append(append([][2]string{}, base...), [2]string{"Content-Type", "application/x-www-form-urlencoded"})
	tests := []struct {
		name     string
		req      load.Request
		status   int
		upstream int64  // requests the upstream must see
		counter  string // the counter that moves by n besides requests
	}{
		{"benign", load.Build("GET", "/safe", base, nil, "bench.local"), 200, n, ""},
		{"benign_json", load.Build("POST", "/json", append(append([][2]string{}, base...), [2]string{"Content-Type", "application/json"}),
			[]byte(`{"user":"alice","items":[1,2,3]}`), "bench.local"), 200, n, ""},
		{"sqli_body", load.Build("POST", "/attack", form, []byte("user=1234+OR+1%3D1"), "bench.local"), 403, 0, "wafbench_coraza_blocked_phase2"},
		{"xss_query", load.Build("GET", "/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", base, nil, "bench.local"), 403, 0, "wafbench_coraza_blocked_phase2"},
		{"phase1_block", load.Build("GET", "/safe", append(append([][2]string{}, base...), [2]string{"X-WAF-Benchmark", "phase1-block"}), nil, "bench.local"),
			403, 0, "wafbench_coraza_blocked_phase1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Name, tt.req.ExpectStatus = tt.name, tt.status
			before, upBefore := counters(t, p), srv.Stats().Requests
			res, err := load.Run(context.Background(), load.Options{Target: p.Addr, Conns: 1, Duration: time.Hour, MaxRequests: n, Timeout: time.Hour}, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != n || len(res.Errors) != 0 {
				t.Errorf("%d valid, errors %v, statuses %v; want %d × %d", res.Requests, res.Errors, res.Statuses, n, tt.status)
			}
			if got := srv.Stats().Requests - upBefore; got != tt.upstream {
				t.Errorf("upstream served %d, want %d", got, tt.upstream)
			}
			after := counters(t, p)
			if got := after["wafbench_coraza_requests"] - before["wafbench_coraza_requests"]; got != n {
				t.Errorf("requests counter moved by %d, want %d", got, n)
			}
			for _, c := range []string{"wafbench_coraza_blocked_phase1", "wafbench_coraza_blocked_phase2", "wafbench_coraza_body_too_large", "wafbench_coraza_engine_errors"} {
				want := int64(0)
				if c == tt.counter {
					want = n
				}
				if got := after[c] - before[c]; got != want {
					t.Errorf("%s moved by %d, want %d", c, got, want)
				}
			}
		})
	}

	log, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Module, Engine, EngineVersion, Build string
		Rules                                int
	}
	line := ""
	for _, l := range strings.Split(string(log), "\n") {
		if rest, ok := strings.CutPrefix(l, "wafbench-module "); ok {
			line = rest
		}
	}
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("self-report %q: %v", line, err)
	}
	var raw map[string]any
	json.Unmarshal([]byte(line), &raw)
	if info.Engine != "coraza" || info.Build != modes.RefCaddyCoraza || info.Rules < 100 || raw["engine_version"] != engineVersion() {
		t.Errorf("self-report %s: want engine coraza, build %s, hundreds of rules, engine_version %s", line, modes.RefCaddyCoraza, engineVersion())
	}
	if v := version(); !strings.Contains(v, "Caddy v2.11.") || !strings.Contains(v, "coraza/v3 v3.") {
		t.Errorf("Version: got %q, want Caddy v2.11.… + … coraza/v3 v3.…", v)
	}

	// One executable serves every rule configuration: the mode that loads
	// another (`+pl2`) is identified as the same build.
	for _, name := range []string{modes.RefCaddyCoraza, modes.RefCaddyCoraza + "+pl2"} {
		n, err := modes.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (Host{}).Identify(context.Background(), modes.Mode{Name: n}, p); err != nil {
			t.Errorf("Identify as %s: %v", name, err)
		}
	}

	pid := p.PID
	p.Stop()
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has members after Stop (kill 0: %v)", pid, err)
	}
}

// TestCaddyBodyTooLarge: a body over the 1 MiB limit is answered 413 by the
// handler, counted in body_too_large, and not forwarded.
func TestCaddyBodyTooLarge(t *testing.T) {
	requireCaddy(t)
	srv, upAddr := upstreamtest.Start(t)
	p, _ := startCaddyT(t, upAddr, rulesFile(t), 1)
	hdr := [][2]string{{"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}, {"Content-Type", "application/octet-stream"}}
	req := load.Build("POST", "/upload", hdr, make([]byte, 1<<20+1), "bench.local")
	req.Name, req.ExpectStatus = "too_large", 413
	before := counters(t, p)["wafbench_coraza_body_too_large"]
	res, err := load.Run(context.Background(), load.Options{Target: p.Addr, Conns: 1, Duration: time.Hour, MaxRequests: 3, Timeout: time.Hour}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 3 {
		t.Errorf("%d valid, statuses %v, errors %v; want 3 × 413", res.Requests, res.Statuses, res.Errors)
	}
	if got := counters(t, p)["wafbench_coraza_body_too_large"] - before; got != 3 {
		t.Errorf("body_too_large moved by %d, want 3", got)
	}
	if got := srv.Stats().Requests; got != 0 {
		t.Errorf("upstream served %d, want 0", got)
	}
}

// TestCaddyBadRules: rules Coraza cannot load make Start fail with Caddy's
// error, naming the directive, rather than hang.
func TestCaddyBadRules(t *testing.T) {
	requireCaddy(t)
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
	for _, want := range []string{"caddy did not listen", "exited", "SecNoSuchDirective"} {
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func requireCaddy(t *testing.T) {
	t.Helper()
	if err := (Host{}).Check(mode(t), hosts.Stack{}); err != nil {
		t.Fatalf("ref-caddy-coraza cannot run on this machine: %v", err)
	}
}

// rulesFile is the CRS export's entry point (`make crs`).
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

// startCaddyT starts Caddy over rules in front of upAddr, stopped at cleanup.
func startCaddyT(t *testing.T, upAddr, rules string, concurrency int) (*hosts.Process, string) {
	t.Helper()
	dir := t.TempDir()
	p, err := Host{}.Start(context.Background(), mode(t), hosts.Stack{RulesFile: rules, Concurrency: concurrency},
		hosts.Where{UpstreamAddr: upAddr, Dir: dir, TmpDir: t.TempDir(), Tag: "t01"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p, dir
}

// counters reads the host's counters through Process.Stats.
func counters(t *testing.T, p *hosts.Process) map[string]int64 {
	t.Helper()
	b, err := p.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m, err := envoy.ParseStats(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
