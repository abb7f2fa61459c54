// Package runner executes a planned run: it starts the upstream and a fresh,
// pinned Envoy per trial, drives every workload through the load engine,
// samples Envoy from procfs around the measured window, verifies affinity and
// appends one result.Record per trial × workload to the run directory.
package runner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"wafbench/driver/cpu"
	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/perf"
	"wafbench/driver/plan"
	"wafbench/driver/procstat"
	"wafbench/driver/profile"
	"wafbench/driver/result"
	"wafbench/driver/upstream"
	"wafbench/driver/verdict"
	"wafbench/internal/atomicfile"
)

// Config is a fully resolved run. Build it with the CLI's flag parsing; Run
// does not re-validate what the CLI already checked.
type Config struct {
	Dir         string // run directory, created by Prepare
	Self        string // path of the wafbench executable (for the upstream child)
	Set         *profile.Set
	Cases       []profile.Case
	Trials      []plan.Trial
	TrialWarmup time.Duration // once per fresh Envoy
	Warmup      time.Duration // per workload, before the measured window
	Duration    time.Duration // measured window per workload
	MaxRequests int64         // cap per measured window; 0 = none
	Rate        float64       // open-loop req/s; 0 = closed loop
	Arrival     load.Arrival  // open-loop arrival process ("" = uniform)
	ArrivalSeed int64         // seed of a Poisson schedule (every window of the run uses it)
	Timeout     time.Duration // per request and per connect; 0 = load.DefaultTimeout
	Envoy       EnvoySpec
	ClientCPUs  []int
	UpstreamCPU []int
	Upstream    upstream.Kind // the upstream server behind every mode; "" is upstream.Own
	Progress    *Progress
	Log         io.Writer // one line per finished workload (may be nil)
	Errs        io.Writer // one line per failed trial, restart or fatal error; nil = os.Stderr
	PerfFreqHz  int       // > 0: perf record Envoy over each measured window at this rate
	ConnMode    string    // run --conn-mode, else the suite's conn_mode; a workload's own wins ("" = keep-alive)
	// Modes resolves every mode name of Trials (driver/modes); a WAF mode's
	// module comes from its build directory unless Envoy.ModuleDir is set.
	Modes map[string]modes.Mode
	Shard string // "i/N" of run --shard, copied into every record; "" when not sharded
	// Downstream is the protocol the client speaks to every host of the
	// run's trials (run --downstream); "" is plain HTTP/1.1. The TLS
	// protocols serve a certificate made for the run (tls/ in Dir, ignored
	// by git). Streams is the HTTP/2 streams per connection (0 = 1).
	// Sessions (matrix, crs-test) keep plain HTTP/1.1.
	Downstream downstream.Protocol
	Streams    int

	// Conformance starts every host in the crs-test configuration
	// (wafbench crs-test): the rules file is internal/crs's crs-test.conf,
	// the modules log every match (match_log) and inspect responses, and the
	// preflight proves identity only (a DetectionOnly host denies nothing);
	// the conformance runner proves that matches are logged.
	Conformance bool

	// Budget, when set (run --precision), adds blocks after Trials.
	Budget *Budget
	// MaxRate, when set (run --max-rate-at), searches each case's highest
	// rate meeting a latency objective before measuring it there.
	MaxRate *MaxRate
	// Callgrind, when set (run --callgrind), counts each case's
	// instructions over a fixed number of requests instead of timing a
	// window (Envoy.Callgrind starts Envoy under callgrind).
	Callgrind *Callgrind
}

// runner is one run of a Config: the Config as given, and what the run
// learns as it goes, which the Config does not hold.
type runner struct {
	*Config
	cert      *downstream.Cert   // the run's certificate (TLS downstreams)
	clientTLS *tls.Config        // the load engine's TLS configuration trusting cert
	writeErr  error              // first failure to append to raw.jsonl (see failTrial)
	capacity  map[string]float64 // closed-loop req/s by capacityKey, for rate sweeps
	// steps remembers, per mode and case, the sweep step a max-rate search
	// gave, for a later repeat that sweeps first. Trials run one at a time.
	steps map[string]float64
	testHooks
}

