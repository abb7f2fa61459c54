// Package caddy is the host of ref-caddy-coraza: Caddy v2 with wafbench's
// own handler around coraza/v3 (filters/caddy-coraza, built by `make
// modules` into build/caddy-coraza/caddy) over the same CRS files the Envoy
// modules load. It owns the Caddy configuration, its start (GOMAXPROCS =
// --concurrency, SIGTERM to stop), the preflight's proof that the process
// is that executable running that handler, and what meta.json records of it.
package caddy

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wafbench/driver/child"
	"wafbench/driver/downstream"
	"wafbench/driver/envoy"
	"wafbench/driver/hosts"
	"wafbench/driver/internal/host"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/internal/repopath"
)

// Host is the Caddy host.
type Host struct {
	// Binary is the Caddy executable; "" for Binary().
	Binary string
}

// Kind is modes.Caddy.
func (Host) Kind() modes.Host { return modes.Caddy }

// Proxy is true.
func (Host) Proxy() bool { return true }

// Downstreams is plain HTTP/1.1: its site listens in plain text.
func (Host) Downstreams() []downstream.Protocol { return []downstream.Protocol{downstream.H1} }

// Title is "caddy".
func (Host) Title() string { return "caddy" }

// ProcessName is "caddy".
func (Host) ProcessName() string { return "caddy" }

// Check reports a missing Caddy executable with how to build it.
func (h Host) Check(m modes.Mode, _ hosts.Stack) error {
	if err := checkCaddy(h.Binary); err != nil {
		return fmt.Errorf("mode %s: %v", m, err)
	}
	return nil
}

// binaryRel is where `make modules` builds the Caddy executable, under
// the repository root.
const binaryRel = "build/caddy-coraza/caddy"

// countersPath is where the handler serves its counters on Caddy's
// admin endpoint (filters/caddy-coraza/caddywaf.CountersPath), in the shape
// of Envoy's admin /stats?format=json.
const countersPath = "/wafbench/stats"

// gomaxprocsStat is the gauge beside the counters that reports the
// process's GOMAXPROCS (caddywaf.GOMAXPROCSStat).
const gomaxprocsStat = "wafbench_caddy_gomaxprocs"

// CaddyBinary is the Caddy executable of the checkout the driver runs in.
func binary() (string, error) {
	root, err := repopath.Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, binaryRel), nil
}

