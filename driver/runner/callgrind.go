package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"wafbench/driver/callgrind"
	"wafbench/driver/envoy"
	"wafbench/driver/load"
	"wafbench/driver/result"
)

// Callgrind is run --callgrind: every Envoy runs under valgrind's callgrind
// and each workload's instructions are counted over a fixed number of
// requests, sent one at a time over one connection, instead of timing a
// window.
type Callgrind struct {
	Warmup   int64         // requests sent before counting, in the same process
	Requests int64         // requests counted per window
	Bound    time.Duration // bounds each window's (and the warm-up's) time
}

// countInstructions measures w's case under callgrind: the warm-up, one
// window counting the whole process (its load and procfs figures become the
// record's) and, when a meter wraps the module, a second window of as many
// requests with the module's hooks excluded; the two windows' dumps, function
// by function, give the account of the hooks' instructions.
func (w *measuredWindow) countInstructions() {
	cg, p, rec := w.cfg.Callgrind, w.p, w.rec
	if p.Callgrind == nil {
		rec.Error = fmt.Sprintf("--callgrind: %s did not start under callgrind", w.cfg.hostOf(w.tr.Mode).Title())
		return
	}
	in := &result.Instructions{Tool: callgrind.Version(), WarmupRequests: cg.Warmup, Requests: cg.Requests}
	rec.Instructions = in
	opts := load.Options{Target: p.Addr, Conns: 1, Duration: cg.Bound, MaxRequests: cg.Warmup, Timeout: w.cfg.Timeout,
		Downstream: w.cfg.Downstream, TLS: w.cfg.clientTLS, Streams: w.cfg.Streams}
	if cg.Warmup > 0 {
		res, err := w.drive(opts)
		if err = counted(res, err, cg.Warmup, "warm-up"); err != nil {
			rec.Error = err.Error()
			return
		}
	}
	var whole, outside *callgrind.Profile
	res, err := w.count(opts, false, &whole)
	if whole != nil {
		in.Envoy = whole.Total
	}
	if res != nil {
		fillLoad(rec, res)
	}
	if err = counted(res, err, cg.Requests, "window"); err != nil {
		w.judge(res, err)
		return
	}
	if p.Meter != nil {
		res, err := w.count(opts, true, &outside)
		if err == nil {
			err = p.Meter.ExcludeHooks(false)
		}
		if err = counted(res, err, cg.Requests, "window with the hooks excluded"); err != nil {
			rec.Error = err.Error()
			return
		}
		in.OutsideHooks = outside.Total
		in.Account = callgrind.Account(whole.Sub(outside))
	}
	w.judge(res, nil)
}

// count sends cg.Requests requests with callgrind's counters zeroed before
// the first and dumped after the last into *prof, the meter excluding the
// hooks or not. The first window (excludeHooks false) is the record's: it
// is sampled from procfs and its affinity checked at both edges.
func (w *measuredWindow) count(opts load.Options, excludeHooks bool, prof **callgrind.Profile) (*load.Result, error) {
	p := w.p
	if p.Meter != nil {
		if err := p.Meter.ExcludeHooks(excludeHooks); err != nil {
			return nil, fmt.Errorf("callgrind meter: %w", err)
		}
	}
	accepted, _, err := connections(w.ctx, p.Admin)
	if err != nil {
		return nil, err
	}
	var cgErr error
	opts.MaxRequests = w.cfg.Callgrind.Requests
	opts.OnWarmupEnd = func() {
		if !excludeHooks {
			w.start()
		}
		// The window's connection is open: once Envoy has accepted it and
		// closed the one before, neither is counted.
		if cgErr = settle(w.ctx, p.Admin, accepted+1); cgErr == nil {
			cgErr = p.Callgrind.Zero(w.ctx)
		}
	}
	opts.OnMeasureEnd = func() {
		n, err := p.Callgrind.Dump(w.ctx)
		*prof = n
		if cgErr == nil {
			cgErr = err
		}
		if !excludeHooks {
			w.end()
		}
	}
	res, err := w.drive(opts)
	if err == nil {
		err = cgErr
	}
	return res, err
}

// counted reports a window that did not end with want responses of the
// expected status.
func counted(res *load.Result, err error, want int64, what string) error {
	switch {
	case err != nil:
		return fmt.Errorf("callgrind %s: %w", what, err)
	case res.Interrupted:
		return fmt.Errorf("callgrind %s: interrupted", what)
	case res.Requests != want:
		return fmt.Errorf("callgrind %s: %d of %d requests answered as expected in %.0f s (statuses %v, errors %v)",
			what, res.Requests, want, res.Elapsed.Seconds(), res.Statuses, res.Errors)
	}
	return nil
}

// settleTimeout bounds the wait for Envoy to accept a window's connection
// and close the previous one.
const settleTimeout = time.Minute

// settle waits until Envoy's listener has accepted accepted connections in
// all and holds one.
func settle(ctx context.Context, admin string, accepted int64) error {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	for {
		total, active, err := connections(ctx, admin)
		if err == nil && total >= accepted && active == 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("callgrind: Envoy did not settle on one connection (accepted %d of %d, %d open; %v)", total, accepted, active, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// adminClient keeps its connection to Envoy's admin open and idle for as
// long as the process lives: a connection closed inside a counted window
// would be counted.
var adminClient = &http.Client{Timeout: time.Minute, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1, IdleConnTimeout: 0}}

// connections reads Envoy's downstream connections accepted and open from
// the admin interface at admin (host:port).
func connections(ctx context.Context, admin string) (total, active int64, err error) {
	const prefix = "http." + envoy.StatPrefix + ".downstream_cx_"
	q := url.Values{"format": {"json"}, "filter": {"^" + regexp.QuoteMeta(prefix) + "(total|active)$"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/stats?"+q.Encode(), nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := adminClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	st, err := envoy.ParseStats(b)
	if err != nil {
		return 0, 0, err
	}
	t, okT := st[prefix+"total"]
	a, okA := st[prefix+"active"]
	if !okT || !okA {
		return 0, 0, fmt.Errorf("admin /stats: no %stotal or %sactive", prefix, prefix)
	}
	return t, a, nil
}