// testHooks are what a test puts into a run; zero in every other run.
type testHooks struct {
	// onWindowStart, when set, runs as each measured window starts, after
	// the procfs sample: where a test injects a fault.
	onWindowStart func(p *proxy, up *Upstream)
	// seriesFrom and slotEvery replace, when set, the shortest window
	// sampled over time (result.RSSSeriesMin) and its latency slot
	// (result.LatencySlotEvery).
	seriesFrom, slotEvery time.Duration
}

// errTrialsFailed reports that some trials failed but the run finished.
var errTrialsFailed = errors.New("some trials failed")

// Run executes every trial of cfg and appends records to cfg.Dir. It returns
// ctx.Err() when interrupted; every finished record is already on disk.
func Run(ctx context.Context, cfg *Config) ([]result.Record, error) {
	return runAll(ctx, &runner{Config: cfg})
}

// runAll is Run of the run cfg.
func runAll(ctx context.Context, cfg *runner) (recs []result.Record, err error) {
	defer cfg.Progress.Done()
	tmp, err := os.MkdirTemp("", "wafbench-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := cfg.prepareDownstream(); err != nil {
		return nil, err
	}

	up, err := cfg.startUpstream(ctx, tmp)
	if err != nil {
		return nil, err
	}
	defer up.Stop()

	errs := cfg.Errs
	if errs == nil {
		errs = os.Stderr
	}
	failed := 0
	// cfg.extend may append a block after the last trial (run --precision).
	for i := 0; i < len(cfg.Trials) || cfg.extend(ctx, recs); i++ {
		tr := cfg.Trials[i]
		if ctx.Err() != nil {
			return recs, ctx.Err()
		}
		// An upstream that died (killed, crashed) would fail every later
		// trial: start a new one, or end the run now.
		if exited(up.proc.Done(), 0) {
			old := fmt.Sprintf("upstream (pid %d) exited (%s)", up.pid(), exitStatus(up.proc.ExitErr()))
			up.Stop()
			if up, err = cfg.startUpstream(ctx, tmp); err != nil {
				return recs, fmt.Errorf("%s and could not be restarted: %w; run ended before trial %d of %d", old, err, tr.Index, len(cfg.Trials))
			}
			defer up.Stop()
			fmt.Fprintf(errs, "wafbench: %s; restarted it (pid %d, %s) for trial %d\n", old, up.pid(), up.Addr, tr.Index)
		}
		got, err := runTrial(ctx, cfg, tr, up, tmp)
		recs = append(recs, got...)
		if ctx.Err() != nil {
			return recs, ctx.Err()
		}
		var we *writeError
		if errors.As(err, &we) || cfg.writeErr != nil {
			if we == nil {
				we = &writeError{cfg.writeErr}
			}
			return recs, fmt.Errorf("trial %d (%s, repeat %d): %w; run ended", tr.Index, tr.Mode, tr.Repeat, we)
		}
		if err != nil {
			failed++
			fmt.Fprintf(errs, "wafbench: trial %d (%s, repeat %d) failed: %v\n", tr.Index, tr.Mode, tr.Repeat, err)
		}
	}
	if failed > 0 {
		return recs, fmt.Errorf("%w: %d of %d", errTrialsFailed, failed, len(cfg.Trials))
	}
	return recs, nil
}

