package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"wafbench/driver/cpu"
	"wafbench/driver/host"
	"wafbench/driver/modes"
	"wafbench/driver/perf"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/refhost"
	"wafbench/driver/report"
	"wafbench/driver/result"
	"wafbench/driver/runlock"
	"wafbench/driver/runner"
	"wafbench/filters/crs"
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
		noReport, allowShared    bool
		perfHz                   int
	)
	sf.register(fs)
	fs.StringVar(&suiteName, "suite", "seed", "suite from the profiles (quick, seed, …)")
	fs.StringVar(&modesArg, "modes", "passthrough,modsecurity,coraza", "comma-separated modes to compare: passthrough, an engine (its default build) or <engine>@<build> from --builds (e.g. modsecurity@3.0.14-pgo, coraza@re2; 'wafbench build --list' lists them); reference hosts: ref-direct (client to upstream, no proxy), ref-nginx-modsecurity[@<build>] (nginx + ModSecurity connector, same CRS, on Debian's or that build's libmodsecurity)")
	fs.StringVar(&workloads, "workloads", "", "comma-separated workload@conns to run instead of the suite's list (workload alone = every conns it lists)")
	fs.StringVar(&profilesDir, "profiles", inRepo("profiles"), "directory of workload/suite YAML files")
	fs.StringVar(&resultsDir, "results", inRepo("results"), "parent directory of run directories")
	fs.StringVar(&name, "name", "", "run name, the suffix of the run directory (default: the suite name)")
	fs.IntVar(&repeats, "repeats", 0, "repeats (blocks of every mode once); 0 = the suite's")
	fs.DurationVar(&warmup, "warmup", -1, "warmup before each workload's measured window; negative = the suite's")
	fs.DurationVar(&duration, "duration", 0, "measured window per workload; 0 = the suite's")
	fs.DurationVar(&trialW, "trial-warmup", -1, "warmup of each fresh Envoy before its first workload; negative = the suite's")
	fs.Int64Var(&maxRequests, "max-requests", 0, "cap on requests per measured window; 0 = no cap (time only)")
	fs.Float64Var(&rate, "rate", 0, "open-loop target rate in req/s over all connections; 0 = closed loop")
	fs.StringVar(&order, "order", plan.Latin, "mode order across repeats: latin (rotate) or shuffle (seeded)")
	fs.Int64Var(&seed, "seed", 1, "seed for --order shuffle (recorded in meta.json)")
	fs.StringVar(&scope, "trial-scope", plan.PerModeRepeat, "fresh Envoy per: mode-repeat (runs all workloads, as seed B) or workload")
	fs.StringVar(&progress, "progress", "auto", "progress line on stderr: auto (only on a terminal), always, never")
	fs.IntVar(&perfHz, "perf", 0, "record Envoy with 'perf record -e cpu-clock -g' at this many Hz over every measured window (perf/*.data and a flat .txt report per workload); 0 = off")
	fs.BoolVar(&noReport, "no-report", false, "skip building summary, report and charts after the run")
	fs.BoolVar(&allowShared, "allow-shared-cpus", false, "run even when Envoy's CPUs overlap the client's or the upstream's (refused by default: the figures would include their contention; recorded in meta.json)")
	if err := parse(fs, args, stdout, runUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q", fs.Arg(0))
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
		keys = strings.Split(workloads, ",")
	}
	cases, err := set.Cases(keys)
	if err != nil {
		return usageError{err.Error()}
	}
	ms, err := sf.parseModes(modesArg)
	if err != nil {
		return err
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
	if duration < 0 || maxRequests < 0 || rate < 0 {
		return usagef("--duration, --max-requests and --rate must not be negative")
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
	self, err := os.Executable()
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
	}
	fs.VisitAll(func(f *flag.Flag) { meta.Flags[f.Name] = f.Value.String() })
	meta.Flags["duration"], meta.Flags["warmup"], meta.Flags["trial-warmup"] = duration.String(), warmup.String(), trialW.String()
	meta.Flags["repeats"] = fmt.Sprint(repeats)
	for _, c := range cases {
		meta.Workloads = append(meta.Workloads, c.Key())
	}
	if err := describe(meta, st, sf, ms); err != nil {
		return err
	}
	if sharedNote != "" {
		meta.Notes = append(meta.Notes, sharedNote)
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
		TrialWarmup: trialW, Warmup: warmup, Duration: duration, MaxRequests: maxRequests, Rate: rate,
		Envoy: st.spec, ClientCPUs: st.cpus.Client, UpstreamCPU: st.cpus.Upstream,
		Progress: prog, PerfFreqHz: perfHz, Modes: byName,
	}
	if prog == nil {
		cfg.Log = stderr
	}
	recs, runErr := runner.Run(ctx, cfg)
	if err := finish(dir, meta, release, runErr); err != nil && runErr == nil {
		runErr = err
	}
	report.Table(stdout, recs)
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
	meta.FinishedUTC = time.Now().UTC().Format(time.RFC3339)
	switch {
	case runErr == nil:
		meta.Status = "complete"
	case errors.Is(runErr, context.Canceled):
		meta.Status = "interrupted"
	default:
		meta.Status = "failed"
		meta.Notes = append(meta.Notes, "run error: "+runErr.Error())
	}
	if err := result.WriteMeta(dir, meta); err != nil {
		if runErr != nil {
			return fmt.Errorf("%w (and meta.json still says \"running\": %v)", runErr, err)
		}
		return err
	}
	return runErr
}

