package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	readBufSize = 32 << 10 // per connection; also the longest response head
	retryDelay  = 10 * time.Millisecond
)

// trial is the state shared by the connections of one Run. Its fields are
// read-only once the workers start, except the atomics.
type trial struct {
	opts    Options
	classes []classReq // one for a plain trial; a mix's classes
	seq     []uint8    // the order of classes every connection walks (mix.go)
	perReq  bool       // a new connection per request (ConnPerRequest)
	timeout time.Duration
	refresh time.Duration // how stale a connection deadline may get
	base    time.Time     // trial start; all offsets below are from here
	wStart  time.Duration // measured window [wStart, wEnd)
	wEnd    time.Duration
	every   float64       // open loop: ns between intended sends; 0 = closed loop
	lag     time.Duration // open loop: lag threshold, LagFraction of every (send.go)
	stall   time.Duration // open loop: stall threshold, lag but at least StallFloor
	dialer  net.Dialer
	ctx     context.Context // canceled when the trial stops
	tls     *tls.Config     // TLS protocols: the client configuration
	h2      bool            // HTTP/2: workers run runH2
	streams int             // HTTP/2: concurrent streams per connection

	stop    atomic.Bool
	done    atomic.Int64 // responses counted in the window, for MaxRequests
	capAt   atomic.Int64 // offset at which MaxRequests was reached
	capOnce sync.Once
	capped  chan struct{}
	running sync.WaitGroup // the workers' goroutines
}

// Run drives one trial: it opens opts.Conns connections to opts.Target (a
// failure is returned before any load is sent), runs warmup and the measured
// window, and returns what the window measured. If ctx ends first, Run
// returns the partial Result, marked Interrupted, together with ctx's error.
func Run(ctx context.Context, opts Options, req Request) (*Result, error) {
	return run(ctx, opts, []Class{{Request: req, Weight: 1}}, false)
}

// RunMix drives one trial of a weighted mix: each connection sends the
// classes in a seeded, interleaved order in which every class appears in
// proportion to its weight (Options.Seed seeds it), and each response is
// validated against its own class's ExpectStatus. The Result's totals cover
// every class; Result.Classes holds each class's own counts and histogram.
func RunMix(ctx context.Context, opts Options, classes []Class) (*Result, error) {
	return run(ctx, opts, classes, true)
}

func run(ctx context.Context, opts Options, classes []Class, mix bool) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := checkClasses(classes); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	t, err := newTrial(runCtx, opts, classes)
	if err != nil {
		return nil, err
	}
	workers, err := t.dialWorkers()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, w := range workers {
			w.close()
		}
	}()

	res := t.measureWindow(ctx, workers)
	// Workers stop by themselves at wEnd; wake those blocked in I/O or in
	// their pacer after a cap or cancel.
	t.stop.Store(true)
	cancel()
	for _, w := range workers {
		w.interrupt()
	}
	t.running.Wait()

	res.Elapsed = min(max(res.Elapsed, 0), opts.Duration)
	collect(res, t, workers)
	if mix {
		res.Classes = collectClasses(classes, workers)
	}
	if res.Interrupted {
		return res, ctx.Err()
	}
	return res, nil
}

// dialWorkers opens the trial's connections, one worker each; on a failure
// it closes those already open.
func (t *trial) dialWorkers() ([]*worker, error) {
	workers := make([]*worker, t.opts.Conns)
	for i := range workers {
		c, sock, err := t.dial()
		if err != nil {
			for _, w := range workers[:i] {
				w.close()
			}
			return nil, fmt.Errorf("connect %s: %w", t.opts.Target, dialCause(err))
		}
		workers[i] = newWorker(t, i, c, sock)
	}
	return workers, nil
}