func runTrial(ctx context.Context, cfg *runner, tr plan.Trial, up *Upstream, tmp string) ([]result.Record, error) {
	tag := fmt.Sprintf("t%02d-r%d-%s", tr.Index, tr.Repeat, strings.ReplaceAll(tr.Mode, "@", "_"))
	if len(tr.Cases) == 1 {
		tag += "-" + strings.ReplaceAll(cfg.Cases[tr.Cases[0]].Key(), "@", "-c")
	}
	cfg.Progress.trial(tr, "starting "+cfg.processName(tr.Mode))
	p, err := startProxy(ctx, cfg, tr.Mode, up.Addr, tmp, tag)
	if err != nil {
		return failTrial(cfg, tr, err), err
	}
	defer removeIfEmpty(p.LogPath) // after stop: Envoy could not write it (a full disk)
	defer p.Stop()

	statsRel := ""
	if p.Stats != nil {
		statsRel = filepath.Join("stats", tag+".json")
	}
	cfg.Progress.trial(tr, "preflight")
	pf, err := preflight(ctx, cfg.Modes[tr.Mode], p, false, cfg.client())
	if err != nil {
		return failTrial(cfg, tr, err), err
	}
	var recs []result.Record
	if cfg.TrialWarmup > 0 {
		cfg.Progress.trial(tr, "warming up")
		wc := cfg.Cases[tr.Cases[0]]
		if _, err := drive(ctx, cfg, load.Options{Target: p.Addr, Conns: wc.Conns, Duration: cfg.TrialWarmup, Timeout: cfg.Timeout, Seed: cfg.ArrivalSeed}, wc, tr.Mode); err != nil {
			return failTrial(cfg, tr, fmt.Errorf("trial warmup: %w", err)), err
		}
	}
	var trialErr error
	for i, ci := range tr.Cases {
		c := cfg.Cases[ci]
		cfg.Progress.Case(tr, c, i)
		rec := measure(ctx, cfg, tr, c, p, up)
		noteCapacity(cfg, tr, c, &rec)
		rec.StatsFile = statsRel
		if i == 0 {
			if rec.Sidecar != nil {
				rec.Sidecar.ReadyMs = p.Sidecar.ReadyMs
			}
			rec.Startup = p.Startup
			if pf != nil {
				rec.Preflight = pf.Record()
			}
		}
		if err := result.Append(cfg.Dir, &rec); err != nil {
			return recs, &writeError{err}
		}
		recs = append(recs, rec)
		if cfg.Log != nil {
			fmt.Fprintln(cfg.Log, logLine(&rec))
		}
		if rec.Error != "" {
			if trialErr == nil {
				trialErr = errors.New(rec.Error)
			}
			if slowWindow(&rec) || verdictPoint(&rec, p) {
				continue // the process is fine: measure the trial's other workloads
			}
			break
		}
		if rec.Interrupted {
			break
		}
	}
	if p.Stats != nil {
		if err := saveStats(ctx, cfg.Dir, statsRel, p.Stats); err != nil && trialErr == nil && ctx.Err() == nil {
			trialErr = err
		}
	}
	return recs, trialErr
}

// proxy is what a trial measures: a fresh Envoy, or a reference host.
type proxy = hosts.Process

// hostOf is the host of mode (a name of cfg.Trials, resolved in cfg.Modes).
func (cfg *Config) hostOf(mode string) hosts.Host { return all.Of(cfg.Modes[mode]) }

// processName names the proxy process of mode in messages and affinity
// records.
func (cfg *Config) processName(mode string) string { return cfg.hostOf(mode).ProcessName() }

// startProxy starts the host of mode as a trial runs it.
func startProxy(ctx context.Context, cfg *runner, mode, upstreamAddr, tmp, tag string) (*proxy, error) {
	st := cfg.downstreamStack(cfg.Envoy)
	if cfg.Conformance {
		st.MatchLog, st.InspectResponse = true, true
	}
	m := cfg.Modes[mode]
	if m.RulesFile != "" && !cfg.Conformance {
		st.RulesFile = m.RulesFile // the mode's configuration (--configs)
	}
	return all.Of(m).Start(ctx, m, st, hosts.Where{UpstreamAddr: upstreamAddr, Dir: cfg.Dir, TmpDir: tmp, Tag: tag})
}

// measure runs case c of trial tr against p: its record as the trial
// intends it, filled by the one strategy that measures the case.
func measure(ctx context.Context, cfg *runner, tr plan.Trial, c profile.Case, p *proxy, up *Upstream) result.Record {
	rate, capacity, rateErr := caseRate(cfg, tr, c)
	rec := newRecord(cfg, tr, c, rate, capacity)
	rec.Sidecar = sidecarRecord(cfg.Modes[tr.Mode], p.Sidecar)
	cr := &caseRun{ctx: ctx, cfg: cfg, tr: tr, c: c, p: p, up: up, rate: rate}
	strategyFor(cfg, c, rateErr).measure(cr, &rec)
	return rec
}

