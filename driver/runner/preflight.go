package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"wafbench/driver/builds"
	"wafbench/driver/internal/host"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/envoy"
	"wafbench/filters/crs"
)

// ModuleInfoPrefix starts the line each WAF module logs once per filter
// config: `wafbench-module {"module":…,"engine":…,"engine_version":…,
// "build":…,"rules":…}`.
const ModuleInfoPrefix = "wafbench-module "

// The canary requests of the preflight. They carry the headers CRS expects of
// a benign client, so the benign one scores nothing; the attack is a classic
// tautology that CRS's libinjection rule (942100) denies at paranoia level 1
// in both engines.
var (
	canaryHeaders = [][2]string{{"User-Agent", "wafbench-preflight/1.0"}, {"Accept", "*/*"}}
	canaryBenign  = load.Build("GET", "/wafbench-preflight?q=hello", canaryHeaders, nil, "bench.local")
	canaryAttack  = load.Build("GET", "/wafbench-preflight?id=1%27%20OR%20%271%27%3D%271", canaryHeaders, nil, "bench.local")
)

// Preflight is what a WAF trial proved before it measured anything.
type Preflight struct {
	Module       *result.ModuleInfo // the module's self-report (Envoy modes)
	ModulePath   string             // the module file mapped into Envoy
	ModuleSHA256 string             // its SHA-256, read at preflight time
	EngineLib    string             // the libmodsecurity mapped into nginx (reference host)
	GOMAXPROCS   int                // the Caddy host's own report of its GOMAXPROCS
}

// preflight proves, before a WAF trial's first measurement, that mode m
// enforces — a benign canary passes, a canary SQL injection is denied and,
// in Envoy and Caddy, the module's own counters moved — and, in Envoy and
// Caddy, that the module loaded is the engine and build m names. The error is one line that
// names mode, build and cause.
//
// With conformance (a crs-test host, DetectionOnly), only the identity is
// proved here: the canaries are not denied by design, and the conformance
// runner proves the host logs matches. Without it, a host loading the crs-test
// configuration is refused by name.
func preflight(ctx context.Context, m modes.Mode, p *proxy, conformance bool) (*Preflight, error) {
	if m.Engine == "" {
		return nil, nil
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: preflight: %s", m, fmt.Sprintf(format, a...))
	}
	if !conformance && filepath.Base(p.rulesFile) == crs.ConformanceFile {
		return nil, fail("rules file %s is the %s conformance configuration (DetectionOnly): a measured trial never runs it", p.rulesFile, crs.ConformanceName)
	}
	pf := &Preflight{}
	if m.Host == modes.Envoy {
		info, err := readModuleInfo(p.logPath)
		if err != nil {
			return nil, fail("%v", err)
		}
		pf.Module = info
		if err := checkIdentity(m, info); err != nil {
			return nil, fail("%v", err)
		}
		if modes.IsWasm(m.String()) {
			// Envoy reads the .wasm file into V8; nothing is mapped.
			pf.ModulePath = m.ModuleFile()
		} else if pf.ModulePath, err = mappedFile(p.pid, envoy.ModeOf(m.String()).ModuleFile()); err != nil {
			return nil, fail("%v", err)
		}
		if pf.ModuleSHA256, err = host.FileSHA256(pf.ModulePath); err != nil {
			return nil, fail("%v", err)
		}
		if m.Build != nil && !p.moduleOverride {
			if man, err := builds.ReadManifest(m.Dir); err == nil && man.ModuleSHA256 != "" && man.ModuleSHA256 != pf.ModuleSHA256 {
				return nil, fail("loaded module %s has SHA-256 %.12s…, but build %s's manifest says %.12s… — rebuild it ('build/wafbench build %s')",
					pf.ModulePath, pf.ModuleSHA256, m.Build.Mode(), man.ModuleSHA256, m.Build.Mode())
			}
		}
	}
	if m.Host == modes.Caddy {
		if err := preflightCaddy(ctx, m, p, pf); err != nil {
			return nil, fail("%v", err)
		}
	}
	if m.Host == modes.Nginx {
		lib, err := mappedFile(p.pid, "libmodsecurity.so")
		if err != nil {
			return nil, fail("%v", err)
		}
		pf.EngineLib = lib
		if m.Build != nil && !strings.HasPrefix(lib, m.Dir+string(filepath.Separator)) {
			return nil, fail("nginx loaded %s, not build %s's library under %s", lib, m.Build.Mode(), m.Dir)
		}
	}

	if conformance {
		return pf, nil
	}
	var before map[string]uint64
	if p.stats != nil {
		var err error
		if before, err = moduleCounters(ctx, p.stats, m.Engine); err != nil {
			return nil, fail("%v", err)
		}
	}
	if st, err := roundTrip(ctx, p.addr, canaryBenign); err != nil {
		return nil, fail("benign canary request: %v", err)
	} else if st != 200 {
		return nil, fail("benign canary request answered %d, want 200 — the rules block ordinary traffic", st)
	}
	if st, err := roundTrip(ctx, p.addr, canaryAttack); err != nil {
		return nil, fail("canary SQL injection: %v", err)
	} else if st != 403 {
		return nil, fail("canary SQL injection answered %d — rules not enforcing (DetectionOnly?)", st)
	}
	if p.stats != nil {
		after, err := moduleCounters(ctx, p.stats, m.Engine)
		if err != nil {
			return nil, fail("%v", err)
		}
		prefix := "wafbench_" + m.Engine + "_"
		if d := after[prefix+"requests"] - before[prefix+"requests"]; d < 2 {
			return nil, fail("the module's %srequests counter moved by %d over 2 canary requests — the host did not run the module", prefix, d)
		}
		blocked := after[prefix+"blocked_phase1"] + after[prefix+"blocked_phase2"] - before[prefix+"blocked_phase1"] - before[prefix+"blocked_phase2"]
		if blocked < 1 {
			return nil, fail("the canary was denied but the module's blocked counters did not move — something else answered 403")
		}
	}
	return pf, nil
}