// measureWindow starts the workers and waits out warmup and the measured
// window (or a cap, or ctx's end), returning the Result's window fields.
// The workers are still running when it returns.
func (t *trial) measureWindow(ctx context.Context, workers []*worker) *Result {
	opts := t.opts
	// Without a warmup the window opens before the first request: the
	// caller's OnWarmupEnd (a procfs sample of the target) runs before any
	// worker starts, so no measured request can complete before it. Were
	// the workers started first, a short capped window on a busy machine
	// could finish before this goroutine was scheduled to call it, leaving
	// the window's requests outside what the caller sampled.
	opened := false
	if opts.Warmup == 0 && opts.OnWarmupEnd != nil && ctx.Err() == nil {
		opts.OnWarmupEnd()
		opened = true
	}
	var cpu0 time.Duration // this process's CPU time when the window opened
	if opts.Warmup == 0 {
		cpu0 = processCPU()
	}
	t.base = time.Now()
	t.wStart = opts.Warmup
	t.wEnd = opts.Warmup + opts.Duration
	for _, w := range workers {
		t.running.Add(1)
		go func() {
			defer t.running.Done()
			w.run()
		}()
	}

	res := newResult(opts)
	timer := time.NewTimer(opts.Warmup)
	defer timer.Stop()
	select {
	case <-timer.C:
		res.Warmup = time.Since(t.base)
		if opts.Warmup > 0 {
			cpu0 = processCPU()
		}
		if opts.OnWarmupEnd != nil && !opened {
			opts.OnWarmupEnd()
		}
		timer.Reset(time.Until(t.base.Add(t.wEnd)))
		t.awaitWindowEnd(ctx, res, timer)
		res.ClientCPU = processCPU() - cpu0
		if !res.Interrupted && opts.OnMeasureEnd != nil {
			opts.OnMeasureEnd()
		}
	case <-ctx.Done():
		res.Interrupted = true
		res.Warmup = time.Since(t.base)
		if res.Warmup >= t.wStart {
			// The cancel won the race with the warmup's timer after the
			// window had opened (always so without a warmup, on a busy
			// machine): the workers counted requests in it, so the window
			// has an Elapsed for their per-second counts.
			res.Elapsed, res.Warmup = res.Warmup-t.wStart, t.wStart
			if opts.Warmup == 0 { // cpu0 was read as the window opened
				res.ClientCPU = processCPU() - cpu0
			}
		}
	}
	return res
}

// newResult is a Result holding what opts requested.
func newResult(opts Options) *Result {
	res := &Result{RateRequested: opts.Rate}
	if opts.Rate > 0 {
		res.Arrival, _ = ParseArrival(string(opts.Arrival))
		res.Pacer, _ = ParsePacer(string(opts.Pacer))
		if res.Arrival == ArrivalPoisson {
			res.Seed = opts.Seed
		}
	}
	return res
}

// awaitWindowEnd waits for the measured window to end by its timer, by
// MaxRequests or by ctx, and sets res.Elapsed (and Interrupted).
func (t *trial) awaitWindowEnd(ctx context.Context, res *Result, timer *time.Timer) {
	select {
	case <-timer.C:
		res.Elapsed = time.Since(t.base) - t.wStart
	case <-t.capped:
		res.Elapsed = time.Duration(t.capAt.Load()) - t.wStart
	case <-ctx.Done():
		res.Elapsed = time.Since(t.base) - t.wStart
		res.Interrupted = true
	}
}

// newTrial is the shared state of a run's workers, before any connects.
func newTrial(ctx context.Context, opts Options, classes []Class) (*trial, error) {
	t := &trial{
		opts:    opts,
		classes: toClassReqs(classes),
		seq:     sequence(classes, opts.Seed),
		timeout: opts.Timeout,
		ctx:     ctx,
		capped:  make(chan struct{}),
		perReq:  opts.ConnMode == ConnPerRequest,
		h2:      opts.Downstream.HTTP2(),
		streams: max(opts.Streams, 1),
	}
	if opts.Downstream.TLS() {
		t.tls = clientTLS(&opts)
	}
	if t.h2 {
		if err := t.prepareH2(); err != nil {
			return nil, err
		}
	}
	if t.timeout == 0 {
		t.timeout = defaultTimeout
	}
	t.refresh = t.timeout / 16
	t.dialer.Timeout = t.timeout
	if opts.Rate > 0 {
		t.every = 1e9 / opts.Rate
		t.lag = lagThreshold(t.every)
		t.stall = max(t.lag, StallFloor)
	}
	return t, nil
}

// dial opens one connection to the target, with its TLS handshake when
// the protocol runs over TLS.
func (t *trial) dial() (*net.TCPConn, connIO, error) {
	c, err := t.dialer.DialContext(t.ctx, "tcp", t.opts.Target)
	if err != nil {
		return nil, nil, err
	}
	tc := c.(*net.TCPConn)
	tc.SetNoDelay(true)
	sock, err := newSockIO(tc)
	if err != nil {
		tc.Close()
		return nil, nil, err
	}
	if t.tls == nil {
		return tc, sock, nil
	}
	tio, err := t.handshake(tc, sock)
	if err != nil {
		tc.Close()
		return nil, nil, err
	}
	return tc, tio, nil
}