// newRecord is the record of case c in trial tr before anything is
// measured: what the trial intends.
func newRecord(cfg *runner, tr plan.Trial, c profile.Case, rate, capacity float64) result.Record {
	rec := result.Record{
		Case: result.Case{
			Trial: tr.Index, Repeat: tr.Repeat, Position: tr.Position, Mode: tr.Mode,
			Build: buildOf(cfg, tr.Mode), Workload: c.Workload.Name, Conns: c.Conns, Load: "closed",
			Shard: cfg.Shard,
		},
		OpenLoop: result.OpenLoop{
			RateRequestedPerS: rate, LoadFraction: c.LoadFraction(), CapacityPerS: capacity,
		},
		Window:      result.Window{WarmupS: cfg.Warmup.Seconds(), ExpectStatus: c.Workload.Expected(tr.Mode)},
		EnvoyBinary: result.EnvoyBinary{EnvoyConcurrency: cfg.Envoy.Concurrency},
	}
	cfg.recordDownstream(&rec)
	if modes.HostOf(tr.Mode) == modes.Envoy {
		r := cfg.Envoy.Releases[modes.EnvoyOf(tr.Mode)]
		rec.EnvoyVersion, rec.EnvoySHA256 = r.Version, r.SHA256
	}
	return rec
}

// searchRate runs the max-rate search of case c and records it in rec. It
// returns the rate found, or false when the search ended the record
// (interrupted, failed, or no rate met the objective).
func searchRate(ctx context.Context, cfg *runner, tr plan.Trial, c profile.Case, p *proxy, rec *result.Record) (float64, bool) {
	found, err := searchCase(ctx, cfg, c, p, tr.Mode, tr.Repeat)
	rec.MaxRate = found
	switch {
	case ctx.Err() != nil:
		rec.Interrupted = true
		return 0, false
	case err != nil:
		rec.Error = err.Error()
		return 0, false
	case found[0].Rate == 0:
		start := found[0].Steps[0].Rate // the search's first rate: its start, given or from capacity
		rec.Error = fmt.Sprintf("max-rate: no rate from %.3g req/s down to %.3g met %s (lowest failing %.3g req/s)", start, start/64, found[0].Objective, found[0].Above)
		return 0, false
	}
	rec.RateRequestedPerS = found[0].Rate
	return found[0].Rate, true
}

// recordLoadModel records the load model of a window at rate (0 = closed
// loop) with connMode.
func recordLoadModel(rec *result.Record, cfg *runner, rate float64, connMode load.ConnMode) {
	if rate > 0 {
		rec.Load = "open"
		a, _ := load.ParseArrival(string(cfg.Arrival))
		rec.Arrival = string(a)
		if a == load.ArrivalPoisson {
			rec.ArrivalSeed = cfg.ArrivalSeed
		}
	}
	if connMode != load.ConnKeepAlive {
		rec.ConnMode = string(connMode)
	}
}

// measuredWindow is one measured window of a case: the proxy's procfs samples at
// its start and end, the perf recording and the attack stream beside it,
// and the first error any of them met.
type measuredWindow struct {
	ctx           context.Context
	cfg           *runner
	tr            plan.Trial
	c             profile.Case
	p             *proxy
	up            *Upstream
	rec           *result.Record
	before, after procstat.Snapshot
	// sidecarBefore and sidecarAfter sample the wafbench-extproc server
	// of an external mode at the same edges.
	sidecarBefore, sidecarAfter procstat.Snapshot
	sampleErr                   error
	perf                        *perf.Recording
	perfData                    string
	atk                         *verdict.Stream
	rss                         *rssSampler
	src                         loadSource    // what the window sends
	req                         load.Request  // a single-request source's request
	connMode                    load.ConnMode // the case's connection mode
	perfHz                      int           // > 0: perf records the proxy over the window at this rate
	// window and timeout are the measured window and the per-request
	// timeout: the run's, the workload's max_window, or stretched for an
	// input that costs seconds (profile.Case.Stretched).
	window, timeout time.Duration
}

