//go:build integration

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wafbench/driver/envoy"
)

// The Coraza module fails CLOSED: an engine error or a Go panic in a hook
// answers 500 with the module's body and counts engine_errors, and Envoy
// keeps serving. These tests run their own Envoys (default cgo checks, like
// every Envoy of this package) with a configuration that makes the engine
// fail, and a test build of the module that panics on request.

// failEnvoy starts a coraza Envoy whose rules are the fixture's CRS plus
// extra directives, with the module from moduleDir and env added.
func failEnvoy(t *testing.T, name, moduleDir string, extraRules string, env ...string) *envoy.Process {
	t.Helper()
	if fx.setupE != nil {
		t.Fatalf("e2e fixture: %v", fx.setupE)
	}
	dir := filepath.Join(fx.tmp, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "rules.conf")
	if err := os.WriteFile(rules, []byte("Include "+fx.rules+"\n"+extraRules+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := envoy.Config{Mode: envoy.Coraza, UpstreamAddr: fx.upAddr, ModuleSearchPath: moduleDir, RulesFile: rules, MaxBodyBytes: maxBody}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("%v; %s", err, setupHint)
	}
	path := filepath.Join(dir, "envoy.yaml")
	if err := envoy.WriteYAML(cfg, path); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := envoy.Start(ctx, envoy.Options{
		Binary: fx.binary, ConfigPath: path, WorkDir: dir, Concurrency: 1,
		Env:       append(envoy.Env(cfg), env...),
		ExtraArgs: []string{"--component-log-level", componentLog()},
	})
	if err != nil {
		t.Fatalf("envoy %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Errorf("stop envoy %s: %v", name, err)
		}
	})
	return p
}

// processCounters returns the wafbench_coraza_* counters of p by suffix.
func processCounters(t *testing.T, p *envoy.Process) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := p.Stats(ctx)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	all, err := envoy.ParseStats(raw)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	const prefix = "dynamicmodulescustom.wafbench_coraza_"
	out := map[string]int64{}
	for name, v := range all {
		if strings.HasPrefix(name, prefix) {
			out[strings.TrimPrefix(name, prefix)] = v
		}
		if strings.HasPrefix(name, wasmCounterPrefix) { // the proxy-wasm filter's metrics
			out[strings.TrimPrefix(name, wasmCounterPrefix)] = v
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s* or %s* counters in admin /stats", prefix, wasmCounterPrefix)
	}
	return out
}

// failCase is one request and what the module must do with it.
type failCase struct {
	name    string
	req     request
	status  int
	module  bool             // the module's local reply (its body), not the upstream's
	changes map[string]int64 // counter deltas; every other counter stays
}

func runFailCases(t *testing.T, p *envoy.Process, cases []failCase) {
	t.Helper()
	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			before := processCounters(t, p)
			c, err := Dial(p.ListenerAddr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			resp, err := c.do(fc.req.Method, fc.req.bytes())
			if err != nil {
				t.Fatalf("%s: %v (envoy log %s)", fc.name, err, p.LogPath)
			}
			fromModule := bytes.Contains(resp.Body, []byte(moduleBodies[envoy.Coraza]))
			if resp.Status != fc.status || fromModule != fc.module {
				t.Errorf("got %d (module reply %v), want %d (module reply %v); body %q", resp.Status, fromModule, fc.status, fc.module, resp.Body)
			}
			// Counters move when the stream completes; the reply may arrive
			// first. Wait for the requests counter, bounded.
			var after map[string]int64
			for deadline := time.Now().Add(10 * time.Second); ; {
				after = processCounters(t, p)
				if after["requests"] > before["requests"] && after["engine_errors"]-before["engine_errors"] >= fc.changes["engine_errors"] || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			for _, k := range []string{"requests", "blocked_phase1", "blocked_phase2", "body_too_large", "engine_errors"} {
				if got, want := after[k]-before[k], fc.changes[k]; got != want {
					t.Errorf("counter %s: got +%d, want +%d", k, got, want)
				}
			}
			// Envoy and the module still serve, on a fresh connection (Envoy
			// may close one that got a local reply).
			c2, err := Dial(p.ListenerAddr, 10*time.Second)
			if err != nil {
				t.Fatalf("envoy no longer accepts connections: %v (log %s)", err, p.LogPath)
			}
			defer c2.Close()
			ok, err := c2.do("GET", request{Method: "GET", Target: "/safe", Headers: baseHeaders}.bytes())
			if err != nil || ok.Status != 200 {
				t.Fatalf("benign GET afterwards: %+v, %v (log %s)", ok, err, p.LogPath)
			}
		})
	}
}

