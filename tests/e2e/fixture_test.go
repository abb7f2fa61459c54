//go:build integration

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wafbench/driver/envoy"
	"wafbench/driver/upstream"
	"wafbench/internal/crs"
)

// The fixture is shared by every test of the package: one CRS export, one
// in-process upstream and, started on first use, one Envoy per mode
// (--concurrency 1). TestMain stops them all.
var fx struct {
	root    string // repository root
	tmp     string
	rules   string // main.conf of the CRS export
	modules string // directory of the built modules
	binary  string // Envoy executable
	upAddr  string
	upStop  context.CancelFunc
	upDone  chan error
	setupE  error

	mu     sync.Mutex
	envoys map[envoy.Mode]*envoyOnce
}

type envoyOnce struct {
	once sync.Once
	p    *envoy.Process
	err  error
}

const setupHint = "from the repository root run ./scripts/setup.sh (installs Envoy 1.40 into .venv), " +
	"then `make modules` (builds build/filters/libwafbench_{modsecurity,coraza}.so)"

func TestMain(m *testing.M) {
	code := func() int {
		defer cleanup()
		fx.setupE = setup()
		return m.Run()
	}()
	os.Exit(code)
}

// setup finds Envoy and the modules, exports CRS and starts the upstream.
// A failure is reported by every test that needs the fixture.
func setup() error {
	fx.envoys = map[envoy.Mode]*envoyOnce{}
	root, err := envoy.RepoRoot()
	if err != nil {
		return err
	}
	fx.root = root
	fx.binary, err = envoy.FindBinary("")
	if err != nil {
		return fmt.Errorf("%v; %s", err, setupHint)
	}
	fx.modules = os.Getenv("WAFBENCH_MODULE_DIR")
	if fx.modules == "" {
		fx.modules = filepath.Join(root, "build", "filters")
	}
	fx.tmp, err = os.MkdirTemp("", "wafbench-e2e-")
	if err != nil {
		return err
	}
	man, err := crs.Export(filepath.Join(fx.tmp, "crs"), crs.Options{})
	if err != nil {
		return fmt.Errorf("crs export: %w", err)
	}
	fx.rules = man.MainConf

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	fx.upAddr, fx.upStop, fx.upDone = ln.Addr().String(), cancel, make(chan error, 1)
	go func() { fx.upDone <- upstream.Serve(ctx, ln) }()
	return nil
}

func cleanup() {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	for m, e := range fx.envoys {
		if e.p != nil {
			if err := e.p.Stop(5 * time.Second); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: stop envoy %s: %v\n", m, err)
			}
		}
	}
	if fx.upStop != nil {
		fx.upStop()
		select {
		case <-fx.upDone:
		case <-time.After(5 * time.Second):
		}
	}
	if fx.tmp != "" && os.Getenv("WAFBENCH_E2E_KEEP") == "" {
		os.RemoveAll(fx.tmp)
	} else if fx.tmp != "" {
		fmt.Fprintf(os.Stderr, "e2e: kept %s\n", fx.tmp)
	}
}

// proxy returns the running Envoy of mode, starting it on first use. The
// test fails (never skips) when the fixture cannot be built.
func proxy(t testing.TB, mode envoy.Mode) *envoy.Process {
	t.Helper()
	if fx.setupE != nil {
		t.Fatalf("e2e fixture: %v", fx.setupE)
	}
	fx.mu.Lock()
	e, ok := fx.envoys[mode]
	if !ok {
		e = &envoyOnce{}
		fx.envoys[mode] = e
	}
	fx.mu.Unlock()
	e.once.Do(func() { e.p, e.err = startEnvoy(mode) })
	if e.err != nil {
		t.Fatalf("e2e fixture: envoy %s: %v", mode, e.err)
	}
	select {
	case <-e.p.Done():
		t.Fatalf("envoy %s (pid %d) has exited; log %s", mode, e.p.PID, e.p.LogPath)
	default:
	}
	return e.p
}

func startEnvoy(mode envoy.Mode) (*envoy.Process, error) {
	return startEnvoyWorkers(mode, 1, string(mode))
}

// startEnvoyWorkers starts an Envoy of mode with the given number of worker
// threads (--concurrency) in fx.tmp/dir; the caller stops it.
func startEnvoyWorkers(mode envoy.Mode, workers int, name string) (*envoy.Process, error) {
	cfg := envoy.Config{
		Mode:             mode,
		UpstreamAddr:     fx.upAddr,
		ModuleSearchPath: fx.modules,
		RulesFile:        fx.rules,
		MaxBodyBytes:     maxBody,
		RouteTimeout:     ioTimeout(mode),
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%v; %s", err, setupHint)
	}
	dir := filepath.Join(fx.tmp, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "envoy.yaml")
	if err := envoy.WriteYAML(cfg, path); err != nil {
		return nil, err
	}
	start := 60 * time.Second
	if mode == envoy.CorazaWasm {
		start = wasmStartTimeout // V8 compiles the whole module first (wasm_test.go)
	}
	ctx, cancel := context.WithTimeout(context.Background(), start)
	defer cancel()
	return envoy.Start(ctx, envoy.Options{
		Binary:       fx.binary,
		ConfigPath:   path,
		WorkDir:      dir,
		Concurrency:  workers,
		Env:          envoy.Env(cfg),
		ExtraArgs:    []string{"--component-log-level", componentLog()},
		StartTimeout: start,
	})
}