// checkCaddy reports a missing Caddy executable with how to build it.
func checkCaddy(bin string) error {
	if bin == "" {
		var err error
		if bin, err = binary(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("Caddy executable %s missing: run 'make modules' (builds filters/caddy-coraza)", bin)
	}
	return nil
}

// caddyConfig is the JSON configuration of one Caddy host: the admin
// endpoint on loopback (counters; no saved configuration), a 2 s grace
// period on stop (within the driver's 5 s before SIGKILL), one plain-HTTP
// server whose single route runs the Coraza handler and then reverse_proxy
// to the upstream over keep-alive connections.
func caddyConfig(listen, admin, upstream, rules string, maxBody int, matchLog bool) ([]byte, error) {
	type obj = map[string]any
	waf := obj{"handler": "wafbench_coraza", "rules_file": rules, "max_body_bytes": maxBody}
	level := "WARN"
	if matchLog {
		// crs-test: every match as a wafbench-match line (the handler writes
		// them to stderr) and phases 3-4 on the response (RESPONSE-95x).
		waf["match_log"], waf["inspect_response"] = true, true
		level = "INFO"
	}
	cfg := obj{
		"admin":   obj{"listen": admin, "config": obj{"persist": false}},
		"logging": obj{"logs": obj{"default": obj{"level": level}}},
		"apps": obj{"http": obj{"grace_period": "2s", "servers": obj{"wafbench": obj{
			"listen":          []string{listen},
			"automatic_https": obj{"disable": true},
			"routes": []obj{{"handle": []obj{
				waf,
				{"handler": "reverse_proxy", "upstreams": []obj{{"dial": upstream}},
					"transport": obj{"protocol": "http", "keep_alive": obj{"max_idle_conns_per_host": 64}}},
			}}},
		}}}},
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// freeAddr takes a loopback port from the kernel and releases it for a
// process that cannot report a kernel-chosen port (a tiny window in which
// another process could take it).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Start starts one Caddy process with GOMAXPROCS = st.Concurrency
// (Envoy's --concurrency) and waits until its counters endpoint answers and
// its listener accepts connections.
func (h Host) Start(ctx context.Context, m modes.Mode, st hosts.Stack, w hosts.Where) (*hosts.Process, error) {
	bin := h.Binary
	if bin == "" {
		var err error
		if bin, err = binary(); err != nil {
			return nil, err
		}
	}
	if err := checkCaddy(bin); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(st.RulesFile) {
		return nil, fmt.Errorf("caddy: rules file %q: want an absolute path", st.RulesFile)
	}
	procs := st.Concurrency
	if procs < 1 {
		procs = 1
	}
	listen, err := freeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := freeAddr()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(w.TmpDir, "caddy-"+w.Tag+"-")
	if err != nil {
		return nil, err
	}
	conf, err := caddyConfig(listen, admin, w.UpstreamAddr, st.RulesFile, 1<<20, st.MatchLog)
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(w.Dir, "caddy-"+w.Tag+".json")
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(w.Dir, "caddy-"+w.Tag+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(bin, "run", "--config", confPath)
	// Caddy's data and configuration directories (certificates, autosave)
	// go to the trial's temporary directory, not the user's home.
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs),
		"HOME="+tmp, "XDG_DATA_HOME="+filepath.Join(tmp, "data"), "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
	cmd.Stdout, cmd.Stderr = out, out
	spawn := time.Now()
	proc, err := child.Start(cmd, st.CPUs)
	if err != nil {
		return nil, fmt.Errorf("start caddy: %w", err)
	}
	statsURL := "http://" + admin + countersPath
	p := hosts.NewProcess(func() { proc.Stop(syscall.SIGTERM, 5*time.Second) })
	p.PID, p.Addr, p.Admin, p.LogPath, p.GOMAXPROCS, p.RulesFile = proc.PID(), listen, admin, logPath, procs, st.RulesFile
	p.Stats = func(ctx context.Context) ([]byte, error) { return hosts.HTTPGet(ctx, statsURL) }
	err = proc.Poll(ctx, 60*time.Second, 20*time.Millisecond, func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := p.Stats(pctx); err != nil {
			return false
		}
		c, err := net.DialTimeout("tcp", listen, 200*time.Millisecond)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	if err != nil {
		p.Stop()
		tail, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("caddy did not listen on %s: %w; %s", listen, err, strings.Join(child.LastLines(string(tail), 5), " | "))
	}
	p.Startup = &result.Startup{ListenerReadyMs: float64(time.Since(spawn).Microseconds()) / 1e3}
	return p, nil
}

// caddyVersion describes a Caddy executable from its build information:
// the Caddy and coraza/v3 versions linked into it.
func caddyVersion(bin string) (caddy, coraza string, err error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", "", err
	}
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version
		}
		switch d.Path {
		case "github.com/caddyserver/caddy/v2":
			caddy = v
		case "github.com/corazawaf/coraza/v3":
			coraza = v
		}
	}
	if caddy == "" || coraza == "" {
		return caddy, coraza, errors.New(bin + ": build information lacks Caddy or coraza/v3")
	}
	return caddy, coraza, nil
}

// CaddyEngineVersion is the coraza/v3 version linked into the Caddy
// executable ("" when it cannot be read).
func engineVersion() string {
	bin, err := binary()
	if err != nil {
		return ""
	}
	_, v, _ := caddyVersion(bin)
	return v
}

// version describes the Caddy executable: the Caddy and coraza/v3 versions
// linked into it ("" when it cannot be read).
func version() string {
	bin, err := binary()
	if err != nil {
		return ""
	}
	caddy, coraza, err := caddyVersion(bin)
	if err != nil {
		return ""
	}
	return "Caddy " + caddy + " + wafbench handler (filters/caddy-coraza) + coraza/v3 " + coraza
}

// Identify proves what the Caddy host runs, before the canaries: the
// process is the Caddy executable `make modules` built; its handler's
// self-report names engine coraza, build m and rules loaded, with the
// coraza/v3 version linked into that executable; and it runs with the
// GOMAXPROCS it was started with (Envoy's --concurrency). The identity's
// module path is the executable.
func (h Host) Identify(ctx context.Context, m modes.Mode, p *hosts.Process) (*hosts.Identity, error) {
	want := h.Binary
	if want == "" {
		var err error
		if want, err = binary(); err != nil {
			return nil, err
		}
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.PID))
	if err != nil {
		return nil, fmt.Errorf("caddy pid %d: %w", p.PID, err)
	}
	if exe != want {
		return nil, fmt.Errorf("pid %d runs %s, not %s", p.PID, exe, want)
	}
	id := &hosts.Identity{ModulePath: exe}
	if id.ModuleSHA256, err = host.FileSHA256(exe); err != nil {
		return nil, err
	}
	info, err := hosts.ReadModuleInfo(p.LogPath)
	if err != nil {
		return nil, err
	}
	id.Module = info
	_, linked, _ := caddyVersion(exe)
	// One executable serves every rule configuration: a mode's
	// `+configuration` names the rules it loads, not the handler's build.
	build := m.Name.WithConfig("").String()
	switch {
	case info.Engine != m.Engine:
		return nil, fmt.Errorf("the Caddy handler reports engine %q, not %s", info.Engine, m.Engine)
	case info.Build != build:
		return nil, fmt.Errorf("the Caddy handler reports build %q, not %s — rebuild it ('make modules')", info.Build, build)
	case info.Rules <= 0:
		return nil, fmt.Errorf("the Caddy handler reports %d rules loaded", info.Rules)
	case linked == "" || strings.TrimPrefix(info.EngineVersion, "v") != strings.TrimPrefix(linked, "v"):
		return nil, fmt.Errorf("the Caddy handler reports %s %q, but %s links %q", m.Engine, info.EngineVersion, exe, linked)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := p.Stats(sctx)
	if err != nil {
		return nil, fmt.Errorf("caddy counters %s: %w", countersPath, err)
	}
	st, err := envoy.ParseStats(b)
	if err != nil {
		return nil, err
	}
	got, ok := st[gomaxprocsStat]
	switch {
	case !ok:
		return nil, fmt.Errorf("caddy counters lack %s — not this wafbench's handler?", gomaxprocsStat)
	case int(got) != p.GOMAXPROCS:
		return nil, fmt.Errorf("caddy runs with GOMAXPROCS %d, want %d (--concurrency)", got, p.GOMAXPROCS)
	}
	id.GOMAXPROCS = int(got)
	return id, nil
}

// Describe records the Caddy executable (built by `make modules` from
// filters/caddy-coraza), its hash, and the Caddy and coraza/v3 versions
// linked into it. A missing executable is an error.
func (Host) Describe(m modes.Mode, _ string, mod *result.Module, _ *[]string) error {
	bin, err := binary()
	if err != nil {
		return err
	}
	sum, err := host.FileSHA256(bin)
	if err != nil {
		return err
	}
	*mod = result.Module{Path: bin, SHA256: sum, Engine: m.Engine, EngineVersion: engineVersion(),
		Build: version() + "; GOMAXPROCS = --concurrency"}
	return nil
}
