package load

import (
	"net"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// worker drives one connection. All its counters are its own, merged after
// the trial, so the hot path shares nothing but two read-mostly atomics.
type worker struct {
	t     *trial
	id    int
	rr    respReader
	pacer *pacer    // open loop only
	sched *schedule // open loop only

	mu   sync.Mutex // guards conn against interrupt
	conn *net.TCPConn
	sock connIO  // I/O on conn
	h2   *h2conn // HTTP/2 state of conn; nil for HTTP/1.1

	deadlineAt   time.Duration // when the connection deadline was last moved
	needDeadline bool
	wake         bool // HTTP/2 open loop: the read deadline is the next arrival's time

	cls          []classCounts // by class
	pos          int           // next index into t.seq
	perSec       []int64
	slots        []*hdrhistogram.Histogram // Options.SlotEvery: allocated as each slot is first used
	late         int64
	lagged       int64         // sends held back by the client itself (Result.Lagged)
	stalled      int64         // of them, past the stall threshold (Result.Stalled)
	send         *sendHists    // open loop only: send delay (send.go)
	freeAt1      time.Duration // HTTP/1.1 open loop: when the last response ended (the connection fell free)
	freeAt       time.Duration // HTTP/2 open loop: when a stream was last seen free after all were busy
	busy         bool          // HTTP/2 open loop: at the last look every stream (or the connection) was unavailable
	warmupErrors int64
}

// classCounts are one worker's counters of one class.
type classCounts struct {
	hist     *hdrhistogram.Histogram
	statuses [600]int64
	kinds    [numKinds]int64
	requests int64
}

func newWorker(t *trial, id int, c *net.TCPConn, sock connIO) *worker {
	w := &worker{
		t:            t,
		id:           id,
		conn:         c,
		sock:         sock,
		needDeadline: true,
		cls:          make([]classCounts, len(t.classes)),
		pos:          id * len(t.seq) / t.opts.Conns,
		perSec:       make([]int64, int((t.opts.Duration+time.Second-1)/time.Second)),
	}
	for i := range w.cls {
		w.cls[i].hist = NewHistogram()
	}
	if e := t.opts.SlotEvery; e > 0 {
		w.slots = make([]*hdrhistogram.Histogram, int((t.opts.Duration+e-1)/e))
	}
	if t.h2 {
		w.h2 = newH2conn(t, sock)
	} else {
		w.rr.buf = make([]byte, readBufSize)
		w.rr.reset(sock)
	}
	if t.every > 0 {
		w.pacer = newPacer(t.opts.Pacer)
		w.sched = newSchedule(t.opts.Arrival, t.opts.Seed, id, t.opts.Conns, t.every)
		w.send = newSendHists()
	}
	return w
}

// run sends requests until the window ends, the trial stops, or the cap is
// reached. It always returns by itself: every blocking call is bounded by
// the connection deadline (at most Timeout, and never past the window end)
// or by the pacer's deadline.
func (w *worker) run() {
	if w.t.h2 {
		w.runH2()
		return
	}
	t := w.t
	for !t.stop.Load() {
		now := t.since()
		if now >= t.wEnd {
			return
		}
		st := stamp{start: now} // per-request mode: latency includes the connect
		intended := time.Duration(-1)
		if t.every > 0 {
			intended = w.sched.next()
			if intended >= t.wEnd {
				return
			}
			if d := intended - now; d > 0 {
				if !w.pacer.wait(d) {
					return // interrupted
				}
				now = t.since()
			}
			st.start = intended
		}
		var dialed time.Duration // this iteration's connect, not the client's own delay
		if w.conn == nil {
			c0 := t.since()
			if !w.connect() {
				continue
			}
			dialed = t.since() - c0
		}
		ci := int(t.seq[w.pos%len(t.seq)])
		cr := &t.classes[ci]
		w.pos++
		if w.needDeadline || now-w.deadlineAt >= t.refresh {
			// Moving a deadline costs a runtime timer update, so it is
			// moved at most every Timeout/16: each request then gets
			// between 15/16 and all of Timeout.
			w.conn.SetDeadline(t.base.Add(min(now+t.timeout, t.wEnd)))
			w.deadlineAt, w.needDeadline = now, false
			if t.stop.Load() {
				return // interrupt may have run before the line above
			}
		}
		if intended >= 0 {
			w.sent(&st, t.since(), dialed)
		}
		if w.rr.r == w.rr.w {
			w.sock.Send(cr.raw) // written by the read below
		} else if err := w.sock.Write(cr.raw); err != nil {
			// Bytes beyond the last response are buffered (a server
			// error): the read below may not reach the socket.
			w.fail(ci, classify(err, kindWrite))
			continue
		}
		status, closeConn, k := w.rr.read(cr.head)
		end := t.since()
		if k != kindOK {
			w.fail(ci, k)
			continue
		}
		w.freeAt1 = end
		if !w.complete(ci, status, end, st) {
			return
		}
		switch {
		case t.perReq:
			w.dropConn() // the next request connects again
		case closeConn:
			w.count(ci, kindClosed, end)
			w.dropConn()
		}
	}
}

// sent stamps an HTTP/1.1 open-loop request written at offset now, after
// a connect that took dialed (0: none): its own delay runs from the later
// of its intended time and its connection falling free (the previous
// response's end, or its failure), less the connect (in the latency from
// the intended time, but the server's as much as the client's), and it is
// late or lagged past the trial's lag threshold (LagFraction of the
// inter-arrival time).
func (w *worker) sent(st *stamp, now, dialed time.Duration) {
	st.sent, st.own = now, max(now-max(st.start, w.freeAt1)-dialed, 0)
	w.lateness(st.start, now, st.own)
}

// lateness counts an open-loop send due at intended and written at now,
// own of which the client itself added, in Late, Lagged and Stalled when
// its arrival fell in the window.
func (w *worker) lateness(intended, now, own time.Duration) {
	if intended < w.t.wStart {
		return
	}
	if now-intended > w.t.lag {
		w.late++ // waits for a busy connection included
		if own > w.t.lag {
			w.lagged++
		}
		if own > w.t.stall {
			w.stalled++
		}
	}
}

// complete accounts for one response that ended at offset at, sent as st
// says. It reports false when the worker must stop (window over or cap
// reached).
func (w *worker) complete(ci, status int, at time.Duration, st stamp) bool {
	latency := at - st.start
	t := w.t
	c := &w.cls[ci]
	if at < t.wStart {
		if status != t.classes[ci].expect {
			w.warmupErrors++
		}
		return true
	}
	if at >= t.wEnd {
		return false
	}
	last := false
	if max := t.opts.MaxRequests; max > 0 {
		n := t.done.Add(1)
		if n > max {
			return false
		}
		if n == max {
			last = true
			t.capAt.Store(int64(at))
			t.capOnce.Do(func() { close(t.capped) })
		}
	}
	c.statuses[status]++
	if status == t.classes[ci].expect {
		c.requests++
		us := min(max(int64(latency/time.Microsecond), histMinUs), histMaxUs)
		c.hist.RecordValue(us)
		s := int((at - t.wStart) / time.Second)
		w.perSec[min(s, len(w.perSec)-1)]++
		if w.slots != nil {
			w.recordSlot(at-t.wStart, us)
		}
		if w.send != nil {
			w.send.record(st, at)
		}
	}
	return !last
}

// recordSlot records latency us of a response that completed at offset
// into the window in its slot's histogram.
func (w *worker) recordSlot(offset time.Duration, us int64) {
	i := min(int(offset/w.t.opts.SlotEvery), len(w.slots)-1)
	if w.slots[i] == nil {
		w.slots[i] = newSlotHistogram()
	}
	w.slots[i].RecordValue(us)
}

// fail accounts for a failed request and drops the connection, which is
// reopened on the next iteration. Failures caused by the trial stopping
// are not errors.
func (w *worker) fail(ci int, k kind) {
	now := w.t.since()
	w.freeAt1 = now // the next request's connection is free from here
	if !w.t.stop.Load() {
		w.count(ci, k, now)
	}
	w.dropConn()
}

// count records an error of kind k of class ci that happened at offset at.
func (w *worker) count(ci int, k kind, at time.Duration) {
	switch {
	case at < w.t.wStart:
		w.warmupErrors++
	case at < w.t.wEnd:
		w.cls[ci].kinds[k]++
	}
}

// connect opens a replacement connection. On failure it counts the error
// and waits a little before the caller retries.
func (w *worker) connect() bool {
	t := w.t
	c, sock, err := t.dial()
	if err != nil {
		if t.stop.Load() || t.ctx.Err() != nil {
			return false // the dial failed because the trial is stopping
		}
		w.count(int(t.seq[w.pos%len(t.seq)]), kindConnect, t.since())
		timer := time.NewTimer(min(retryDelay, max(t.wEnd-t.since(), 0)))
		select {
		case <-t.ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
		return false
	}
	w.mu.Lock()
	w.conn, w.sock = c, sock
	w.mu.Unlock()
	if t.h2 {
		w.h2 = newH2conn(t, sock)
	} else {
		w.rr.reset(sock)
	}
	w.needDeadline = true
	return true
}

func (w *worker) dropConn() {
	w.mu.Lock()
	if w.conn != nil {
		w.conn.Close()
		w.conn, w.sock, w.h2 = nil, nil, nil
	}
	w.mu.Unlock()
}

// interrupt wakes the worker from blocking I/O or pacing once the trial's
// stop flag is set.
func (w *worker) interrupt() {
	w.mu.Lock()
	if w.conn != nil {
		w.conn.SetDeadline(time.Unix(1, 0))
	}
	w.mu.Unlock()
	if w.pacer != nil {
		w.pacer.interrupt()
	}
}

func (w *worker) close() {
	w.dropConn()
	if w.pacer != nil {
		w.pacer.close()
	}
}
