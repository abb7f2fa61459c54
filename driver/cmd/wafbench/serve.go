package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"wafbench/driver/cpu"
	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	runmeta "wafbench/driver/meta"
	"wafbench/driver/runner"
)

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var sf stackFlags
	sf.register(fs)
	modeArg := fs.String("mode", "passthrough", "mode to serve: passthrough, an engine (modsecurity, coraza: its default build), <engine>@<build> (see 'wafbench build --list'), coraza-wasm, ref-direct, ref-nginx-modsecurity[@<build>] or ref-caddy-coraza")
	logDir := fs.String("log-dir", "", "where the host's config and log go, created if missing (default: a temporary directory, removed on exit)")
	serveDS := fs.String("downstream", "h1", "protocol of the host's listener: h1, h1-tls, h2-tls or h2c (as run --downstream; Envoy modes only beyond h1); TLS serves a certificate made now, written to tls/ in the log directory; the printed URL stays http://")
	if err := parse(fs, args, stdout, usageOf("serve")); err != nil {
		return err
	}
	ms, err := sf.parseModes(*modeArg)
	if err != nil {
		return err
	}
	if len(ms) != 1 {
		return usagef("serve: --mode: want one mode, got %q", *modeArg)
	}
	m := ms[0]
	h := all.Of(m)
	ds, err := downstream.Parse(*serveDS)
	if err != nil {
		return usagef("serve: --downstream: %v", err)
	}
	if err := hosts.CheckDownstream(h, m, ds); err != nil {
		return usagef("serve: --downstream %s: %v (serve it with --downstream h1)", ds, err)
	}
	st, err := sf.resolve(ms)
	if err != nil {
		return err
	}
	if m.Engine != "" {
		if _, err := runmeta.EnsureCRS(sf.crsDir, inRepo("build/crs")); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "wafbench-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := *logDir
	if dir == "" {
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("serve: --log-dir: %w", err)
	}
	st.spec.Downstream = ds
	if ds.TLS() {
		cert, err := downstream.WriteCert(filepath.Join(dir, "tls"))
		if err != nil {
			return err
		}
		st.spec.CertFile, st.spec.KeyFile = cert.CertFile, cert.KeyFile
	}
	up, err := runner.StartUpstream(ctx, self, st.cpus.Upstream, tmp)
	if err != nil {
		return err
	}
	defer up.Stop()
	p, err := h.Start(ctx, m, st.spec, hosts.Where{UpstreamAddr: up.Addr, Dir: dir, TmpDir: tmp,
		Tag: "serve-" + strings.ReplaceAll(m.String(), "@", "_")})
	if err != nil {
		return err
	}
	defer p.Stop()
	fmt.Fprintf(stdout, "http://%s\n", p.Addr)
	fmt.Fprintf(stderr, "wafbench: %s; Ctrl-C to stop\n", serving(m.String(), h, p, st.spec.CPUs, up.Addr))
	if ds != downstream.H1 {
		fmt.Fprintf(stderr, "wafbench: the listener speaks %s (%s)", ds, ds.Label())
		if ds.TLS() {
			fmt.Fprintf(stderr, ", certificate %s", st.spec.CertFile)
		}
		fmt.Fprintln(stderr)
	}
	<-ctx.Done()
	return nil
}

// serving describes a started host for serve's status line.
func serving(mode string, h hosts.Host, p *hosts.Process, cpus []int, upstreamAddr string) string {
	if !h.Proxy() {
		return fmt.Sprintf("%s mode, %s: requests go to the upstream %s itself", mode, h.ProcessName(), upstreamAddr)
	}
	s := fmt.Sprintf("%s mode, %s pid %d on CPUs %s", mode, h.ProcessName(), p.PID, cpu.Format(cpus))
	if p.Admin != "" {
		s += ", admin http://" + p.Admin
	}
	return s + ", upstream " + upstreamAddr
}