// fail keeps err when it is the window's first sampling error.
func (w *measuredWindow) fail(err error) {
	if err != nil && w.sampleErr == nil {
		w.sampleErr = err
	}
}

// check verifies the affinity of the proxy and upstream threads at when.
func (w *measuredWindow) check(when string) {
	threads, err := verifyAffinity(w.cfg, w.cfg.processName(w.tr.Mode), w.p.PID, w.up.pid(), when)
	w.rec.Affinity = append(w.rec.Affinity, threads...)
	w.fail(err)
	if sc := w.p.Sidecar; sc != nil {
		threads, err := cpu.Verify(sc.PID, sc.CPUs)
		for _, t := range threads {
			w.rec.Affinity = append(w.rec.Affinity, result.ThreadAffinity{Process: sc.Name, TID: t.TID, Name: t.Name, CPUs: t.CPUs, When: when})
		}
		if err != nil {
			w.fail(fmt.Errorf("%s: %w", sc.Name, err))
		}
	}
}

// options are the load options of the window, sampling at its edges.
func (w *measuredWindow) options(rate float64, connMode load.ConnMode) load.Options {
	cfg := w.cfg
	return load.Options{
		Target:       w.p.Addr,
		Conns:        w.c.Conns,
		Warmup:       cfg.Warmup,
		Duration:     w.window,
		MaxRequests:  cfg.MaxRequests,
		Rate:         rate,
		Timeout:      w.timeout,
		ConnMode:     connMode,
		Arrival:      cfg.Arrival,
		Seed:         cfg.ArrivalSeed,
		Downstream:   cfg.Downstream,
		TLS:          cfg.clientTLS,
		Streams:      cfg.Streams,
		SlotEvery:    cfg.latencySlot(w.c),
		OnWarmupEnd:  w.start,
		OnMeasureEnd: w.end,
	}
}

// start opens the window: sample, affinity, attacks, perf.
func (w *measuredWindow) start() {
	cfg, p := w.cfg, w.p
	if p.PID != 0 {
		var err error
		w.before, err = procstat.Sample(p.PID)
		w.fail(err)
	}
	if p.Sidecar != nil {
		var err error
		w.sidecarBefore, err = procstat.Sample(p.Sidecar.PID)
		w.fail(err)
	}
	w.check("after_warmup")
	w.atk = startAttacks(w.ctx, cfg, w.tr, w.c, p.Addr, w.rec)
	if cfg.onWindowStart != nil {
		cfg.onWindowStart(p, w.up)
	}
	if w.perfHz > 0 && p.PID != 0 {
		var err error
		pids := []int{p.PID}
		if p.Sidecar != nil {
			pids = append(pids, p.Sidecar.PID) // the server's engine, gRPC and protobuf sampled beside Envoy
		}
		w.perf, err = perf.Start(pids, w.perfData, w.perfHz, cfg.ClientCPUs)
		w.fail(err)
	}
	if cfg.overTime(w.c) && p.PID != 0 {
		w.rss = startRSS(p.PID)
		w.rec.AllocatorStart = allocator(w.ctx, p)
	}
}

// overTime reports whether case c's windows are sampled over time: the
// proxy's RSS once a second, latencies by slot (the soak suite).
func (cfg *runner) overTime(c profile.Case) bool {
	from := cfg.seriesFrom
	if from == 0 {
		from = result.RSSSeriesMin
	}
	return c.Window(cfg.Duration) >= from
}

// latencySlot is the latency slot of case c's windows; 0 when they are
// not sampled over time.
func (cfg *runner) latencySlot(c profile.Case) time.Duration {
	switch {
	case !cfg.overTime(c):
		return 0
	case cfg.slotEvery > 0:
		return cfg.slotEvery
	}
	return result.LatencySlotEvery
}