// TestCorazaEngineErrorFailsClosed makes Coraza's request-body buffer fail
// for real: a 1 KiB in-memory limit sends larger bodies to a temporary file
// in TMPDIR, and that directory is removed once Envoy has loaded the rules
// (Coraza checks it is writable at load), so WriteRequestBody returns an
// error. The module must answer 500 and count engine_errors.
func TestCorazaEngineErrorFailsClosed(t *testing.T) {
	if fx.setupE != nil {
		t.Fatalf("e2e fixture: %v", fx.setupE)
	}
	tmpdir := filepath.Join(fx.tmp, "coraza-engine-error-tmpdir")
	if err := os.MkdirAll(tmpdir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := failEnvoy(t, "coraza-engine-error", fx.modules, "SecRequestBodyInMemoryLimit 1024", "TMPDIR="+tmpdir)
	if err := os.RemoveAll(tmpdir); err != nil {
		t.Fatal(err)
	}
	big := request{Method: "POST", Target: "/form", Headers: form(), Body: []byte("value=" + strings.Repeat("b", 4090))}
	small := request{Method: "POST", Target: "/form", Headers: form(), Body: []byte("value=" + strings.Repeat("b", 500))}
	runFailCases(t, p, []failCase{
		{name: "small_body_passes", req: small, status: 200, changes: map[string]int64{"requests": 1}},
		{name: "body_to_missing_tmpdir", req: big, status: 500, module: true, changes: map[string]int64{"requests": 1, "engine_errors": 1}},
		{name: "get_passes", req: request{Method: "GET", Target: "/safe", Headers: baseHeaders}, status: 200, changes: map[string]int64{"requests": 1}},
	})
	logText, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logText), "failing closed: engine: write request body") {
		t.Errorf("envoy log %s lacks the module's \"failing closed: engine: write request body\" line", p.LogPath)
	}
}

// TestCorazaPanicFailsClosed builds the module with the test-only tag
// wafbench_testpanic (a request header makes a chosen hook panic) and checks
// that each panic is recovered inside the module: 500 from the module (or,
// after the response, only the counter), engine_errors counted once, Envoy
// still serving.
func TestCorazaPanicFailsClosed(t *testing.T) {
	if fx.setupE != nil {
		t.Fatalf("e2e fixture: %v", fx.setupE)
	}
	dir := filepath.Join(fx.tmp, "coraza-testpanic-module")
	abi, err := os.ReadFile(filepath.Join(fx.root, "filters", "abi", "wafbench_abi.h"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(abi)
	cmd := exec.Command("go", "build", "-tags", "wafbench_testpanic", "-buildmode=c-shared", "-trimpath",
		"-o", filepath.Join(dir, "libwafbench_coraza.so"), "./filters/coraza")
	cmd.Dir = fx.root
	cmd.Env = append(os.Environ(), "CGO_CFLAGS=-O2 -g -DWAFBENCH_ABI_HEADER="+hex.EncodeToString(sum[:8]))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the test-panic module: %v\n%s", err, out)
	}
	p := failEnvoy(t, "coraza-panic", dir, "")
	panicAt := func(hook string, r request) request {
		r.Headers = append(append([][2]string{}, r.Headers...), [2]string{"X-Wafbench-Test-Panic", hook})
		return r
	}
	get := request{Method: "GET", Target: "/safe", Headers: baseHeaders}
	post := request{Method: "POST", Target: "/form", Headers: form(), Body: []byte("value=hello")}
	runFailCases(t, p, []failCase{
		{name: "headers", req: panicAt("headers", get), status: 500, module: true, changes: map[string]int64{"requests": 1, "engine_errors": 1}},
		{name: "body", req: panicAt("body", post), status: 500, module: true, changes: map[string]int64{"requests": 1, "engine_errors": 1}},
		{name: "logging", req: panicAt("logging", get), status: 200, changes: map[string]int64{"requests": 1, "engine_errors": 1}},
		{name: "no_panic", req: get, status: 200, changes: map[string]int64{"requests": 1}},
	})
}

// TestCorazaModuleInfo checks the module-info line of the shared contract in
// the fixture Envoy's log: engine, build, the Coraza version the module file
// really links (its Go build information) and a plausible rule count.
func TestCorazaModuleInfo(t *testing.T) {
	p := proxy(t, envoy.Coraza)
	logText, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(logText), "\n") {
		if _, after, ok := strings.Cut(l, "wafbench-module "); ok {
			lines = append(lines, after)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("envoy log %s: got %d wafbench-module lines, want 1 (one filter config)", p.LogPath, len(lines))
	}
	var got struct {
		Module, Engine, Build string
		EngineVersion         string `json:"engine_version"`
		Rules                 int
	}
	dec := json.NewDecoder(strings.NewReader(lines[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("wafbench-module line %q: %v", lines[0], err)
	}
	bi, err := buildinfo.ReadFile(filepath.Join(fx.modules, envoy.Coraza.ModuleFile()))
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, d := range bi.Deps {
		if d.Path == "github.com/corazawaf/coraza/v3" {
			want = d.Version
		}
	}
	if got.Module != "wafbench_coraza" || got.Engine != "coraza" || got.EngineVersion != want || got.Build == "" {
		t.Errorf("module info: got %+v, want module wafbench_coraza, engine coraza, engine_version %s (from the module's build info), a build name", got, want)
	}
	// CRS 4.25 at paranoia level 1 with the common configuration loads
	// several hundred rules; a handful means the includes were lost.
	if got.Rules < 500 {
		t.Errorf("module info: rules %d, want the CRS's several hundred", got.Rules)
	}
	t.Logf("coraza module info: %s", lines[0])
}
