package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"wafbench/driver/callgrind"
	"wafbench/driver/conformance"
	"wafbench/driver/cpu"
	"wafbench/driver/export"
	"wafbench/driver/internal/usage"
	"wafbench/driver/load"
	"wafbench/driver/matrix"
	runmeta "wafbench/driver/meta"
	"wafbench/driver/perf"
	"wafbench/driver/plan"
	"wafbench/driver/report"
	"wafbench/driver/result"
	"wafbench/driver/runlock"
	"wafbench/driver/runner"
	"wafbench/driver/stack"
)

// IO is where Execute writes: the results table and the run directory on
// Stdout, progress and notes on Stderr.
type IO struct {
	Stdout, Stderr io.Writer
}

// outcome is what a run left behind.
type outcome struct {
	Dir     string // the run directory; "" when none was created
	Records int    // records appended to raw.jsonl
}

// machine is what Execute learns about the machine before it writes.
type machine struct {
	stack           *stack.Stack
	self            string
	upstreamVersion string
	corpus          *matrix.Corpus
}

// Execute carries p out: it checks the stack (Envoy, modules, perf, the
// upstream, the matrix corpus: bad input, nothing written), takes the run
// lock, writes the run directory and meta.json, runs the trials, then the
// request matrix, the exports, protection.json and the report. The error
// is the run's: nil when every trial was measured.
func Execute(ctx context.Context, p Plan, out IO) (outcome, error) {
	m, err := p.check()
	if err != nil {
		return outcome{}, err
	}
	// One run at a time: a second would halve both runs' throughput.
	lock, err := runlock.Acquire(runlock.Path())
	if err != nil {
		return outcome{}, err
	}
	defer lock.Release()
	if err := p.preflightConfigs(ctx, m, out.Stderr); err != nil {
		return outcome{}, err
	}

	// Everything below writes; everything above only checked.
	meta, err := p.newMeta(m, out.Stderr)
	if err != nil {
		return outcome{}, err
	}
	// Envoy and the other hosts read the run directory's files from their
	// own working directory: a relative --results is made absolute.
	parent, err := filepath.Abs(p.ResultsDir)
	if err != nil {
		return outcome{}, err
	}
	dir := filepath.Join(parent, time.Now().UTC().Format("20060102T150405Z")+"-"+p.Name)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return outcome{}, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return outcome{}, fmt.Errorf("run directory: %w", err)
	}
	lock.SetRun(dir)
	if err := result.WriteMeta(dir, meta); err != nil {
		return outcome{Dir: dir}, err
	}
	// Room for the final meta.json, should the disk fill during the run.
	release, err := result.Reserve(dir)
	if err != nil {
		return outcome{Dir: dir}, finish(dir, meta, func() {}, err)
	}
	fmt.Fprintf(out.Stderr, "wafbench: run directory %s (%d trials, %d workloads each)\n", dir, len(p.Trials), len(p.Trials[0].Cases))

	if err := cpu.PinSelf(p.CPUs.Client); err != nil {
		return outcome{Dir: dir}, finish(dir, meta, release, fmt.Errorf("pin driver to CPUs %s: %w", cpu.Format(p.CPUs.Client), err))
	}
	cfg := p.runnerConfig(dir, m, out.Stderr)
	recs, runErr := runner.Run(ctx, cfg)
	recordBudget(meta, cfg.Budget)
	if err := finish(dir, meta, release, runErr); err != nil && runErr == nil {
		runErr = err
	}
	p.afterTrials(ctx, cfg, m, recs, out)
	return outcome{Dir: dir, Records: len(recs)}, runErr
}

// check looks at the machine: the matrix corpus, the Envoy binary and
// modules, perf, the wafbench executable and the upstream.
func (p *Plan) check() (*machine, error) {
	m := &machine{}
	var err error
	if p.Matrix != "none" {
		if m.corpus, err = matrix.Load(p.Matrix, p.RepoDir); err != nil {
			return nil, usage.Errorf("--matrix: %v", err)
		}
	}
	if err := p.prepareConfigs(); err != nil {
		return nil, err
	}
	if m.stack, err = p.Stack.Check(p.CPUs, p.modeSpecs); err != nil {
		return nil, err
	}
	if p.PerfHz > 0 {
		if err := perf.Available(); err != nil {
			return nil, usage.Errorf("--perf: %v", err)
		}
	}
	if p.Callgrind != nil {
		if err := callgrind.Available(); err != nil {
			return nil, usage.Errorf("--callgrind: %v", err)
		}
		if _, err := os.Stat(filepath.Join(p.callgrindStack.MeterDir, "lib"+callgrind.MeterModule+".so")); err != nil {
			return nil, usage.Errorf("--callgrind: the meter module is not built (`make modules`): %v", err)
		}
	}
	if m.self, err = os.Executable(); err != nil {
		return nil, err
	}
	if m.upstreamVersion, err = stack.Upstream(p.Upstream, m.self); err != nil {
		return nil, err
	}
	return m, nil
}

