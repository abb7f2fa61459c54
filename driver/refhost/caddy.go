package refhost

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wafbench/driver/child"
	"wafbench/driver/modes"
	"wafbench/envoy"
)

// CaddyCoraza is Caddy v2 with wafbench's own handler around coraza/v3
// (filters/caddy-coraza): the mode's name belongs to driver/modes.
const CaddyCoraza = modes.RefCaddyCoraza

// CaddyBinaryRel is where `make modules` builds the Caddy executable, under
// the repository root.
const CaddyBinaryRel = "build/caddy-coraza/caddy"

// CaddyCountersPath is where the handler serves its counters on Caddy's
// admin endpoint (filters/caddy-coraza/caddywaf.CountersPath), in the shape
// of Envoy's admin /stats?format=json.
const CaddyCountersPath = "/wafbench/stats"

// CaddyGOMAXPROCSStat is the gauge beside the counters that reports the
// process's GOMAXPROCS (caddywaf.GOMAXPROCSStat).
const CaddyGOMAXPROCSStat = "wafbench_caddy_gomaxprocs"

// CaddyBinary is the Caddy executable of the checkout the driver runs in.
func CaddyBinary() (string, error) {
	root, err := envoy.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, CaddyBinaryRel), nil
}

// checkCaddy reports a missing Caddy executable with how to build it.
func checkCaddy(bin string) error {
	if bin == "" {
		var err error
		if bin, err = CaddyBinary(); err != nil {
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

// startCaddy starts one Caddy process with GOMAXPROCS = spec.Concurrency
// (Envoy's --concurrency) and waits until its counters endpoint answers and
// its listener accepts connections.
func startCaddy(ctx context.Context, spec Spec) (*Process, error) {
	bin := spec.Binary
	if bin == "" {
		var err error
		if bin, err = CaddyBinary(); err != nil {
			return nil, err
		}
	}
	if err := checkCaddy(bin); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(spec.RulesFile) {
		return nil, fmt.Errorf("caddy: rules file %q: want an absolute path", spec.RulesFile)
	}
	procs := spec.Concurrency
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
	tmp, err := os.MkdirTemp(spec.TmpDir, "caddy-"+spec.Tag+"-")
	if err != nil {
		return nil, err
	}
	conf, err := caddyConfig(listen, admin, spec.UpstreamAddr, spec.RulesFile, 1<<20, spec.MatchLog)
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(spec.Dir, "caddy-"+spec.Tag+".json")
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(spec.Dir, "caddy-"+spec.Tag+".log")
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
	proc, err := child.Start(cmd, spec.CPUs)
	if err != nil {
		return nil, fmt.Errorf("start caddy: %w", err)
	}
	statsURL := "http://" + admin + CaddyCountersPath
	p := &Process{PID: proc.PID(), Addr: listen, LogPath: logPath, GOMAXPROCS: procs, proc: proc, stopSig: syscall.SIGTERM}
	p.Stats = func(ctx context.Context) ([]byte, error) { return httpGet(ctx, statsURL) }
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
	p.Ready = time.Since(spawn)
	return p, nil
}

// httpGet fetches url from a loopback endpoint; a status other than 200 is
// an error.
func httpGet(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return b, nil
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
func CaddyEngineVersion() string {
	bin, err := CaddyBinary()
	if err != nil {
		return ""
	}
	_, v, _ := caddyVersion(bin)
	return v
}