// end closes the window with the end sample.
func (w *measuredWindow) end() {
	defer stopAttacks(w.atk, w.rec) // after the sample: a stopping stream is not the window's
	if w.p.PID == 0 {
		return
	}
	if w.rss != nil {
		ss, err := w.rss.stop()
		w.rec.RSSSeriesKiB, w.rec.CPUSeriesUs = ss.kib, ss.cpu
		w.rec.WaitSeriesUs, w.rec.StealSeriesUs = ss.wait, ss.steal
		w.rec.AllocatorEnd = allocator(w.ctx, w.p)
		w.fail(err)
	}
	var err error
	w.after, err = procstat.Sample(w.p.PID)
	w.fail(err)
	if w.p.Sidecar != nil {
		w.sidecarAfter, err = procstat.Sample(w.p.Sidecar.PID)
		w.fail(err)
	}
}

// drive sends the window's load with opts.
func (w *measuredWindow) drive(opts load.Options) (*load.Result, error) {
	return w.src.drive(w, opts)
}

// stopPerf ends the perf recording and writes its flat report.
func (w *measuredWindow) stopPerf() {
	if w.perf == nil {
		return
	}
	if err := w.perf.Stop(); err != nil {
		w.fail(err)
		return
	}
	w.fail(perf.Report(w.perfData, strings.TrimSuffix(w.perfData, ".data")+".txt"))
	w.rec.PerfFile, _ = filepath.Rel(w.cfg.Dir, w.perfData)
}

// judge records how the window ended, the first cause winning: an
// interrupt, the proxy or upstream dying, the load's error, a sampling
// error, or a window without one expected response.
func (w *measuredWindow) judge(res *load.Result, err error) {
	rec, p, up := w.rec, w.p, w.up
	death := ""
	if w.ctx.Err() == nil {
		death = deathDuring(p, up, w.cfg.hostOf(w.tr.Mode).Title(), w.c.Key(), err != nil || w.sampleErr != nil || len(rec.Errors) > 0)
	}
	switch {
	case w.ctx.Err() != nil:
		rec.Interrupted = true
	case death != "":
		rec.Error = death
	case err != nil:
		rec.Error = err.Error()
	case w.sampleErr != nil:
		rec.Error = w.sampleErr.Error()
	case rec.Requests == 0:
		rec.Error = emptyWindow(res, rec.ExpectStatus)
	}
}

// fillCPU records the proxy's CPU and memory over the window when both
// samples were taken.
func fillCPU(rec *result.Record, before, after procstat.Snapshot) {
	if before.At.IsZero() || after.At.IsZero() {
		return
	}
	d := procstat.Delta(before, after)
	rec.CPU.SchedstatNs = d.SchedstatNs
	rec.CPU.TicksNs = d.TicksNs
	rec.CPU.ClockNs = d.ClockNs
	if rec.Requests > 0 {
		rec.CPU.UsPerRequest = float64(d.SchedstatNs) / 1e3 / float64(rec.Requests)
	}
	if d.Wall > 0 {
		rec.CPU.Utilization = float64(d.SchedstatNs) / float64(d.Wall.Nanoseconds())
	}
	rec.Memory = result.Memory{RSSAfterWarmupKiB: before.RSSKiB, RSSEndKiB: after.RSSKiB, PeakKiB: after.HWMKiB}
}

// sidecarRecord is what a record of mode m says of its wafbench-extproc
// server before anything is measured; nil when m runs none.
func sidecarRecord(m modes.Mode, sc *hosts.Sidecar) *result.Sidecar {
	if sc == nil {
		return nil
	}
	return &result.Sidecar{Integration: string(m.Integration()), Process: sc.Name, Transport: sc.Transport,
		Placement: sc.Placement, CPUs: sc.CPUs, GoMaxProcs: sc.GoMaxProcs, FailureModeAllow: sc.FailureModeAllow}
}