// describe fills the environment, version and hash fields of meta, and
// exports the CRS first if a WAF mode needs it.
func describe(meta *result.Meta, st *resolved, sf stackFlags, ms []modes.Mode) error {
	f := host.Collect(inRepo("."))
	meta.GitSHA, meta.GitDirty, meta.GoVersion, meta.Arch = f.GitSHA, f.GitDirty, f.GoVersion, runtime.GOARCH
	meta.Kernel, meta.CPUModel, meta.NumCPU, meta.Governor, meta.SMT = f.Kernel, f.CPUModel, f.NumCPU, f.Governor, f.SMT
	// Envoy inherits this process's environment; record what changes how
	// the engines run (Go's GC in the Coraza module, the stage timers).
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS", "WAFBENCH_STAGE_TIMERS", "LLVM_PROFILE_FILE"} {
		if v, ok := os.LookupEnv(k); ok {
			meta.Notes = append(meta.Notes, fmt.Sprintf("environment passed to Envoy: %s=%s", k, v))
		}
	}
	sum, err := host.FileSHA256(st.spec.Binary)
	if err != nil {
		return err
	}
	meta.EnvoySHA256 = sum
	waf := false
	for _, m := range ms {
		if m.Engine == "" {
			continue
		}
		waf = true
		mod, err := describeModule(sf.moduleDir, m)
		if err != nil {
			return err
		}
		if meta.Modules == nil {
			meta.Modules = map[string]result.Module{}
		}
		meta.Modules[m.String()] = mod
	}
	if !waf {
		return nil
	}
	man, err := ensureCRS(sf.crsDir)
	if err != nil {
		return err
	}
	meta.CRS, err = crsMeta(man, sf.crsDir)
	return err
}

// ensureCRS makes dir hold the rule files the engines load. The default
// directory (build/crs, a build output) is exported afresh at every run
// start, so an export left by an older wafbench is brought up to date (only
// files that differ are rewritten). A directory given with --crs-dir is used
// as it is, once it holds an export; crsMeta then notes how it differs from
// this wafbench's own export.
func ensureCRS(dir string) (*crs.Manifest, error) {
	if filepath.Clean(dir) != inRepo("build/crs") {
		if man, err := crs.ReadManifest(dir); err == nil {
			return man, nil
		}
	}
	man, err := crs.Export(dir, crs.Options{})
	if err != nil {
		return nil, fmt.Errorf("export CRS to %s: %w", dir, err)
	}
	return man, nil
}

// crsDifferences lists the files whose content in dir differs from what
// this wafbench exports (none for the default directory).
func crsDifferences(dir string, files map[string]string) ([]string, error) {
	tmp, err := os.MkdirTemp("", "wafbench-crs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if _, err := crs.Export(tmp, crs.Options{}); err != nil {
		return nil, err
	}
	want, _, err := hashTree(tmp)
	if err != nil {
		return nil, err
	}
	var out []string
	for name, sum := range files {
		if want[name] != sum {
			out = append(out, name)
		}
	}
	for name := range want {
		if _, ok := files[name]; !ok {
			out = append(out, name+" (not loaded)")
		}
	}
	sort.Strings(out)
	return out, nil
}

