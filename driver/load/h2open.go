package load

import (
	"errors"
	"os"
)

// Open loop over HTTP/2. Each connection walks its own arrival schedule,
// the same as HTTP/1.1's (arrival.go: uniform slots dealt round-robin, or
// a seeded Poisson process per connection), and each arrival opens a new
// stream on that connection. An arrival that finds every stream of its
// connection busy (Options.Streams, or fewer when the server's
// SETTINGS_MAX_CONCURRENT_STREAMS says so), or its connection down, waits
// until one frees, and its latency counts from its intended time: an
// HTTP/1.1 arrival waits for its busy connection the same way (HTTP/1.1
// is the case of one stream), so a stall shows up in the histogram
// instead of being hidden. Result.Late counts sends more than the lag
// threshold (send.go: LagFraction of the inter-arrival time) behind their
// intended time; Result.Lagged those that far behind the later of their
// intended time and the moment a stream (or the connection) was
// seen free again after an arrival found none: what the client itself
// added, not the wait for the server.
//
// The connection's one goroutine still does everything. While no whole
// frame is buffered it reads with the connection's read deadline set to
// the next arrival's intended time, so it wakes for whichever comes first:
// a frame or an arrival. A read that times out loses nothing
// (bufio.Reader.Peek keeps the part of a frame that arrived; crypto/tls
// keeps a partial record), and frames are written before that read, not
// by it, so a deadline already past drops no frame. The netpoller alone
// sleeps in whole milliseconds when the process is idle, so the pacer's
// timerfd is armed for the same instant (pacer.nudge) to wake it on time;
// it is not waited on, which would leave the socket unread. A send that is
// late anyway is counted in Late and in the latency, not hidden.
// A wait that ends in its deadline costs the error net allocates for it
// (TestH2SteadyStateAllocs: at most one more allocation per request).

// runH2Open is runH2 for the open loop: it sends each arrival of the
// worker's schedule on a new stream until the window ends, the trial stops
// or the cap is reached.
func (w *worker) runH2Open() {
	t := w.t
	next := w.sched.next() // intended offset of the next arrival not yet sent
	for !t.stop.Load() {
		now := t.since()
		if now >= t.wEnd {
			return
		}
		if w.conn == nil {
			w.busy = true // no stream while the connection is down
			if !w.connect() {
				continue
			}
		}
		h := w.h2
		if w.busy && !h.goAway && h.open < h.maxStreams {
			w.freeAt, w.busy = now, false // a stream is free again
		}
		for next < t.wEnd && next <= now && !h.goAway && h.open < h.maxStreams {
			own := max(now-max(next, w.freeAt), 0)
			w.lateness(next, now, own)
			ci := int(t.seq[w.pos%len(t.seq)])
			w.pos++
			h.openStream(&t.classes[ci].h2, ci, next, now).own = own
			next = w.sched.next()
		}
		if h.goAway || h.open >= h.maxStreams {
			w.busy = true // the next arrival will wait for a stream
		}
		if h.goAway && h.open == 0 {
			w.dropConn() // drained after GOAWAY: open a new connection
			continue
		}
		if h.open == 0 && next >= t.wEnd && h.wbuf.Len() == 0 {
			return // no arrival left in the window and nothing in flight
		}
		if w.needDeadline || now-w.deadlineAt >= t.refresh {
			w.conn.SetDeadline(t.base.Add(min(now+t.timeout, t.wEnd)))
			w.deadlineAt, w.needDeadline, w.wake = now, false, false
			if t.stop.Load() {
				return // interrupt may have run before the line above
			}
			w.expireStreams(now)
		}
		if !h.frameBuffered() {
			// Wake for the next arrival if it could be sent now.
			wake := next < t.wEnd && next < w.deadlineAt+t.timeout && !h.goAway && h.open < h.maxStreams
			switch {
			case wake:
				w.conn.SetReadDeadline(t.base.Add(next))
				w.pacer.nudge(next - t.since())
				w.wake = true
			case w.wake:
				w.blockingReads()
			}
			if t.stop.Load() {
				return
			}
			if err := h.fill(); err != nil {
				_, write := err.(writeError) // fill returns it unwrapped; errors.As would allocate
				if !write && errors.Is(err, os.ErrDeadlineExceeded) && (wake || h.open == 0) {
					continue // an arrival is due, or the connection was idle
				}
				w.failConn(h2Kind(err))
				continue
			}
		}
		f, err := h.readFrame()
		if err != nil {
			w.failConn(h2Kind(err))
			continue
		}
		if k := w.handleFrame(f); k == kindStop {
			return
		} else if k != kindOK {
			w.failConn(k)
		}
	}
}

// blockingReads moves the read deadline back from an arrival's time to
// the connection deadline, before a read that must not be cut short (the
// CONTINUATION frames of a header block). In the closed loop it does
// nothing.
func (w *worker) blockingReads() {
	if w.wake {
		w.conn.SetReadDeadline(w.t.base.Add(min(w.deadlineAt+w.t.timeout, w.t.wEnd)))
		w.wake = false
	}
}

// fill writes the queued frames, then reads until a whole frame is
// buffered (or the buffer is full: the Framer then refuses the frame)
// without consuming any, so a read that times out loses nothing.
func (h *h2conn) fill() error {
	if h.wbuf.Len() > 0 {
		if err := h.sock.Write(h.wbuf.Bytes()); err != nil {
			return writeError{err}
		}
		h.wbuf.Reset()
	}
	for !h.frameBuffered() {
		need := 9
		if h.br.Buffered() >= 9 {
			p, _ := h.br.Peek(9)
			need += int(p[0])<<16 | int(p[1])<<8 | int(p[2])
		}
		if need > h.br.Size() {
			return nil
		}
		if _, err := h.br.Peek(need); err != nil {
			return err
		}
	}
	return nil
}
