package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"wafbench/driver/cpu"
	"wafbench/driver/export"
	"wafbench/driver/internal/flaglist"
	"wafbench/driver/load"
	"wafbench/driver/matrix"
	runmeta "wafbench/driver/meta"
	"wafbench/driver/modes"
	"wafbench/driver/perf"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/report"
	"wafbench/driver/result"
	"wafbench/driver/runlock"
	"wafbench/driver/runner"
)

const runUsage = `Usage: wafbench run [flags]

Runs a suite: every mode once per repeat (order rotated), a fresh pinned Envoy
per trial, every workload for a fixed measured window. Writes
<results>/<UTC timestamp>-<name>/ with meta.json, raw.jsonl (appended after each
workload), Envoy configs, logs and admin stats, then summary, report and charts.

One run at a time per machine: while another holds the lock (/run/lock/wafbench.lock,
else $XDG_RUNTIME_DIR/wafbench.lock; $WAFBENCH_LOCK overrides) a run is refused,
naming the holder. Exit status: 0 every trial measured, 1 a failure while running
(some trials failed, the lock is held, the disk filled), 2 bad input, 130 interrupted.

Flags:
`

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var (
		sf                       stackFlags
		suiteName, modesArg      string
		workloads, profilesDir   string
		resultsDir, name         string
		order, scope, progress   string
		repeats                  int
		seed, maxRequests        int64
		rate                     float64
		warmup, duration, trialW time.Duration
		reqTimeout               time.Duration
		noReport, allowShared    bool
		crsTestFrom              string
		matrixArg                string
		perfHz                   int
	)
	var shardArg string
	var slo time.Duration
	fs.DurationVar(&slo, "slo", report.DefaultSLO, "latency objective of the latency–throughput curve: the report gives each mode's highest offered rate whose p99 stays within it (rate sweeps, profile sweep load); must be > 0")
	sf.register(fs)
	var pf precisionFlags
	pf.register(fs)
	var upf upstreamFlag
	upf.register(fs)
	var mrf maxRateFlags
	mrf.register(fs)
	fs.StringVar(&shardArg, "shard", "", "run only shard i/N of the design (0 ≤ i < N): a contiguous block of the --repeats repeats, the mode rotation of the whole design kept, so N shards on N machines merge ('wafbench merge') into the design of one run; empty = all repeats")
	fs.StringVar(&suiteName, "suite", "seed", "suite from the profiles (quick, seed, …)")
	fs.StringVar(&modesArg, "modes", "passthrough,modsecurity,coraza", "comma-separated modes to compare: passthrough, an engine (its default build) or <engine>@<build> from --builds, or 'all' (passthrough and every build) (e.g. modsecurity@3.0.14-pgo, coraza@re2; 'wafbench build --list' lists them); reference hosts: ref-direct (client to upstream, no proxy), ref-nginx-modsecurity[@<build>] (nginx + ModSecurity connector, same CRS, on Debian's or that build's libmodsecurity); when not given, the suite's own modes if it lists any (lab does)")
	fs.StringVar(&workloads, "workloads", "", "comma-separated workload@conns to run instead of the suite's list (workload alone = every conns it lists)")
	fs.StringVar(&profilesDir, "profiles", inRepo("profiles"), "directory of workload/suite YAML files")
	fs.StringVar(&resultsDir, "results", inRepo("runs"), "parent directory of run directories (runs/ is git-ignored; commit a run with 'wafbench keep DIR')")
	fs.StringVar(&name, "name", "", "run name, the suffix of the run directory (default: the suite name)")
	fs.StringVar(&crsTestFrom, "crs-test", "auto", "protection beside cost: auto (the newest crs-test run in results/ or runs/ that tested each mode's very module), none, or a crs-test run directory; recorded as protection.json for the report")
	fs.IntVar(&repeats, "repeats", 0, "repeats (blocks of every mode once); 0 = the suite's")
	fs.DurationVar(&warmup, "warmup", -1, "warmup before each workload's measured window; negative = the suite's")
	fs.DurationVar(&duration, "duration", 0, "measured window per workload; 0 = the suite's")
	fs.DurationVar(&trialW, "trial-warmup", -1, "warmup of each fresh Envoy before its first workload; negative = the suite's")
	fs.Int64Var(&maxRequests, "max-requests", 0, "cap on requests per measured window; 0 = no cap (time only)")
	fs.DurationVar(&reqTimeout, "timeout", 0, "per request and per connect: a request not answered in time counts as a timeout error; 0 = 5s")
	fs.Float64Var(&rate, "rate", 0, "open-loop target rate in req/s over all connections; 0 = closed loop")
	connMode := fs.String("conn-mode", "", "keepalive (persistent connections) or per-request (a new TCP connection per request, as one curl per request; latency includes the connect); default: the suite's conn_mode, else keepalive; a workload's own conn_mode wins")
	fs.StringVar(&order, "order", plan.Latin, "mode order across repeats: latin (rotate) or shuffle (seeded)")
	fs.Int64Var(&seed, "seed", 1, "seed for --order shuffle and for the --arrival poisson schedule (recorded in meta.json and, for poisson, in every open-loop record)")
	arrival := fs.String("arrival", "uniform", "open-loop arrival process (with --rate or a rate sweep): uniform (a request every 1/rate) or poisson (exponential gaps of mean 1/rate, seeded by --seed); recorded per record")
	fs.StringVar(&scope, "trial-scope", plan.PerModeRepeat, "fresh Envoy per: mode-repeat (runs all workloads, as seed B) or workload")
	fs.StringVar(&progress, "progress", "auto", "progress line on stderr: auto (only on a terminal), always, never")
	fs.IntVar(&perfHz, "perf", 0, "record Envoy with 'perf record -e cpu-clock -g' at this many Hz over every measured window (perf/*.data, a flat .txt report and folded stacks per window; the report draws a flame graph per mode × workload with inferno); 0 = off")
	perfDiff := fs.String(report.PerfDiffFlag, "", "with --perf: A,B = two of the run's modes; the report also draws B's differential flame graph against A per workload (e.g. modsecurity,modsecurity@3.0.14-pgo)")
	fs.BoolVar(&noReport, "no-report", false, "skip building summary, report and charts after the run")
	fs.StringVar(&matrixArg, "matrix", "auto", "after the trials, send this request corpus to every mode and write matrix.csv and matrix.md into the run directory: parity, lab, auto (lab for the lab suite, else parity) or none")
	fs.BoolVar(&allowShared, "allow-shared-cpus", false, "run even when Envoy's CPUs overlap the client's or the upstream's (refused by default: the figures would include their contention; recorded in meta.json)")
	if err := parse(fs, args, stdout, runUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q", fs.Arg(0))
	}
	if slo <= 0 {
		return usagef("--slo: want a latency > 0 like 10ms, got %s", slo)
	}

	set, err := profile.LoadDir(profilesDir)
	if err != nil {
		return usageError{err.Error()}
	}
	suite, ok := set.Suites[suiteName]
	if !ok {
		return usagef("unknown suite %q (known: %s)", suiteName, strings.Join(set.SuiteNames(), ", "))
	}
	keys := suite.Workloads
	if workloads != "" {
		keys = flaglist.Split(workloads)
	}
	cases, err := set.Cases(keys)
	if err != nil {
		return usageError{err.Error()}
	}
	if !flagGiven(fs, "modes") && len(suite.Modes) > 0 {
		modesArg = strings.Join(suite.Modes, ",")
	}
	ms, err := sf.parseModes(modesArg)
	if err != nil {
		return err
	}
	var corpus *matrix.Corpus
	if matrixArg = runMatrixCorpus(matrixArg, suiteName); matrixArg != "none" {
		if corpus, err = loadCorpus(matrixArg); err != nil {
			return usagef("--matrix: %v", err)
		}
	}
	if repeats == 0 {
		repeats = suite.Repeats
	}
	if duration == 0 {
		duration = time.Duration(suite.Duration)
	}
	if warmup < 0 {
		warmup = time.Duration(suite.Warmup)
	}
	if trialW < 0 {
		trialW = time.Duration(suite.TrialWarmup)
	}
	if duration < 0 || maxRequests < 0 || rate < 0 || reqTimeout < 0 {
		return usagef("--duration, --max-requests, --rate and --timeout must not be negative")
	}
	if _, err := load.ParseConnMode(*connMode); err != nil {
		return usagef("--conn-mode: %v", err)
	}
	arr, err := load.ParseArrival(*arrival)
	if err != nil {
		return usagef("--arrival: %v", err)
	}
	maxRate, err := mrf.resolve()
	if err != nil {
		return err
	}
	if *connMode == "" {
		*connMode = suite.ConnMode
	}
	modeNames := make([]string, len(ms))
	byName := map[string]modes.Mode{}
	for i, m := range ms {
		modeNames[i] = m.String()
		byName[m.String()] = m
	}
	popts := plan.Options{Modes: modeNames, Cases: len(cases), Repeats: repeats, Order: order, Seed: seed, Scope: scope}
	trials, err := plan.Build(popts)
	if err != nil {
		return usageError{err.Error()}
	}
	trials, shard, err := selectShard(shardArg, popts, trials)
	if err != nil {
		return err
	}
	pct, err := pf.resolve(fs, shardArg)
	if err != nil {
		return err
	}
	prec, err := newPrecision(suite, pct, pf.budget, modeNames, caseKeys(cases), repeats)
	if err != nil {
		return err
	}
	st, err := sf.resolve(ms)
	if err != nil {
		return err
	}
	online, err := cpu.Online()
	if err != nil {
		return err
	}
	sharedNote, err := sharedCPUs(st, ms, len(online), allowShared)
	if err != nil {
		return err
	}
	if perfHz < 0 || perfHz > 10000 {
		return usagef("--perf: want 0 (off) or 1..10000 Hz, got %d", perfHz)
	}
	if perfHz > 0 {
		if err := perf.Available(); err != nil {
			return usagef("--perf: %v", err)
		}
	}
	if err := checkPerfDiff(*perfDiff, perfHz, modeNames); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	upKind, upVersion, err := upf.resolve(self)
	if err != nil {
		return err
	}
	if name == "" {
		name = suiteName
	}
	if strings.ContainsAny(name, "/ ") {
		return usagef("--name: want no slashes or spaces, got %q", name)
	}

	// One run at a time: a second would halve both runs' throughput.
	lock, err := runlock.Acquire(runlock.Path())
	if err != nil {
		return err
	}
	defer lock.Release()

	// Everything below writes; everything above only checked.
	meta := &result.Meta{
		RunID: result.NewRunID(), Name: name, StartedUTC: time.Now().UTC().Format(time.RFC3339), Status: "running",
		Command: append([]string{"wafbench", "run"}, args...), Flags: map[string]string{},
		Suite: suiteName, Modes: modeNames, Repeats: repeats, Order: order, Seed: seed,
		ModeOrder: plan.ModeOrder(popts), TrialScope: scope,
		EnvoyPath: st.spec.Binary, EnvoyVersion: st.envoyVersion, Concurrency: st.spec.Concurrency,
		EnvoyCPUs: st.spec.CPUs, ClientCPUs: st.cpus.Client, UpstreamCPUs: st.cpus.Upstream,
		Upstream: upVersion,
	}
	fs.VisitAll(func(f *flag.Flag) { meta.Flags[f.Name] = f.Value.String() })
	meta.Flags["duration"], meta.Flags["warmup"], meta.Flags["trial-warmup"] = duration.String(), warmup.String(), trialW.String()
	meta.Flags["repeats"] = fmt.Sprint(repeats)
	shard.record(meta)
	meta.Precision = prec
	for _, c := range cases {
		meta.Workloads = append(meta.Workloads, c.Key())
	}
	err = runmeta.Describe(meta, runmeta.Stack{RepoDir: inRepo("."), EnvoyBinary: st.spec.Binary,
		ModuleDir: sf.moduleDir, CRSDir: sf.crsDir, Modes: ms})
	if me := (*runmeta.ModuleError)(nil); errors.As(err, &me) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	if sharedNote != "" {
		meta.Notes = append(meta.Notes, sharedNote)
	}
	if n := workersNote(sf.concurrency, st.spec.CPUs); n != "" {
		meta.Notes = append(meta.Notes, n)
		fmt.Fprintln(stderr, "wafbench: "+n)
	}

	dir := filepath.Join(resultsDir, time.Now().UTC().Format("20060102T150405Z")+"-"+name)
	if err := os.MkdirAll(resultsDir, 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	lock.SetRun(dir)
	if err := result.WriteMeta(dir, meta); err != nil {
		return err
	}
	// Room for the final meta.json, should the disk fill during the run.
	release, err := result.Reserve(dir)
	if err != nil {
		return finish(dir, meta, func() {}, err)
	}
	fmt.Fprintf(stderr, "wafbench: run directory %s (%d trials, %d workloads each)\n", dir, len(trials), len(trials[0].Cases))

	if err := cpu.PinSelf(st.cpus.Client); err != nil {
		return finish(dir, meta, release, fmt.Errorf("pin driver to CPUs %s: %w", cpu.Format(st.cpus.Client), err))
	}
	var prog *runner.Progress
	if progress == "always" || (progress == "auto" && isTerminal(stderr)) {
		prog = runner.NewProgress(stderr, trials, warmup, duration, trialW)
	}
	cfg := &runner.Config{
		Dir: dir, Self: self, Set: set, Cases: cases, Trials: trials,
		TrialWarmup: trialW, Warmup: warmup, Duration: duration, MaxRequests: maxRequests, Rate: rate, Timeout: reqTimeout,
		Envoy: st.spec, ClientCPUs: st.cpus.Client, UpstreamCPU: st.cpus.Upstream, Upstream: upKind,
		Progress: prog, PerfFreqHz: perfHz, Modes: byName, Shard: shard.name(),
		ConnMode: *connMode, Arrival: arr, ArrivalSeed: seed, MaxRate: maxRate,
	}
	cfg.Budget = newBudget(prec, popts, stderr)
	if prog == nil {
		cfg.Log = stderr
	}
	recs, runErr := runner.Run(ctx, cfg)
	recordBudget(meta, cfg.Budget)
	if err := finish(dir, meta, release, runErr); err != nil && runErr == nil {
		runErr = err
	}
	// The verdicts the run was measured under; its records are on disk already.
	if corpus != nil && ctx.Err() == nil {
		if res, err := writeMatrix(ctx, cfg, corpus, ms); err != nil {
			fmt.Fprintf(stderr, "wafbench: matrix: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "wafbench: %s (%s)\n", summarizeMatrix(res), filepath.Join(dir, matrix.MarkdownFile))
		}
	}
	if files, err := export.WriteRun(dir, recs); err != nil {
		fmt.Fprintf(stderr, "wafbench: export: %v\n", err)
	} else if len(files.HGRM) > 0 {
		fmt.Fprintf(stderr, "wafbench: exported %d .hgrm and %d fortio JSON files (%s)\n", len(files.HGRM), len(files.Fortio), filepath.Join(dir, export.Dir))
	}
	report.Table(stdout, recs)
	if err := attachProtection(dir, crsTestFrom); err != nil {
		fmt.Fprintf(stderr, "wafbench: --crs-test: %v\n", err)
	}
	if !noReport {
		if err := report.Build(dir, stderr); err != nil {
			fmt.Fprintf(stderr, "wafbench: report: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "wafbench: report %s\n", filepath.Join(dir, "report.md"))
		}
	}
	fmt.Fprintf(stdout, "results: %s\n", dir)
	return runErr
}

// finish records how the run ended in meta.json, first releasing the space
// reserved for it (result.Reserve).
func finish(dir string, meta *result.Meta, release func(), runErr error) error {
	release()
	meta.End(runErr)
	if err := result.WriteMeta(dir, meta); err != nil {
		if runErr != nil {
			return fmt.Errorf("%w (and meta.json still says \"running\": %v)", runErr, err)
		}
		return err
	}
	return runErr
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
