package session

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"wafbench/driver/cpu"
	"wafbench/driver/downstream"
	"wafbench/driver/hosts/all"
	"wafbench/driver/internal/usage"
	"wafbench/driver/load"
	"wafbench/driver/matrix"
	"wafbench/driver/maxrate"
	"wafbench/driver/modes"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/runner"
	"wafbench/driver/stack"
	"wafbench/driver/stats"
	"wafbench/driver/wafconfig"
)

// Resolve checks req against the workload and suite files (profiles), the
// build registry and the machine's online CPUs and decides the run: the
// defaults are filled in by req.Normalize and nowhere else. It reads no
// file, takes no lock and starts no process; every error is bad input.
func Resolve(req Request, profiles *profile.Set, registry *modes.Registry, cpus []int) (Plan, error) {
	if req.SLO <= 0 {
		return Plan{}, usage.Errorf("--slo: want a latency > 0 like 10ms, got %s", req.SLO)
	}
	suite, ok := profiles.Suites[req.Suite]
	if !ok {
		return Plan{}, usage.Errorf("unknown suite %q (known: %s)", req.Suite, strings.Join(profiles.SuiteNames(), ", "))
	}
	req.Normalize(suite)
	p, err := resolveSuite(req, suite, profiles, registry)
	if err != nil {
		return Plan{}, err
	}
	if err := p.resolveCallgrind(req); err != nil {
		return Plan{}, err
	}
	if err := p.resolveDesign(req, suite); err != nil {
		return Plan{}, err
	}
	if err := p.resolveMachine(req, cpus); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// resolveSuite checks the normalized request's workloads, modes, windows,
// load model and protocol.
func resolveSuite(req Request, suite *profile.Suite, profiles *profile.Set, registry *modes.Registry) (Plan, error) {
	keys := suite.Workloads
	if req.Workloads != "" {
		keys = modes.SplitList(req.Workloads)
	}
	cases, err := profiles.Cases(keys)
	if err != nil {
		return Plan{}, usage.Wrap(err)
	}
	ms, configs, err := resolveModes(req, profiles, registry)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Command: req.Command, RepoDir: req.RepoDir, Suite: req.Suite, Name: req.Name,
		Warmup: req.Warmup, Duration: req.Duration, TrialWarmup: req.TrialWarmup,
		MaxRequests: req.MaxRequests, Rate: req.Rate, Timeout: req.Timeout, ConnMode: req.ConnMode,
		Stack: req.Stack, PerfHz: req.PerfHz, CRSTest: req.CRSTest, ResultsDir: req.ResultsDir,
		NoReport: req.NoReport, NoProtection: req.NoProtection, Progress: req.Progress,
		set: profiles, cases: cases, modeSpecs: ms, configs: configs}
	p.Matrix = matrix.ForSuite(req.Matrix, req.Suite)
	if err := p.resolveLoad(req); err != nil {
		return Plan{}, err
	}
	if err := p.resolveDownstream(req, ms, cases); err != nil {
		return Plan{}, err
	}
	if p.MaxRate, err = req.MaxRate.resolve(); err != nil {
		return Plan{}, err
	}
	for _, m := range ms {
		p.Modes = append(p.Modes, m.String())
	}
	p.Workloads = caseKeys(cases)
	p.Design = plan.Options{Modes: p.Modes, Cases: len(cases), Repeats: req.Repeats, Order: req.Order, Seed: req.Seed, Scope: req.Scope}
	p.recordFlags(req)
	return p, nil
}

// resolveModes reads --modes, expands them over --configs (checking, unless
// --no-protection, that the corpora the protection measurement sends are
// there) and over --envoy-versions.
func resolveModes(req Request, profiles *profile.Set, registry *modes.Registry) ([]modes.Mode, []wafconfig.Config, error) {
	ms, err := registry.ResolveList(req.Modes)
	if err != nil {
		return nil, nil, usage.Errorf("--modes: %v", err)
	}
	configs, err := wafconfig.Parse(modes.SplitList(req.Configs), req.WafConfigs)
	if err != nil {
		return nil, nil, usage.Errorf("--configs: %v", err)
	}
	ms = expandConfigs(ms, configs)
	if len(configs) > 0 && !req.NoProtection {
		// The protection measurement runs after every trial: a missing
		// corpus is bad input now, not a lost half of the run later.
		if _, _, err := legitimate(req.RepoDir, profiles); err != nil {
			return nil, nil, usage.Errorf("--configs: %v (or --no-protection)", err)
		}
	}
	ms, err = withEnvoyReleases(ms, req.EnvoyVersions)
	return ms, configs, err
}