// fillSidecar records the wafbench-extproc server's CPU and memory over
// the window, as fillCPU does Envoy's, when both samples were taken.
func fillSidecar(rec *result.Record, before, after procstat.Snapshot) {
	if rec.Sidecar == nil {
		return
	}
	var proxy result.Record
	proxy.Requests = rec.Requests
	fillCPU(&proxy, before, after)
	rec.Sidecar.CPU, rec.Sidecar.Memory = proxy.CPU, proxy.Memory
}

func fillLoad(rec *result.Record, res *load.Result) {
	rec.Requests = res.Requests
	rec.DurationS = res.Elapsed.Seconds()
	rec.ReqPerS = res.ReqPerS()
	rec.RateAchievedPerS = res.RateAchieved
	if rec.RateAchievedPerS == 0 {
		rec.RateAchievedPerS = rec.ReqPerS
	}
	rec.PerSecond = res.PerSecond
	rec.Late = res.Late
	rec.Lagged = res.Lagged
	rec.Stalled = res.Stalled
	rec.Due = res.Due
	rec.WarmupErrors = res.WarmupErrors
	rec.BehindRate = res.FellBehind()
	if len(res.Errors) > 0 {
		rec.Errors = res.Errors
	}
	if len(res.Statuses) > 0 {
		rec.Statuses = map[string]int64{}
		for k, v := range res.Statuses {
			rec.Statuses[fmt.Sprint(k)] = v
		}
	}
	if res.Hist != nil && res.Hist.TotalCount() > 0 {
		rec.Latency = latencyOf(res.Hist)
		if s, err := res.EncodeHist(); err == nil {
			rec.HistBase64 = s
		}
	}
	rec.Send = sendDelay(res.Send)
	if res.SlotEvery > 0 {
		ls := &result.LatencySlots{EveryS: res.SlotEvery.Seconds()}
		for _, h := range res.Slots {
			s, err := load.EncodeHistogram(h)
			if err != nil {
				return
			}
			ls.HistBase64 = append(ls.HistBase64, s)
		}
		rec.LatencySlots = ls
	}
}

// sendDelay is an open-loop window's send delay as a record keeps it; nil
// for closed loop.
func sendDelay(s *load.SendStats) *result.SendDelay {
	if s == nil {
		return nil
	}
	d := &result.SendDelay{LagThresholdUs: float64(s.LagThreshold) / 1e3,
		Delay: latencyOf(s.Delay), Own: latencyOf(s.Own), FromSend: latencyOf(s.FromSend)}
	d.OwnHistBase64, _ = load.EncodeHistogram(s.Own)
	d.FromSendHistBase64, _ = load.EncodeHistogram(s.FromSend)
	return d
}

// latencyOf is h's percentiles; zero for an empty histogram.
func latencyOf(h *hdrhistogram.Histogram) result.Latency {
	if h == nil || h.TotalCount() == 0 {
		return result.Latency{}
	}
	return result.Latency{
		P50Us: float64(h.ValueAtQuantile(50)), P90Us: float64(h.ValueAtQuantile(90)),
		P95Us: float64(h.ValueAtQuantile(95)), P99Us: float64(h.ValueAtQuantile(99)),
		P999Us: float64(h.ValueAtQuantile(99.9)), MaxUs: float64(h.Max()), MeanUs: h.Mean(),
	}
}