// checkIdentity compares a module's self-report with the mode it runs as.
func checkIdentity(m modes.Mode, info *result.ModuleInfo) error {
	wantBuild := m.Engine
	if m.Build != nil {
		wantBuild = m.Build.Mode()
	}
	if modes.IsWasm(m.String()) {
		wantBuild = m.String() // the Wasm filter reports its mode as its build
	}
	switch {
	case info.Engine != m.Engine:
		return fmt.Errorf("the loaded module reports engine %q (build %q), not %s — wrong module file in place?", info.Engine, info.Build, m.Engine)
	case info.Build != wantBuild:
		return fmt.Errorf("the loaded module reports build %q, not %s — rebuild it ('build/wafbench build %s')", info.Build, wantBuild, wantBuild)
	case m.Build != nil && m.Build.Version != "" && strings.TrimPrefix(info.EngineVersion, "v") != strings.TrimPrefix(m.Build.Version, "v"):
		return fmt.Errorf("the loaded module runs %s %s, but build %s declares %s", m.Engine, info.EngineVersion, wantBuild, m.Build.Version)
	case info.Rules <= 0:
		return fmt.Errorf("the loaded module reports %d rules loaded", info.Rules)
	}
	return nil
}

// readModuleInfo returns the last module self-report in an Envoy log.
func readModuleInfo(logPath string) (*result.ModuleInfo, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseModuleInfo(f, logPath)
}

func parseModuleInfo(r io.Reader, name string) (*result.ModuleInfo, error) {
	var last string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), ModuleInfoPrefix); i >= 0 {
			last = sc.Text()[i+len(ModuleInfoPrefix):]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if last == "" {
		return nil, fmt.Errorf("the module logged no %q line in %s — not a wafbench module of this version?", strings.TrimSpace(ModuleInfoPrefix), name)
	}
	var info result.ModuleInfo
	dec := json.NewDecoder(strings.NewReader(last))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		return nil, fmt.Errorf("%s: module self-report %q: %v", name, last, err)
	}
	return &info, nil
}

// mappedFile is the path of the file whose base name starts with prefix in
// /proc/pid/maps: what the process really loaded.
func mappedFile(pid int, prefix string) (string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		path := fields[5]
		if strings.HasPrefix(filepath.Base(path), prefix) {
			return path, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no %s* mapped into pid %d", prefix, pid)
}

// moduleCounters reads the module's counters (names without Envoy's
// "dynamicmodulescustom." prefix) from admin /stats?format=json.
func moduleCounters(ctx context.Context, stats func(context.Context) ([]byte, error), engine string) (map[string]uint64, error) {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := stats(sctx)
	if err != nil {
		return nil, fmt.Errorf("admin /stats: %w", err)
	}
	all, err := envoy.ParseStats(b)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	prefix := "wafbench_" + engine + "_"
	for full, v := range all {
		name := full[strings.LastIndex(full, ".")+1:]
		if strings.HasPrefix(name, prefix) && v >= 0 {
			out[name] = uint64(v)
		}
	}
	if _, ok := out[prefix+"requests"]; !ok {
		return nil, fmt.Errorf("admin /stats has no %srequests counter — the module defined no counters", prefix)
	}
	return out, nil
}

// roundTrip sends one serialized request on a fresh connection and returns
// the response status.
func roundTrip(ctx context.Context, addr string, req load.Request) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write(req.Raw); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, fmt.Errorf("reading response: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