// resolveLoad checks the window and load-model flags.
func (p *Plan) resolveLoad(req Request) error {
	if p.Warmup < 0 || p.TrialWarmup < 0 || p.MaxRequests < 0 || p.Rate < 0 {
		return usage.Errorf("--warmup, --trial-warmup, --max-requests and --rate must not be negative")
	}
	if p.Duration <= 0 {
		return usage.Errorf("--duration: want a window > 0 like 2s, got %v", p.Duration)
	}
	if p.Timeout <= 0 {
		return usage.Errorf("--timeout: want > 0 like 5s, got %v", p.Timeout)
	}
	if _, err := load.ParseConnMode(req.ConnMode); err != nil {
		return usage.Errorf("--conn-mode: %v", err)
	}
	arr, err := load.ParseArrival(req.Arrival)
	if err != nil {
		return usage.Errorf("--arrival: %v", err)
	}
	p.Arrival = string(arr)
	return nil
}

// recordFlags sets the flags meta.json records: those given, with the
// suite's values filled in.
func (p *Plan) recordFlags(req Request) {
	p.Flags = maps.Clone(req.Flags)
	if p.Flags == nil {
		p.Flags = map[string]string{}
	}
	p.Flags["duration"], p.Flags["warmup"], p.Flags["trial-warmup"] = p.Duration.String(), p.Warmup.String(), p.TrialWarmup.String()
	p.Flags["repeats"] = fmt.Sprint(req.Repeats)
	p.Flags["modes"], p.Flags["matrix"], p.Flags["conn-mode"] = req.Modes, p.Matrix, p.ConnMode
	if req.Downstream != "" {
		p.Flags["downstream"], p.Flags["streams"] = req.Downstream, fmt.Sprint(max(req.Streams, 1))
	}
}

// resolveDownstream checks --downstream and --streams against the load
// engine (HTTP/2 runs closed loop, one request at a time over HTTP/1.1)
// and the modes' hosts and workloads (runner.CheckDownstream).
func (p *Plan) resolveDownstream(req Request, ms []modes.Mode, cases []profile.Case) error {
	ds, err := downstream.Parse(req.Downstream)
	if err != nil {
		return usage.Errorf("--downstream: %v", err)
	}
	if err := (&load.Options{Target: "127.0.0.1:1", Conns: 1, Duration: 1, Rate: req.Rate, Downstream: ds, Streams: req.Streams}).Validate(); err != nil {
		return usage.Errorf("--downstream %s: %v", ds, err)
	}
	if err := runner.CheckDownstream(ds, ms, cases); err != nil {
		return usage.Wrap(err)
	}
	if ds != downstream.H1 {
		p.Downstream = ds
	}
	if ds.HTTP2() {
		p.Streams = max(req.Streams, 1)
	}
	return nil
}

// resolveDesign plans the trials, the shard and the precision targets.
func (p *Plan) resolveDesign(req Request, suite *profile.Suite) error {
	trials, err := plan.Build(p.Design)
	if err != nil {
		return usage.Wrap(err)
	}
	if p.Trials, p.Shard, err = selectShard(req.Shard, p.Design, trials); err != nil {
		return err
	}
	pct, err := precisionPct(req)
	if err != nil {
		return err
	}
	p.Precision, err = newPrecision(suite, pct, req.Budget, p.Modes, p.Workloads, p.Design.Repeats)
	return err
}

// resolveMachine partitions the CPUs and checks the flags about the
// machine's tools that need no look at them.
func (p *Plan) resolveMachine(req Request, online []int) error {
	var err error
	if p.CPUs, err = req.Stack.Partition(online); err != nil {
		return err
	}
	if p.SharedNote, err = sharedCPUs(p.CPUs, p.modeSpecs, len(online), req.AllowSharedCPUs); err != nil {
		return err
	}
	if p.PerfHz < 0 || p.PerfHz > 10000 {
		return usage.Errorf("--perf: want 0 (off) or 1..10000 Hz, got %d", p.PerfHz)
	}
	if err := checkPerfDiff(req.PerfDiff, p.PerfHz, p.Modes); err != nil {
		return err
	}
	if err := checkCompare(req.Compare, p.Modes); err != nil {
		return err
	}
	if p.Upstream, err = stack.ParseUpstream(req.Upstream); err != nil {
		return err
	}
	p.Flags["name"] = p.Name
	if p.Name == "" || strings.ContainsAny(p.Name, "/ ") {
		return usage.Errorf("--name: want no slashes or spaces, and not empty; got %q", p.Name)
	}
	p.WorkersNote = workersNote(req.Stack.Concurrency, p.CPUs.Envoy)
	return nil
}