// verifyAffinity reads the affinity of every thread of the proxy (Envoy or a
// reference host; skipped when proxyPID is 0), the upstream and this driver,
// and fails on the first thread outside its set.
func verifyAffinity(cfg *runner, proxyName string, proxyPID, upstreamPID int, when string) ([]result.ThreadAffinity, error) {
	var out []result.ThreadAffinity
	var firstErr error
	for _, p := range []struct {
		name string
		pid  int
		want []int
	}{
		{proxyName, proxyPID, cfg.Envoy.CPUs},
		{"upstream", upstreamPID, cfg.UpstreamCPU},
		{"client", os.Getpid(), cfg.ClientCPUs},
	} {
		if p.pid == 0 {
			continue
		}
		threads, err := cpu.Verify(p.pid, p.want)
		for _, t := range threads {
			out = append(out, result.ThreadAffinity{Process: p.name, TID: t.TID, Name: t.Name, CPUs: t.CPUs, When: when})
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return out, firstErr
}

func saveStats(ctx context.Context, dir, rel string, stats func(context.Context) ([]byte, error)) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	b, err := stats(sctx)
	if err != nil {
		return fmt.Errorf("admin /stats: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "stats"), 0o755); err != nil {
		return &writeError{err}
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, rel), b); err != nil {
		return &writeError{err}
	}
	return nil
}

func failTrial(cfg *runner, tr plan.Trial, err error) []result.Record {
	var recs []result.Record
	for _, ci := range tr.Cases {
		c := cfg.Cases[ci]
		rec := result.Record{
			Case: result.Case{
				Trial: tr.Index, Repeat: tr.Repeat, Position: tr.Position, Mode: tr.Mode,
				Build: buildOf(cfg, tr.Mode), Workload: c.Workload.Name, Conns: c.Conns, Shard: cfg.Shard,
			},
			Window: result.Window{ExpectStatus: c.Workload.Expected(tr.Mode)}, Error: err.Error(),
		}
		cfg.recordDownstream(&rec)
		if errors.Is(err, context.Canceled) {
			rec.Error, rec.Interrupted = "", true
		}
		if err := result.Append(cfg.Dir, &rec); err != nil {
			if cfg.writeErr == nil {
				cfg.writeErr = err
			}
			continue
		}
		recs = append(recs, rec)
	}
	return recs
}

// drive runs one window of case c: a plain workload's request, or a mix's
// classes (the mix's order seeded by opts.Seed).
func drive(ctx context.Context, cfg *runner, opts load.Options, c profile.Case, mode string) (*load.Result, error) {
	opts.Downstream, opts.TLS, opts.Streams = cfg.Downstream, cfg.clientTLS, cfg.Streams
	if c.Workload.IsMix() {
		return load.RunMix(ctx, opts, cfg.Set.Classes(c.Workload, mode))
	}
	return load.Run(ctx, opts, buildRequest(cfg.Set, c, mode))
}

// buildRequest serializes a workload's request once.
func buildRequest(set *profile.Set, c profile.Case, mode string) load.Request {
	r := set.Request(c.Workload)
	r.Name = c.Key()
	r.ExpectStatus = c.Workload.Expected(mode)
	return r
}

func logLine(r *result.Record) string {
	cpu := "       –"
	if r.CPU.UsPerRequest > 0 {
		cpu = fmt.Sprintf("%8.1f", r.CPU.UsPerRequest)
	}
	s := fmt.Sprintf("trial %d %-22s %-16s c=%-3d %9.0f req/s %s µs-cpu/req p99 %8.0f µs",
		r.Trial, r.Mode, r.Workload, r.Conns, r.ReqPerS, cpu, r.Latency.P99Us)
	if sl := r.Slow; sl != nil {
		s = fmt.Sprintf("trial %d %-22s %-16s c=%-3d slow client: answers %v, longest %.1f s", r.Trial, r.Mode, r.Workload, r.Conns, sl.Answers, slices.Max(append([]float64{0}, sl.ElapsedMs...))/1e3)
	}
	if sc := r.Sidecar; sc != nil && sc.CPU.UsPerRequest > 0 {
		s += fmt.Sprintf("  + %s %.1f µs-cpu/req", sc.Process, sc.CPU.UsPerRequest)
	}
	if r.Error != "" {
		s += "  ERROR " + r.Error
	}
	if r.Interrupted {
		s += "  interrupted"
	}
	if r.BehindRate {
		s += fmt.Sprintf("  BEHIND RATE (achieved %.0f of %.0f req/s, %d due, %d sends late, %d lagged by the client, %d stalled)", r.RateAchievedPerS, r.RateRequestedPerS, r.Due, r.Late, r.Lagged, r.Stalled)
	}
	return s
}

// buildOf is the engine build mode runs ("" when it runs none).
func buildOf(cfg *runner, mode string) string {
	if b := cfg.Modes[mode].Build; b != nil {
		return b.Mode()
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