// crsMeta describes the rule set. Its hashes are computed now, from the
// files in dir that the engines will load, not taken from the export's
// manifest (which an edit after export would not update); the manifest's
// version and adaptations are recorded beside them.
func crsMeta(man *crs.Manifest, dir string) (*result.CRS, error) {
	c := &result.CRS{Version: man.Version, Dir: dir, RuleFiles: man.RuleFiles, Files: map[string]string{}}
	files, sum, err := hashTree(dir)
	if err != nil {
		return nil, fmt.Errorf("hash the rule files in %s: %w", dir, err)
	}
	c.SHA256, c.Files = sum, files
	if filepath.Clean(dir) != inRepo("build/crs") {
		diff, err := crsDifferences(dir, files)
		if err != nil {
			return nil, err
		}
		if len(diff) > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("--crs-dir %s differs from this wafbench's export in: %s", dir, strings.Join(diff, ", ")))
		}
	}
	for _, a := range man.Adaptations {
		c.Adaptations = append(c.Adaptations, fmt.Sprintf("%s:%d: %s -> %s (%s)", a.File, a.Line, a.Before, a.After, a.Reason))
	}
	c.ParanoiaLevel, c.Settings = man.ParanoiaLevel, map[string]string{}
	for _, st := range man.Settings {
		c.Settings[st.Name] = st.Line
	}
	return c, nil
}

// hashTree hashes exactly the files an engine reads when it loads
// dir/main.conf (crs.Files: main.conf, every include, every data file):
// each file's SHA-256 by path relative to dir, and one SHA-256 over
// "path sha\n" lines in the order the engines read them.
func hashTree(dir string) (map[string]string, string, error) {
	paths, err := crs.Files(dir)
	if err != nil {
		return nil, "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	files := map[string]string{}
	h := sha256.New()
	for _, path := range paths {
		rel, err := filepath.Rel(abs, path)
		if err != nil {
			return nil, "", err
		}
		sum, err := host.FileSHA256(path)
		if err != nil {
			return nil, "", err
		}
		files[rel] = sum
		fmt.Fprintf(h, "%s %s\n", rel, sum)
	}
	return files, hex.EncodeToString(h.Sum(nil)), nil
}

// describeModule records what a WAF mode runs: for a build, its manifest
// (compiler, flags, source and profile hashes); for nginx, the connector.
func describeModule(moduleDir string, m modes.Mode) (result.Module, error) {
	var mod result.Module
	if m.Build != nil {
		mod.BuildName = m.Build.Mode()
		mod.Engine, mod.EngineVersion = m.Engine, m.Build.Version
		mod.Build = buildSummary(m)
		if b, err := os.ReadFile(filepath.Join(m.Dir, "manifest.json")); err == nil {
			mod.Manifest = b
		}
	}
	if m.Host == modes.Nginx {
		mod.Path = refhost.NginxModule
		mod.Engine = "libmodsecurity (nginx connector " + refhost.Version(m.String()) + ")"
		mod.SHA256, _ = host.FileSHA256(refhost.NginxModule)
		if m.Build == nil {
			mod.Build = "Debian packages"
			if out, err := exec.Command("pkg-config", "--modversion", "modsecurity").Output(); err == nil {
				mod.EngineVersion = strings.TrimSpace(string(out))
			}
		}
		return mod, nil
	}
	dir := m.Dir
	if moduleDir != "" {
		dir = moduleDir
		mod.Build += " (module from --module-dir " + moduleDir + ")"
	}
	mod.Path = filepath.Join(dir, "libwafbench_"+m.Engine+".so")
	sum, err := host.FileSHA256(mod.Path)
	if err != nil {
		return result.Module{}, usagef("mode %s: %v", m, err)
	}
	mod.SHA256 = sum
	if m.Engine == modes.Coraza {
		mod.EngineVersion, _ = goModuleInfo(mod.Path)
	}
	return mod, nil
}

// buildSummary is one line of a build's recipe for tables.
func buildSummary(m modes.Mode) string {
	b := m.Build
	parts := []string{b.Compiler}
	if b.Flags != "" {
		parts = append(parts, b.Flags)
	}
	if b.LTO != "" {
		parts = append(parts, "LTO="+b.LTO)
	}
	if len(b.Tags) > 0 {
		parts = append(parts, "tags="+strings.Join(b.Tags, ","))
	}
	if b.PGO != nil {
		parts = append(parts, "PGO(train: "+b.PGO.Training+")")
	}
	if b.Instrument {
		parts = append(parts, "instrumented")
	}
	return strings.Join(append(parts, b.Link), " ")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