// resolve returns the runner's max-rate configuration, nil when off.
func (f MaxRateRequest) resolve() (*runner.MaxRate, error) {
	if f.At == "" {
		return nil, nil
	}
	obj, err := maxrate.ParseObjective(f.At)
	if err != nil {
		return nil, usage.Errorf("--max-rate-at: %v", err)
	}
	mr := &runner.MaxRate{Search: maxrate.Options{Objective: obj, Start: f.Start, Limit: f.Limit, Tolerance: f.Tol, Votes: f.Votes},
		Window: f.Window, MinRequests: f.MinRequests, MaxWindow: f.MaxWindow, Method: f.Method, SweepStep: f.Step}
	if err := mr.Search.Validate(); err != nil {
		return nil, usage.Errorf("--max-rate: %v", err)
	}
	switch f.Method {
	case runner.MethodSearch, runner.MethodSweep, runner.MethodBoth:
	default:
		return nil, usage.Errorf("--max-rate-method: want search, sweep or both, got %q", f.Method)
	}
	if f.Window <= 0 {
		return nil, usage.Errorf("--max-rate-window: want > 0, got %v", f.Window)
	}
	if f.MinRequests < 0 {
		return nil, usage.Errorf("--max-rate-min-requests: want ≥ 0 (0 = every window --max-rate-window long), got %d", f.MinRequests)
	}
	if f.MaxWindow < f.Window {
		return nil, usage.Errorf("--max-rate-window-max: want ≥ --max-rate-window (%v), got %v", f.Window, f.MaxWindow)
	}
	if f.Step < 0 || (f.Step == 0 && f.Method == runner.MethodSweep) {
		return nil, usage.Errorf("--max-rate-step: want > 0 req/s with --max-rate-method sweep (0 = the search's resolution with both), got %v", f.Step)
	}
	return mr, nil
}

// sharedCPUs applies cpu.Partition.Shared to runs with a proxy (a mode
// without one has nothing to keep apart).
func sharedCPUs(part cpu.Partition, ms []modes.Mode, online int, allow bool) (note string, err error) {
	if !slices.ContainsFunc(ms, func(m modes.Mode) bool { return all.Of(m).Proxy() }) {
		return "", nil
	}
	note, err = part.Shared(online, allow)
	if err != nil {
		return "", usage.Wrap(err)
	}
	return note, nil
}

// workersNote says when --concurrency asks for more Envoy workers than
// Envoy has CPUs: the workers then time-share those CPUs, so a scale run
// measures contention, not scaling. Empty when every worker has a CPU.
func workersNote(concurrency int, envoyCPUs []int) string {
	if concurrency <= len(envoyCPUs) {
		return ""
	}
	return fmt.Sprintf("--concurrency %d: %d Envoy workers share %d CPU(s) (%s); beyond the CPUs, throughput per worker measures time-sharing, not scaling (a scale run needs --concurrency ≤ the Envoy CPUs)",
		concurrency, concurrency, len(envoyCPUs), cpu.Format(envoyCPUs))
}

// checkCompare validates --compare: empty, or pairs A/B of the run's
// modes (stats.ParsePairs).
func checkCompare(arg string, modeNames []string) error {
	pairs, err := stats.ParsePairs(arg)
	if err != nil {
		return usage.Errorf("--compare: %v", err)
	}
	for _, pr := range pairs {
		for _, m := range []string{pr.Num, pr.Den} {
			if !slices.Contains(modeNames, m) {
				return usage.Errorf("--compare: mode %q is not one of the run's modes (%s)", m, strings.Join(modeNames, ", "))
			}
		}
	}
	return nil
}

// checkPerfDiff validates --perf-diff: empty, or two different modes of
// the run, and only with --perf.
func checkPerfDiff(arg string, perfHz int, modeNames []string) error {
	if arg == "" {
		return nil
	}
	if perfHz <= 0 {
		return usage.Errorf("--perf-diff: needs --perf (the profiles it compares)")
	}
	a, b, ok := strings.Cut(arg, ",")
	if !ok || a == "" || b == "" || strings.Contains(b, ",") || a == b {
		return usage.Errorf("--perf-diff: want two different modes A,B, got %q", arg)
	}
	for _, m := range []string{a, b} {
		if !slices.Contains(modeNames, m) {
			return usage.Errorf("--perf-diff: mode %q is not one of the run's modes (%s)", m, strings.Join(modeNames, ", "))
		}
	}
	return nil
}
