package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"wafbench/driver/load"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// caseRun is one case of one trial as a window strategy measures it.
type caseRun struct {
	ctx  context.Context
	cfg  *runner
	tr   plan.Trial
	c    profile.Case
	p    *proxy
	up   *Upstream
	rate float64 // open-loop req/s, 0 = closed loop; a max-rate search sets it
}

// windowStrategy is how a case is measured into its record: slow clients,
// a timed window (closed or open loop, a plain request, a measured verdict
// or a mix, perf beside it), instructions under callgrind, each after a
// max-rate search when the run has one. strategyFor chooses it once per
// case; nothing after that asks which features the run has.
type windowStrategy interface {
	measure(cr *caseRun, rec *result.Record)
}

// strategyFor chooses how case c of a run with cfg is measured; rateErr is
// the failure to find c's rate (a rate-sweep point without its capacity).
func strategyFor(cfg *runner, c profile.Case, rateErr error) windowStrategy {
	if c.Workload.Slow != nil {
		return slowClients{}
	}
	if rateErr != nil {
		return noRate{rateErr}
	}
	var src loadSource = plainRequest{}
	switch {
	case c.Workload.IsMix():
		src = mixClasses{}
	case c.Workload.MeasureVerdict:
		src = verdictProbe{}
	}
	var s windowStrategy = timedWindow{src: src}
	switch {
	case cfg.Callgrind != nil: // the CLI refuses it with --perf, --rate and --max-rate-at
		s = callgrindCount{src: src}
	case cfg.PerfFreqHz > 0:
		s = timedWindow{src: src, perfHz: cfg.PerfFreqHz}
	}
	if cfg.MaxRate != nil {
		s = maxRateSearch{then: s}
	}
	return s
}

// slowClients measures a slow-client case (measureSlow).
type slowClients struct{}

func (slowClients) measure(cr *caseRun, rec *result.Record) {
	measureSlow(cr.ctx, cr.cfg, cr.tr, cr.c, cr.p, cr.up, rec)
}

// noRate records a case whose rate could not be found, unmeasured.
type noRate struct{ err error }

func (s noRate) measure(cr *caseRun, rec *result.Record) {
	recordLoadModel(rec, cr.cfg, cr.rate, cr.c.Workload.ConnModeIn(cr.cfg.ConnMode))
	rec.Error = s.err.Error()
}

// maxRateSearch searches the case's highest rate meeting the run's latency
// objective, then measures the case there with then.
type maxRateSearch struct{ then windowStrategy }

func (s maxRateSearch) measure(cr *caseRun, rec *result.Record) {
	found, ok := searchRate(cr.ctx, cr.cfg, cr.tr, cr.c, cr.p, rec)
	if !ok {
		return
	}
	cr.rate = found
	s.then.measure(cr, rec)
}

// timedWindow measures a window of the run's duration at the case's rate,
// the proxy sampled around it, recorded by perf at perfHz (0 = not).
type timedWindow struct {
	src    loadSource
	perfHz int
}

func (s timedWindow) measure(cr *caseRun, rec *result.Record) {
	w, err := openWindow(cr, rec, s.src, s.perfHz)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	res, err := w.drive(w.options(cr.rate, w.connMode))
	stopAttacks(w.atk, rec) // when the window did not end normally
	if res != nil {
		fillLoad(rec, res)
		fillClasses(rec, res)
	}
	w.stopPerf()
	w.check("end")
	w.judge(res, err)
	fillCPU(rec, w.before, w.after)
	fillSidecar(rec, w.sidecarBefore, w.sidecarAfter)
}

// callgrindCount counts the case's instructions over a fixed number of
// requests (countInstructions) instead of timing a window.
type callgrindCount struct{ src loadSource }

func (s callgrindCount) measure(cr *caseRun, rec *result.Record) {
	w, err := openWindow(cr, rec, s.src, 0)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	w.countInstructions()
	fillCPU(rec, w.before, w.after)
}

// openWindow records the load model of cr's window and readies the window:
// its perf file's directory when perfHz > 0, then src's load.
func openWindow(cr *caseRun, rec *result.Record, src loadSource, perfHz int) (*measuredWindow, error) {
	cfg, tr, c := cr.cfg, cr.tr, cr.c
	connMode := c.Workload.ConnModeIn(cfg.ConnMode)
	recordLoadModel(rec, cfg, cr.rate, connMode)
	w := &measuredWindow{ctx: cr.ctx, cfg: cfg, tr: tr, c: c, p: cr.p, up: cr.up, rec: rec, src: src,
		connMode: connMode, window: c.Window(cfg.Duration), timeout: cfg.Timeout, perfHz: perfHz,
		perfData: filepath.Join(cfg.Dir, "perf", fmt.Sprintf("t%02d-%s-%s-c%d.data", tr.Index, tr.Mode, c.Workload.Name, c.Conns))}
	if perfHz > 0 {
		if err := os.MkdirAll(filepath.Dir(w.perfData), 0o755); err != nil {
			return nil, err
		}
	}
	if err := src.prepare(w); err != nil {
		return nil, err
	}
	return w, nil
}

// loadSource is what a window sends: one request, one request whose
// expected status a probe finds first, or a mix's classes.
type loadSource interface {
	// prepare readies w's load; it may stretch w's window and timeout.
	prepare(w *measuredWindow) error
	// drive runs one window of w's load with opts.
	drive(w *measuredWindow, opts load.Options) (*load.Result, error)
}

// plainRequest sends the workload's one request.
type plainRequest struct{}

func (plainRequest) prepare(w *measuredWindow) error {
	w.req = buildRequest(w.cfg.Set, w.c, w.tr.Mode)
	w.rec.RequestBytes = len(w.req.Raw)
	return nil
}

func (plainRequest) drive(w *measuredWindow, opts load.Options) (*load.Result, error) {
	return load.Run(w.ctx, opts, w.req)
}

// verdictProbe sends a measure_verdict workload's request, its expected
// status the one a probe got (probeVerdict), over a window stretched to
// hold a few responses of an input that costs seconds.
type verdictProbe struct{ plainRequest }

func (verdictProbe) prepare(w *measuredWindow) error {
	plainRequest{}.prepare(w)
	cfg, wl := w.cfg, w.c.Workload
	if wl.MinResponses > 0 {
		// An input that costs seconds: wait for it up to the
		// workload's bound, and stretch the window to hold a
		// few responses.
		w.timeout = max(cfg.Timeout, time.Duration(wl.MaxWindow))
	}
	took, err := probeVerdict(w.ctx, w.p.Addr, w.timeout, &w.req, w.rec)
	if err != nil {
		return err
	}
	w.window = w.c.Stretched(cfg.Duration, took)
	return nil
}

// mixClasses sends a mix's classes (the mix's order seeded by the run's
// arrival seed).
type mixClasses struct{}

func (mixClasses) prepare(*measuredWindow) error { return nil }

func (mixClasses) drive(w *measuredWindow, opts load.Options) (*load.Result, error) {
	return drive(w.ctx, w.cfg, opts, w.c, w.tr.Mode)
}