// componentLog is Envoy's --component-log-level: dynamic_modules at debug,
// where the modules log matched rules (libmodsecurity) and engine errors, so
// envoy.log (kept with WAFBENCH_E2E_KEEP=1) explains a failure.
// WAFBENCH_E2E_COMPONENT_LOG replaces it, e.g. "http:debug,dynamic_modules:debug".
func componentLog() string {
	if v := os.Getenv("WAFBENCH_E2E_COMPONENT_LOG"); v != "" {
		return v
	}
	return "dynamic_modules:debug,wasm:info"
}

// maxBody is the request-body limit given to both modules (the runner's).
const maxBody = 1 << 20

// wafModes are the modes that load a WAF module.
var wafModes = []envoy.Mode{envoy.ModSecurity, envoy.Coraza}

// fixtureModes are the Envoy modes this package starts itself: every mode
// whose filter runs inside Envoy. The external modes (ext_proc, ext_authz)
// need the wafbench-extproc server beside Envoy; their end-to-end tests on
// the real Envoy, server and CRS are in driver/hosts/envoyhost (TestExternal*)
// and filters/extproc/e2e.
var fixtureModes = slices.DeleteFunc(slices.Clone(envoy.Modes), envoy.Mode.IsExternal)

// envoyStats reads mode's admin /stats?format=json and returns every
// integer stat by name.
func envoyStats(t testing.TB, mode envoy.Mode) map[string]int64 {
	t.Helper()
	p := proxy(t, mode)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := p.Stats(ctx)
	if err != nil {
		t.Fatalf("envoy %s stats: %v", mode, err)
	}
	out, err := envoy.ParseStats(raw)
	if err != nil {
		t.Fatalf("envoy %s stats: %v", mode, err)
	}
	return out
}

// counters returns the module's dynamicmodulescustom.wafbench_<mode>_*
// counters, keyed by the suffix after wafbench_<mode>_.
func counters(t testing.TB, mode envoy.Mode) map[string]int64 {
	t.Helper()
	prefix := "dynamicmodulescustom.wafbench_" + string(mode) + "_"
	if mode == envoy.CorazaWasm {
		prefix = wasmCounterPrefix
	}
	out := map[string]int64{}
	for k, v := range envoyStats(t, mode) {
		if strings.HasPrefix(k, prefix) {
			out[strings.TrimPrefix(k, prefix)] = v
		}
	}
	if len(out) == 0 {
		t.Fatalf("envoy %s: no %s* counters in admin /stats", mode, prefix)
	}
	return out
}

// vmRSS returns the VmRSS line of /proc/pid/status in KiB.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// dial opens a client connection to mode's listener.
func dial(t testing.TB, mode envoy.Mode) *conn {
	t.Helper()
	c, err := Dial(proxy(t, mode).ListenerAddr, ioTimeout(mode))
	if err != nil {
		t.Fatalf("dial envoy %s: %v", mode, err)
	}
	return c
}

// ioTimeout bounds each read and write of a test client on mode's listener,
// and the same bound is the route timeout of mode's Envoy, so a slow filter
// fails a test by the client's deadline, not by Envoy's 15 s default 504.
func ioTimeout(mode envoy.Mode) time.Duration {
	if mode == envoy.CorazaWasm {
		// ~10x the native module's CPU per request: 16 connections of
		// json_4k queue for tens of seconds on one busy worker, and one
		// json_64k took longer than 15 s in a CI run with both CPUs busy.
		return wasmIOTimeout
	}
	return 10 * time.Second
}

// baseHeaders are the headers of a benign client that CRS does not score.
var baseHeaders = [][2]string{{"Host", "bench.local"}, {"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}}

// assertServing sends a benign GET on a fresh connection and fails unless it
// gets 200: Envoy (and the module) survived whatever came before.
func assertServing(t testing.TB, mode envoy.Mode, after string) {
	t.Helper()
	c := dial(t, mode)
	defer c.Close()
	resp, err := c.do("GET", request{Method: "GET", Target: "/safe", Headers: baseHeaders}.bytes())
	if err != nil {
		t.Fatalf("%s: benign GET after %s: %v", mode, after, err)
	}
	if resp.Status != 200 {
		t.Fatalf("%s: benign GET after %s: status %d, want 200", mode, after, resp.Status)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestABIVersionMatched reads each WAF Envoy's log: Envoy 1.40 says whether
// the module's ABI version string equals its own (see filters/abi).
func TestABIVersionMatched(t *testing.T) {
	for _, mode := range []envoy.Mode{envoy.ModSecurity, envoy.Coraza} {
		t.Run(string(mode), func(t *testing.T) {
			b, err := os.ReadFile(proxy(t, mode).LogPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "Dynamic module ABI version v0.2.0 matched") {
				t.Errorf("envoy log of %s lacks \"Dynamic module ABI version v0.2.0 matched\"", mode)
			}
		})
	}
}