// newMeta is meta.json as the run starts; the notes about the CPUs are
// also printed on stderr.
func (p *Plan) newMeta(m *machine, stderr io.Writer) (*result.Meta, error) {
	st := m.stack
	meta := &result.Meta{
		RunID: result.NewRunID(), Name: p.Name, StartedUTC: time.Now().UTC().Format(time.RFC3339), Status: "running",
		Command: p.Command, Flags: p.Flags,
		Suite: p.Suite, Modes: p.Modes, Repeats: p.Design.Repeats, Order: p.Design.Order, Seed: p.Design.Seed,
		ModeOrder: plan.ModeOrder(p.Design), TrialScope: p.Design.Scope,
		EnvoyPath: st.Envoy.Binary, EnvoyVersion: st.EnvoyVersion, Concurrency: st.Envoy.Concurrency,
		EnvoyCPUs: st.Envoy.CPUs, ClientCPUs: st.CPUs.Client, UpstreamCPUs: st.CPUs.Upstream,
		Upstream: m.upstreamVersion, Precision: p.Precision, Workloads: p.Workloads,
	}
	p.Shard.record(meta)
	if p.Downstream != "" {
		meta.Downstream = string(p.Downstream)
	}
	err := runmeta.Describe(meta, runmeta.Stack{RepoDir: p.RepoDir, EnvoyBinary: st.Envoy.Binary,
		ModuleDir: p.Stack.ModuleDir, CRSDir: p.Stack.CRSDir, Modes: p.modeSpecs})
	if me := (*runmeta.ModuleError)(nil); errors.As(err, &me) {
		return nil, usage.Wrap(err)
	}
	if err != nil {
		return nil, err
	}
	p.recordConfigs(meta)
	meta.Notes = append(meta.Notes, releaseNotes(st.Envoy.Releases)...)
	if p.SharedNote != "" {
		meta.Notes = append(meta.Notes, p.SharedNote)
	}
	if p.WorkersNote != "" {
		meta.Notes = append(meta.Notes, p.WorkersNote)
		fmt.Fprintln(stderr, "wafbench: "+p.WorkersNote)
	}
	return meta, nil
}

// runnerConfig is the runner's configuration of the trials.
func (p *Plan) runnerConfig(dir string, m *machine, stderr io.Writer) *runner.Config {
	var prog *runner.Progress
	if p.Progress {
		prog = runner.NewProgress(stderr, p.Trials, p.cases, p.Warmup, p.Duration, p.TrialWarmup)
	}
	cfg := &runner.Config{
		Dir: dir, Self: m.self, Set: p.set, Cases: p.cases, Trials: p.Trials,
		TrialWarmup: p.TrialWarmup, Warmup: p.Warmup, Duration: p.Duration, MaxRequests: p.MaxRequests, Rate: p.Rate, Timeout: p.Timeout,
		Envoy: m.stack.Envoy, ClientCPUs: p.CPUs.Client, UpstreamCPU: p.CPUs.Upstream, Upstream: p.Upstream,
		Progress: prog, PerfFreqHz: p.PerfHz, Modes: matrix.ByName(p.modeSpecs), Shard: p.Shard.name(),
		ConnMode: p.ConnMode, Arrival: load.Arrival(p.Arrival), ArrivalSeed: p.Design.Seed, MaxRate: p.MaxRate,
		Downstream: p.Downstream, Streams: p.Streams, Callgrind: p.Callgrind,
	}
	cfg.Envoy.Callgrind = p.callgrindStack
	cfg.Budget = newBudget(p.Precision, p.Design, stderr)
	if prog == nil {
		cfg.Log = stderr
	}
	return cfg
}

// afterTrials writes what a run adds to its records: the matrix of the
// verdicts it was measured under, the exports, the results table,
// protection.json and the report, then prints the report's verdicts and
// its path. A failure here is reported on stderr and
// does not change the run's exit status.
func (p *Plan) afterTrials(ctx context.Context, cfg *runner.Config, m *machine, recs []result.Record, out IO) {
	stdout, stderr := out.Stdout, out.Stderr
	if m.corpus != nil && ctx.Err() == nil {
		if res, err := matrix.Write(ctx, cfg, m.corpus, p.modeSpecs); err != nil {
			fmt.Fprintf(stderr, "wafbench: matrix: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "wafbench: %s (%s)\n", res.Summary(), filepath.Join(cfg.Dir, matrix.MarkdownFile))
		}
	}
	if files, err := export.WriteRun(cfg.Dir, recs); err != nil {
		fmt.Fprintf(stderr, "wafbench: export: %v\n", err)
	} else if len(files.HGRM) > 0 {
		fmt.Fprintf(stderr, "wafbench: exported %d .hgrm and %d fortio JSON files (%s)\n", len(files.HGRM), len(files.Fortio), filepath.Join(cfg.Dir, export.Dir))
	}
	report.Table(stdout, recs)
	if len(p.configs) > 0 && !p.NoProtection && ctx.Err() == nil {
		if err := p.measureProtection(ctx, cfg, stderr); err != nil {
			fmt.Fprintf(stderr, "wafbench: protection: %v\n", err)
		}
	}
	if err := conformance.Attach(cfg.Dir, p.CRSTest, p.RepoDir); err != nil {
		fmt.Fprintf(stderr, "wafbench: --crs-test: %v\n", err)
	}
	if !p.NoReport {
		if err := report.Build(cfg.Dir, stderr); err != nil {
			fmt.Fprintf(stderr, "wafbench: report: %v\n", err)
		} else {
			p.printVerdicts(stdout, stderr, cfg.Dir)
			fmt.Fprintf(stdout, "report: %s\n", filepath.Join(cfg.Dir, report.ReportFile))
		}
	}
	fmt.Fprintf(stdout, "results: %s\n", cfg.Dir)
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
