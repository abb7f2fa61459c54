package main

import (
	"context"
	"flag"
	"io"
	"os"

	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	"wafbench/driver/runner"
)

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var sf stackFlags
	sf.register(fs)
	modeArg := fs.String("mode", "passthrough", "mode to serve: passthrough, an engine (modsecurity, coraza: its default build), <engine>@<build> (see 'wafbench build --list'), coraza-wasm, ref-direct, ref-nginx-modsecurity[@<build>] or ref-caddy-coraza")
	logDir := fs.String("log-dir", "", "where the host's config and log go, created if missing (default: a temporary directory, removed on exit)")
	serveDS := fs.String("downstream", "h1", "protocol of the host's listener: h1, h1-tls, h2-tls or h2c (as run --downstream; Envoy modes only beyond h1); TLS serves a certificate made now, written to tls/ in the log directory; the printed URL stays http://")
	crsTest := fs.Bool("crs-test", false, "serve the host in the crs-test configuration (DetectionOnly, paranoia level 4, CRS's test settings, matches logged with the X-CRS-Test marker rule) in front of albedo, CRS's test backend, and print the log a CRS test runner such as go-ftw reads (WAF modes only)")
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
	st, err := sf.flags().Resolve(ms)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return runner.Serve(ctx, runner.ServeRequest{Mode: m, Envoy: st.Envoy, UpstreamCPUs: st.CPUs.Upstream, Downstream: ds,
		CRSDir: sf.crsDir, RepoCRS: inRepo("build/crs"), LogDir: *logDir, Self: self, CRSTest: *crsTest}, stdout, stderr)
}
