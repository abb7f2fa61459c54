package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/downstream"
	"wafbench/driver/export"
	"wafbench/driver/internal/usage"
	"wafbench/driver/load"
	"wafbench/driver/merge"
	"wafbench/driver/report"
	"wafbench/driver/result"
	"wafbench/driver/upstream"
	"wafbench/internal/crs"
)

func reportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	exp := fs.Bool("export", false, "also write export/ (an HdrHistogram .hgrm per group, a fortio JSON per record) from raw.jsonl, as 'wafbench run' does; 'wafbench keep' does not keep export/, this rebuilds it")
	if err := parse(fs, args, stdout, usageOf("report")); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("report: want exactly one run directory, got %d arguments", fs.NArg())
	}
	dir := fs.Arg(0)
	if err := report.BuildRun(dir, stderr); err != nil {
		return err
	}
	if *exp {
		recs, _, err := result.ReadRecords(dir)
		if err != nil {
			return err
		}
		files, err := export.WriteRun(dir, recs)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wafbench: exported %d .hgrm and %d fortio JSON files (%s)\n", len(files.HGRM), len(files.Fortio), filepath.Join(dir, export.Dir))
	}
	fmt.Fprintf(stdout, "%s/report.md\n", dir)
	return nil
}

func mergeCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "", "output directory for the pooled report (required; must not exist)")
	force := fs.Bool("force", false, "pool runs even when Envoy, module or CRS hashes or the CPU model differ (differences are listed as limitations)")
	blocks := fs.Bool("blocks", false, "pool runs from different machines (CPU models may differ) with each machine as a block: the report adds per-machine ratios and pooled ratios whose intervals include the between-machine variance")
	if err := parse(fs, args, stdout, usageOf("merge")); err != nil {
		return err
	}
	if err := merge.CheckArgs(fs.Args(), *out); err != nil {
		return err
	}
	if err := merge.Runs(fs.Args(), *out, merge.Options{Force: *force, Blocks: *blocks, Warn: stderr}); err != nil {
		return usagef("merge: %v", err)
	}
	if err := report.Build(*out, nil); err != nil {
		return usagef("merge: %v", err)
	}
	fmt.Fprintf(stdout, "%s/report.md\n", *out)
	return nil
}

func loadCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	var inv load.Invocation
	fs.StringVar(&inv.Target, "target", "", "http://HOST:PORT/PATH to drive (required; loopback only)")
	fs.IntVar(&inv.Conns, "conns", 16, fmt.Sprintf("connections (1..%d), persistent unless --conn-mode per-request; each carries one request at a time over HTTP/1.1, up to --streams over HTTP/2", load.MaxConns))
	fs.DurationVar(&inv.Duration, "duration", 5*time.Second, "measured window")
	fs.DurationVar(&inv.Warmup, "warmup", time.Second, "warmup before the measured window (responses checked, not recorded)")
	fs.Float64Var(&inv.Rate, "rate", 0, "open-loop target rate in req/s over all connections (every protocol; over HTTP/2 each arrival is a new stream on its connection); 0 = closed loop")
	fs.StringVar(&inv.Arrival, "arrival", "uniform", "open-loop arrival process (with --rate): uniform (a request every 1/rate) or poisson (exponential gaps of mean 1/rate)")
	fs.Int64Var(&inv.Seed, "seed", 1, "seed of the --arrival poisson schedule (the same seed gives the same schedule)")
	fs.StringVar(&inv.Pacer, "pacer", "timerfd", "open-loop pacing (with --rate): timerfd (each send woken at its intended time, hrtimer precision) or go-timer (time.Sleep, as fortio and vegeta pace: sends bunch at millisecond ticks; for comparing with them, docs/open-loop.md)")
	fs.Int64Var(&inv.MaxRequests, "max-requests", 0, "cap on requests in the measured window; 0 = no cap")
	fs.StringVar(&inv.Method, "method", "GET", "request method")
	fs.StringVar(&inv.Body, "body", "", "request body (literal)")
	fs.IntVar(&inv.Expect, "expect", 200, "expected status; other statuses count as errors")
	fs.DurationVar(&inv.Timeout, "timeout", 5*time.Second, "per request and per connect: a request not answered in time counts as a timeout error")
	fs.StringVar(&inv.ConnMode, "conn-mode", "keepalive", "keepalive (persistent connections) or per-request (a new TCP connection per request; latency includes the connect)")
	fs.StringVar(&inv.CPUs, "cpus", "", "pin the load driver to these CPUs, e.g. 1 (default: not pinned)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	hgrmOut := fs.String("hgrm", "", "also write the latency distribution here as an HdrHistogram percentile file (.hgrm, values in ms); empty = none")
	fortioOut := fs.String("fortio-json", "", "also write the result here as fortio-compatible JSON (latencies in seconds); empty = none")
	fs.StringVar(&inv.Downstream, "downstream", "h1", "protocol spoken to the target: h1 (plain HTTP/1.1), h1-tls (HTTP/1.1 over TLS), h2-tls (HTTP/2 over TLS, ALPN h2) or h2c (HTTP/2 with prior knowledge); the URL stays http://HOST:PORT/PATH")
	fs.IntVar(&inv.Streams, "streams", 1, fmt.Sprintf("HTTP/2 (h2-tls, h2c): concurrent streams per connection (1..%d; fewer if the server's SETTINGS_MAX_CONCURRENT_STREAMS says so); open loop: an arrival finding every stream busy waits, its latency counted from its intended time; HTTP/1.1 carries one request at a time", load.MaxStreams))
	fs.StringVar(&inv.TLSCA, "tls-ca", "", "h1-tls, h2-tls: PEM file of the CA certificates to verify the target with (SNI "+downstream.ServerName+"); empty = the target's certificate is not verified (loopback only)")
	fs.Var(&inv.Headers, "header", "extra request header \"Name: value\" (repeatable)")
	if err := parse(fs, args, stdout, usageOf("load")); err != nil {
		return err
	}
	r, err := inv.Resolve()
	if err != nil {
		return err
	}
	if r.CPUs != nil {
		if err := cpu.PinSelf(r.CPUs); err != nil {
			return err
		}
	}
	if inv.Duration+inv.Warmup > 3*time.Second && isTerminal(stderr) {
		fmt.Fprintf(stderr, "wafbench: load %s for %s (+%s warmup) over %d connections…\n", inv.Target, inv.Duration, inv.Warmup, inv.Conns)
	}
	res, err := load.Run(ctx, r.Options, r.Request)
	if err != nil {
		// A target that refuses or drops connections is a failure while
		// running (exit 1), not bad input: the flags were valid.
		return fmt.Errorf("load: %w", err)
	}
	out := res.Summarize(inv.Target, inv.Conns)
	if ds := r.Options.Downstream; ds != downstream.H1 {
		out.Downstream, out.Streams = string(ds), max(inv.Streams, 1)
	}
	if err := export.WriteLoad(res, *hgrmOut, *fortioOut, inv.Target, inv.Conns); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	out.WriteText(stdout, r.Options.ConnMode, inv.Rate)
	return nil
}

func upstreamCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("upstream", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (port 0 = kernel-chosen)")
	addrFile := fs.String("addr-file", "", "write the bound address and a newline here once listening (default: print to stdout)")
	useAlbedo := fs.Bool("albedo", false, "serve CRS's test backend (albedo v0.3.0: /reflect answers the response a request asks for) instead; the backend of 'wafbench crs-test'")
	if err := parse(fs, args, stdout, usageOf("upstream")); err != nil {
		return err
	}
	return upstream.ListenAndServe(ctx, *listen, *addrFile, *useAlbedo, stdout)
}

func crsCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("crs", flag.ContinueOnError)
	out := fs.String("out", inRepo("build/crs"), "directory to write the rules, crs-setup.conf, wafbench-common.conf, main.conf and manifest.json")
	pl := fs.Int("paranoia-level", 1, "CRS blocking paranoia level (1..4)")
	if err := parse(fs, args, stdout, usageOf("crs")); err != nil {
		return err
	}
	man, err := crs.Export(*out, crs.Options{ParanoiaLevel: *pl})
	if err != nil {
		return usage.Wrap(err)
	}
	fmt.Fprintf(stdout, "CRS %s: %d rule files, sha256 %s, %d adaptations\n%s\n", man.Version, man.RuleFiles, man.SHA256, len(man.Adaptations), man.MainConf)
	return nil
}