// dialCause strips "dial tcp ADDR: connect:" from a dial error, keeping the
// cause (e.g. "connection refused") and its identity for errors.Is.
func dialCause(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// since returns the offset of now from the trial start.
func (t *trial) since() time.Duration { return time.Since(t.base) }

// collect merges the workers' counters into res.
func collect(res *Result, t *trial, workers []*worker) {
	res.Errors = map[string]int64{}
	res.Statuses = map[int]int64{}
	nsec := int((res.Elapsed + time.Second - 1) / time.Second)
	res.PerSecond = make([]int64, nsec)
	var hists []*hdrhistogram.Histogram
	var responses int64
	for _, w := range workers {
		res.Late += w.late
		res.Lagged += w.lagged
		res.Stalled += w.stalled
		res.WarmupErrors += w.warmupErrors
		for ci := range w.cls {
			c := &w.cls[ci]
			hists = append(hists, c.hist)
			res.Requests += c.requests
			for k := kind(1); k < numKinds; k++ {
				if c.kinds[k] > 0 {
					res.Errors[kindNames[k]] += c.kinds[k]
				}
			}
			for code, n := range c.statuses {
				if n > 0 {
					res.Statuses[code] += n
					responses += n
					if code != t.classes[ci].expect {
						res.Errors["status_"+strconv.Itoa(code)] += n
					}
				}
			}
		}
		for s, n := range w.perSec {
			if s < nsec {
				res.PerSecond[s] += n
			} else if nsec > 0 {
				res.PerSecond[nsec-1] += n // rounding at the very end
			}
		}
	}
	res.Hist = Merge(hists...)
	res.Send = collectSend(t, workers)
	collectSlots(res, t, workers)
	if res.Elapsed > 0 {
		res.RateAchieved = float64(responses) / res.Elapsed.Seconds()
	}
	if t.every > 0 {
		for i := range workers {
			res.Due += newSchedule(t.opts.Arrival, t.opts.Seed, i, t.opts.Conns, t.every).count(t.wStart, t.wStart+res.Elapsed)
		}
	}
}

// collectSlots merges the workers' slot histograms, keeping the slots the
// window reached (a capped or interrupted window ends early).
func collectSlots(res *Result, t *trial, workers []*worker) {
	e := t.opts.SlotEvery
	if e <= 0 {
		return
	}
	n := max(int((res.Elapsed+e-1)/e), 1)
	res.SlotEvery = e
	res.Slots = make([]*hdrhistogram.Histogram, n)
	for i := range res.Slots {
		res.Slots[i] = newSlotHistogram()
		for _, w := range workers {
			if i < len(w.slots) && w.slots[i] != nil {
				res.Slots[i].Merge(w.slots[i])
			}
		}
	}
	for _, w := range workers { // a response counted past n (rounding at the end)
		for i := n; i < len(w.slots); i++ {
			if w.slots[i] != nil {
				res.Slots[n-1].Merge(w.slots[i])
			}
		}
	}
}

// collectClasses merges the workers' per-class counters.
func collectClasses(classes []Class, workers []*worker) []classResult {
	out := make([]classResult, len(classes))
	for ci, cl := range classes {
		cr := classResult{Name: cl.Name, Weight: cl.Weight, ExpectStatus: cl.ExpectStatus,
			Errors: map[string]int64{}, Statuses: map[int]int64{}}
		var hists []*hdrhistogram.Histogram
		for _, w := range workers {
			c := &w.cls[ci]
			hists = append(hists, c.hist)
			cr.Requests += c.requests
			for k := kind(1); k < numKinds; k++ {
				if c.kinds[k] > 0 {
					cr.Errors[kindNames[k]] += c.kinds[k]
				}
			}
			for code, n := range c.statuses {
				if n > 0 {
					cr.Statuses[code] += n
					if code != cl.ExpectStatus {
						cr.Errors["status_"+strconv.Itoa(code)] += n
					}
				}
			}
		}
		cr.Hist = Merge(hists...)
		out[ci] = cr
	}
	return out
}
