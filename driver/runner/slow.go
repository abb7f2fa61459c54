package runner

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"wafbench/driver/envoy"
	"wafbench/driver/plan"
	"wafbench/driver/procstat"
	"wafbench/driver/profile"
	"wafbench/driver/result"
	"wafbench/driver/slowclient"
)

// measureSlow runs slow-client case c (profile slow) against p: the
// workload's request sent by its plan on each of the case's connections at
// once, each answer and time recorded, the proxy's RSS sampled before,
// once every connection has sent what it will (or ended), and after, and
// the host's client-timeout counters compared before and after.
func measureSlow(ctx context.Context, cfg *runner, tr plan.Trial, c profile.Case, p *proxy, up *Upstream, rec *result.Record) {
	sp := c.Workload.Slow
	req := buildRequest(cfg.Set, c, tr.Mode)
	raw := req.Raw
	headLen := bytes.Index(raw, []byte("\r\n\r\n")) + 4
	rec.RequestBytes = len(raw)
	out := &result.Slow{HeadChunk: sp.HeadChunk, BodyChunk: sp.BodyChunk, IntervalMs: ms(sp.Pause()),
		StopAfter: sp.Stop(), BodyBytes: len(raw) - headLen, MaxWaitS: sp.Wait().Seconds(), Answers: map[string]int64{},
		ElapsedMs: make([]float64, c.Conns), SentBytes: make([]int, c.Conns)}
	rec.Slow = out
	before, err := counters(ctx, p)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	out.RSSBeforeKiB = rss(p)
	plan := slowclient.Plan{HeadChunk: sp.HeadChunk, BodyChunk: sp.BodyChunk, Interval: sp.Pause(), StopAfter: sp.Stop(), MaxWait: sp.Wait()}
	var sent, done sync.WaitGroup
	sent.Add(c.Conns)
	done.Add(c.Conns)
	labels := make([]string, c.Conns)
	errs := make([]error, c.Conns)
	for i := 0; i < c.Conns; i++ {
		go func(i int) {
			defer done.Done()
			once := sync.OnceFunc(sent.Done)
			pl := plan
			pl.OnSent = once
			r, err := slowclient.Send(ctx, p.Addr, raw, headLen, pl)
			once() // an exchange that ended before its last byte
			labels[i], errs[i] = r.Answer.Label(), err
			out.ElapsedMs[i], out.SentBytes[i] = ms(r.Elapsed), r.Sent
		}(i)
	}
	sent.Wait()
	out.RSSHeldKiB = rss(p)
	done.Wait()
	out.RSSAfterKiB = rss(p)
	for i, l := range labels {
		if errs[i] != nil && ctx.Err() == nil && rec.Error == "" {
			rec.Error = fmt.Sprintf("slow client %d: %v", i, errs[i])
		}
		if l == "" {
			l = "error"
		}
		out.Answers[l]++
	}
	if ctx.Err() != nil {
		rec.Interrupted = true
		return
	}
	after, err := counters(ctx, p)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	for _, t := range p.Timeouts {
		st := result.SlowTimeout{Name: t.Name, AfterS: t.After.Seconds(), Fired: -1}
		if t.Counter != "" && before != nil {
			st.Fired = after[t.Counter] - before[t.Counter]
		}
		out.Timeouts = append(out.Timeouts, st)
	}
	rec.Requests = out.Answers[fmt.Sprint(rec.ExpectStatus)]
	if d := deathDuring(p, up, cfg.hostOf(tr.Mode).Title(), c.Key(), true); d != "" {
		rec.Error = d
	}
}

// counters reads the host's counters (nil when it has none).
func counters(ctx context.Context, p *proxy) (map[string]int64, error) {
	if p.Stats == nil {
		return nil, nil
	}
	b, err := p.Stats(ctx)
	if err != nil {
		return nil, fmt.Errorf("slow clients: %w", err)
	}
	return envoy.ParseStats(b)
}

// rss is the proxy's VmRSS in KiB; 0 without a process or a reading.
func rss(p *proxy) int64 {
	if p.PID == 0 {
		return 0
	}
	v, err := procstat.RSSKiB(p.PID)
	if err != nil {
		return 0
	}
	return v
}
