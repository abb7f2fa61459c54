package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"wafbench/internal/http1"
)

// HTTP/2 on the client side: one goroutine per connection (the worker) runs
// an event loop over golang.org/x/net/http2's Framer, keeping up to
// Options.Streams streams in flight. Frames it writes go to a reused buffer
// that is handed to the socket only when the next frame to read is not
// already buffered, so a burst of responses is answered by one write. Each
// request's header block is HPACK-encoded once per trial (h2req), and the
// response's header blocks are decoded only as far as ":status": the
// steady state allocates what the Framer allocates per HEADERS frame.

// Client settings.
const (
	// h2StreamWindow is our SETTINGS_INITIAL_WINDOW_SIZE (2^30 - 1, as
	// h2load's default): no response body waits for a WINDOW_UPDATE.
	h2StreamWindow = 1<<30 - 1
	// h2ConnWindow is our connection receive window; a WINDOW_UPDATE
	// returns what was received once half of it is used.
	h2ConnWindow = 1<<30 - 1
	// h2MaxStreamID is the last stream ID a connection can open; the worker
	// then drains the connection and opens a new one.
	h2MaxStreamID = 1<<31 - 1
	// h2HeaderTable is the HPACK dynamic table we let the server use for
	// response headers (the protocol's default).
	h2HeaderTable = 4096
	// Protocol defaults until the server's SETTINGS say otherwise.
	h2DefaultWindow   = 65535
	h2DefaultMaxFrame = 16384
)

// h2req is a request in HTTP/2 form: its header fields and body, and its
// header block HPACK-encoded once per trial in three forms (h2Blocks):
// literal (static table and literals without indexing only, valid on any
// connection in any state), first (adding the request's fields to the
// server's dynamic table) and indexed (referring to them only).
type h2req struct {
	fields  []hpack.HeaderField
	body    []byte // nil or empty: END_STREAM on the HEADERS frame
	literal []byte
	first   []byte // nil when the classes' fields do not fit the table
	indexed []byte
}

// connectionHeaders are HTTP/1.1 headers HTTP/2 forbids (RFC 9113 §8.2.2);
// the conversion drops them ("te" is kept when it is "trailers"), and Host,
// which becomes :authority.
var connectionHeaders = []string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"}

// toH2 converts a serialized HTTP/1.1 request (Build's output, or any
// well-formed request with Content-Length or chunked framing) to HTTP/2:
// :method, :scheme, :authority (from Host) and :path first, then the other
// headers in order with lower-case names, minus the connection-specific
// ones; a chunked body is decoded.
func toH2(raw []byte, scheme string) (h2req, error) {
	i := bytes.Index(raw, crlfcrlf)
	if i < 0 {
		return h2req{}, errors.New("no blank line after the header")
	}
	head, rest := string(raw[:i]), raw[i+4:]
	lines := strings.Split(head, "\r\n")
	method, after, ok1 := strings.Cut(lines[0], " ")
	target, version, ok2 := strings.Cut(after, " ")
	if !ok1 || !ok2 || method == "" || target == "" || (version != "HTTP/1.1" && version != "HTTP/1.0") {
		return h2req{}, fmt.Errorf("request line %q: want METHOD TARGET HTTP/1.x", lines[0])
	}
	type field struct{ name, value string }
	var fields []field
	var authority string
	var drop []string
	length, chunked := int64(-1), false
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return h2req{}, fmt.Errorf("header line %q: want Name: value", l)
		}
		name, value = strings.ToLower(name), string(http1.TrimOWS([]byte(value)))
		switch name {
		case "host":
			if authority == "" {
				authority = value
			}
		case "content-length":
			n, ok := http1.ParseDecimal([]byte(value))
			if !ok {
				return h2req{}, fmt.Errorf("content-length %q: want a decimal", value)
			}
			length = n
		case "transfer-encoding":
			chunked = strings.EqualFold(strings.TrimSpace(value[strings.LastIndexByte(value, ',')+1:]), "chunked")
			if !chunked {
				return h2req{}, fmt.Errorf("transfer-encoding %q: only chunked can be converted", value)
			}
		case "connection":
			for _, tok := range strings.Split(value, ",") {
				drop = append(drop, strings.ToLower(strings.TrimSpace(tok)))
			}
		case "te":
			if !strings.EqualFold(value, "trailers") {
				continue
			}
		}
		fields = append(fields, field{name, value})
	}
	if authority == "" {
		return h2req{}, errors.New("no Host header (HTTP/2 needs :authority)")
	}
	var body []byte
	switch {
	case chunked:
		b, err := dechunk(rest)
		if err != nil {
			return h2req{}, fmt.Errorf("chunked body: %w", err)
		}
		body = b
	case length >= 0:
		if int64(len(rest)) != length {
			return h2req{}, fmt.Errorf("body of %d bytes, content-length %d", len(rest), length)
		}
		body = rest
	case len(rest) > 0:
		return h2req{}, fmt.Errorf("body of %d bytes without content-length", len(rest))
	}

	hf := []hpack.HeaderField{{Name: ":method", Value: method}, {Name: ":scheme", Value: scheme}, {Name: ":authority", Value: authority}, {Name: ":path", Value: target}}
	for _, f := range fields {
		if (chunked && f.name == "content-length") || contains(connectionHeaders, f.name) || contains(drop, f.name) {
			continue
		}
		hf = append(hf, hpack.HeaderField{Name: f.name, Value: f.value})
	}
	return h2req{fields: hf, body: body}, nil
}

// h2IndexBudget is the most the classes' fields may take in the server's
// HPACK dynamic table for the first and indexed blocks to be used: the
// protocol's default table size, so no entry is ever evicted.
const h2IndexBudget = 4096

// h2Blocks encodes every class's header block once for the trial. The
// literal blocks come from an encoder whose table limit is 0: nothing is
// indexed, so each block is valid whatever was sent before (the size
// update its first write carries is not needed, the server's table
// staying empty, and is cut). The first and indexed blocks come from one
// encoder with the default table, fed each class's fields once in class
// order (first) and then again (indexed: every field is then in the table,
// so those blocks add nothing and never change). A connection sends class
// i's first block only after classes 0..i-1's (h2conn.block), as real
// clients' encoders index what they send, so the server decodes indexes,
// not literals, in the steady state.
func h2Blocks(reqs []h2req) {
	var buf bytes.Buffer
	lit := hpack.NewEncoder(&buf)
	lit.SetMaxDynamicTableSizeLimit(0)
	lit.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
	encode := func(e *hpack.Encoder, fs []hpack.HeaderField) []byte {
		buf.Reset()
		for _, f := range fs {
			e.WriteField(f)
		}
		return bytes.Clone(buf.Bytes())
	}
	size := 0
	seen := map[hpack.HeaderField]bool{}
	for i := range reqs {
		reqs[i].literal = encode(lit, reqs[i].fields)
		for _, f := range reqs[i].fields {
			if !seen[f] {
				seen[f] = true
				size += int(f.Size())
			}
		}
	}
	if size > h2IndexBudget {
		return
	}
	idx := hpack.NewEncoder(&buf)
	for i := range reqs {
		reqs[i].first = encode(idx, reqs[i].fields)
	}
	for i := range reqs {
		reqs[i].indexed = encode(idx, reqs[i].fields)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dechunk decodes a chunked body (trailers are dropped).
func dechunk(b []byte) ([]byte, error) {
	out := []byte{}
	for {
		i := bytes.Index(b, crlf)
		if i < 0 {
			return nil, errors.New("truncated chunk size line")
		}
		n, ok := http1.ParseChunkSize(b[:i])
		if !ok {
			return nil, fmt.Errorf("chunk size %q", b[:i])
		}
		b = b[i+2:]
		if n == 0 {
			return out, nil
		}
		if int64(len(b)) < n+2 || !bytes.Equal(b[n:n+2], crlf) {
			return nil, errors.New("truncated chunk")
		}
		out = append(out, b[:n]...)
		b = b[n+2:]
	}
}

// prepareH2 converts every class's request to HTTP/2 once for the trial.
func (t *trial) prepareH2() error {
	scheme := "http"
	if t.opts.Downstream.TLS() {
		scheme = "https"
	}
	reqs := make([]h2req, len(t.classes))
	for i := range t.classes {
		r, err := toH2(t.classes[i].raw, scheme)
		if err != nil {
			return fmt.Errorf("request %d: cannot be sent over %s: %w", i+1, t.opts.Downstream, err)
		}
		reqs[i] = r
	}
	h2Blocks(reqs)
	for i := range t.classes {
		t.classes[i].h2 = reqs[i]
	}
	return nil
}

// h2stream is one stream slot of a connection.
type h2stream struct {
	id      uint32 // 0: the slot is free
	class   int
	start   time.Duration // latency counts from here: when queued (closed loop) or intended (open loop)
	sent    time.Duration // when the request was queued, for the timeout (open loop: its actual send)
	own     time.Duration // open loop: the client's own part of sent − start (send.go)
	status  int           // the final response's status once its headers arrived
	body    []byte        // request body not yet sent (flow control)
	sendWin int64         // the server's window for this stream
	recvd   int64         // DATA bytes received since the last stream WINDOW_UPDATE
}

// h2conn is the HTTP/2 state of one connection.
type h2conn struct {
	sock    connIO
	br      *bufio.Reader
	fr      *http2.Framer
	wbuf    bytes.Buffer // frames to write; handed to sock by flush
	flushed bool         // wbuf is queued on sock, reset after the next read
	dec     *hpack.Decoder
	status  int // ":status" of the header block being decoded; 0 = none yet

	streams []h2stream
	classes int // classes of the trial
	open    int // streams in flight
	nextID  uint32
	pending int // streams with body bytes waiting for the server's window

	sendWin     int64 // the server's connection window
	peerWin     int64 // the server's SETTINGS_INITIAL_WINDOW_SIZE
	maxFrame    int   // the server's SETTINGS_MAX_FRAME_SIZE
	maxStreams  int   // min(Options.Streams, the server's SETTINGS_MAX_CONCURRENT_STREAMS)
	recvd       int64 // DATA bytes received since the last connection WINDOW_UPDATE
	goAway      bool  // no new streams: GOAWAY received or stream IDs used up
	settingsErr error // first invalid setting of the server's SETTINGS

	primed     int    // classes whose first block this connection sent, in class order
	literal    bool   // send literal blocks only (the server's table is too small)
	sizeUpdate bool   // prefix the next block with a table size update to 0
	scratch    []byte // that prefixed block
}

// newH2conn starts HTTP/2 on a fresh connection: the preface, our SETTINGS
// and the connection window update are queued for the first flush.
func newH2conn(t *trial, sock connIO) *h2conn {
	h := &h2conn{
		sock:       sock,
		br:         bufio.NewReaderSize(sock, readBufSize),
		streams:    make([]h2stream, t.streams),
		classes:    len(t.classes),
		nextID:     1,
		sendWin:    h2DefaultWindow,
		peerWin:    h2DefaultWindow,
		maxFrame:   h2DefaultMaxFrame,
		maxStreams: t.streams,
	}
	h.fr = http2.NewFramer(&h.wbuf, h.br)
	h.fr.SetReuseFrames()
	h.dec = hpack.NewDecoder(h2HeaderTable, h.emit)
	h.wbuf.WriteString(http2.ClientPreface)
	h.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
	)
	h.fr.WriteWindowUpdate(0, h2ConnWindow-h2DefaultWindow)
	return h
}

// emit receives decoded header fields: it keeps ":status" (always first,
// pseudo-headers come first) and stops decoding strings after it, so the
// other fields of the block cost no allocation.
func (h *h2conn) emit(f hpack.HeaderField) {
	if v := f.Value; f.Name == ":status" && len(v) == 3 && v[0] >= '1' && v[0] <= '5' &&
		v[1] >= '0' && v[1] <= '9' && v[2] >= '0' && v[2] <= '9' {
		h.status = int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0')
	}
	h.dec.SetEmitEnabled(false)
}

// stream returns the slot of stream id, nil if it is not open.
func (h *h2conn) stream(id uint32) *h2stream {
	if id == 0 {
		return nil
	}
	n := len(h.streams)
	k := int(id>>1) % n // where open put it when that slot was free
	for i := range n {
		s := &h.streams[(k+i)%n]
		if s.id == id {
			return s
		}
	}
	return nil
}

// freeSlot returns a free slot for stream id.
func (h *h2conn) freeSlot(id uint32) *h2stream {
	n := len(h.streams)
	k := int(id>>1) % n
	for i := range n {
		if s := &h.streams[(k+i)%n]; s.id == 0 {
			return s
		}
	}
	return nil
}

// close frees a stream's slot.
func (h *h2conn) close(s *h2stream) {
	if len(s.body) > 0 {
		h.pending--
	}
	*s = h2stream{}
	h.open--
}

// frameBuffered reports whether a whole frame is already in the read
// buffer, so reading it will not block.
func (h *h2conn) frameBuffered() bool {
	n := h.br.Buffered()
	if n < 9 {
		return false
	}
	p, _ := h.br.Peek(9)
	return n >= 9+(int(p[0])<<16|int(p[1])<<8|int(p[2]))
}

// flush hands the queued frames to the socket; the next read writes them.
func (h *h2conn) flush() {
	if h.wbuf.Len() > 0 && !h.flushed {
		h.sock.Send(h.wbuf.Bytes())
		h.flushed = true
	}
}

// readFrame reads the next frame, flushing first if reading may block.
func (h *h2conn) readFrame() (http2.Frame, error) {
	if !h.frameBuffered() {
		h.flush()
	}
	f, err := h.fr.ReadFrame()
	if h.flushed {
		h.wbuf.Reset()
		h.flushed = false
	}
	return f, err
}

// openStream queues, at offset now, the HEADERS (and as much of the body
// as the windows allow) of a new stream sending class ci whose latency
// counts from start, and returns its slot.
func (h *h2conn) openStream(r *h2req, ci int, start, now time.Duration) *h2stream {
	id := h.nextID
	h.nextID += 2
	if h.nextID > h2MaxStreamID {
		h.goAway = true // drain, then reconnect
	}
	s := h.freeSlot(id)
	*s = h2stream{id: id, class: ci, start: start, sent: now, sendWin: h.peerWin}
	h.open++
	end := len(r.body) == 0
	block := h.block(r, ci)
	first := min(len(block), h.maxFrame)
	h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block[:first], EndStream: end, EndHeaders: first == len(block)})
	for block = block[first:]; len(block) > 0; {
		n := min(len(block), h.maxFrame)
		h.fr.WriteContinuation(id, n == len(block), block[:n])
		block = block[n:]
	}
	if !end {
		s.body = r.body
		h.pending++
		h.sendBody(s)
	}
	return s
}

// block is the header block to send for class ci's request r: its indexed
// form once every class's first block went out on this connection (in
// class order), its first form when it is the next to prime, else literal.
func (h *h2conn) block(r *h2req, ci int) []byte {
	var b []byte
	switch {
	case h.literal || r.first == nil:
		b = r.literal
	case h.primed == h.classes:
		b = r.indexed
	case ci == h.primed:
		b = r.first
		h.primed++
	default:
		b = r.literal
	}
	if h.sizeUpdate {
		h.sizeUpdate = false
		h.scratch = append(append(h.scratch[:0], 0x20), b...) // dynamic table size update: 0
		b = h.scratch
	}
	return b
}

// sendBody queues DATA frames of s's remaining body within the windows.
func (h *h2conn) sendBody(s *h2stream) {
	for len(s.body) > 0 {
		n := int(min(int64(len(s.body)), int64(h.maxFrame), s.sendWin, h.sendWin))
		if n <= 0 {
			return
		}
		last := n == len(s.body)
		h.fr.WriteData(s.id, last, s.body[:n])
		s.body = s.body[n:]
		s.sendWin -= int64(n)
		h.sendWin -= int64(n)
		if last {
			h.pending--
		}
	}
}

// resumeBodies sends what the windows now allow of every waiting body.
func (h *h2conn) resumeBodies() {
	for i := range h.streams {
		if h.pending == 0 {
			return
		}
		if s := &h.streams[i]; s.id != 0 && len(s.body) > 0 {
			h.sendBody(s)
		}
	}
}

// applySettings applies the server's SETTINGS and acknowledges them.
func (h *h2conn) applySettings(f *http2.SettingsFrame) {
	for i := range f.NumSettings() {
		s := f.Setting(i)
		if err := s.Valid(); err != nil && h.settingsErr == nil {
			h.settingsErr = err
		}
		switch s.ID {
		case http2.SettingInitialWindowSize:
			d := int64(s.Val) - h.peerWin
			h.peerWin = int64(s.Val)
			for j := range h.streams {
				if h.streams[j].id != 0 {
					h.streams[j].sendWin += d
				}
			}
		case http2.SettingMaxFrameSize:
			h.maxFrame = int(s.Val)
		case http2.SettingMaxConcurrentStreams:
			h.maxStreams = int(min(int64(s.Val), int64(len(h.streams))))
		case http2.SettingHeaderTableSize:
			if s.Val < h2IndexBudget && !h.literal {
				// Stop indexing and empty the table the server may now
				// no longer hold (RFC 7541 §4.2).
				h.literal, h.sizeUpdate = true, true
			}
		}
	}
	h.fr.WriteSettingsAck()
	h.resumeBodies()
}

// runH2 is run for HTTP/2: it keeps up to Options.Streams streams in flight
// on the worker's connection until the window ends, the trial stops or the
// cap is reached.
func (w *worker) runH2() {
	t := w.t
	if t.every > 0 {
		w.runH2Open()
		return
	}
	for !t.stop.Load() {
		now := t.since()
		if now >= t.wEnd {
			return
		}
		if w.conn == nil && !w.connect() {
			continue
		}
		h := w.h2
		for !h.goAway && h.open < h.maxStreams {
			ci := int(t.seq[w.pos%len(t.seq)])
			w.pos++
			h.openStream(&t.classes[ci].h2, ci, now, now)
		}
		if h.open == 0 {
			w.dropConn() // drained after GOAWAY: open a new connection
			continue
		}
		if w.needDeadline || now-w.deadlineAt >= t.refresh {
			w.conn.SetDeadline(t.base.Add(min(now+t.timeout, t.wEnd)))
			w.deadlineAt, w.needDeadline = now, false
			if t.stop.Load() {
				return // interrupt may have run before the line above
			}
			w.expireStreams(now)
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

// kindStop is what handleFrame returns when the worker must stop (window
// over or cap reached); it is never counted.
const kindStop = numKinds

// h2Kind classifies an error of reading a frame: HTTP/2 protocol and HPACK
// errors are parse errors, the rest as classify does.
func h2Kind(err error) kind {
	var ce http2.ConnectionError
	var se http2.StreamError
	var de hpack.DecodingError
	if errors.As(err, &ce) || errors.As(err, &se) || errors.As(err, &de) ||
		errors.Is(err, http2.ErrFrameTooLarge) || errors.Is(err, hpack.ErrStringLength) {
		return kindParse
	}
	return classify(err, kindRead)
}

// expireStreams fails the streams in flight for longer than the timeout
// (the connection deadline alone would miss one stuck stream among busy
// ones) and resets them.
func (w *worker) expireStreams(now time.Duration) {
	h := w.h2
	for i := range h.streams {
		if s := &h.streams[i]; s.id != 0 && now-s.sent >= w.t.timeout {
			w.count(s.class, kindTimeout, now)
			h.fr.WriteRSTStream(s.id, http2.ErrCodeCancel)
			h.close(s)
		}
	}
}

// failConn counts a connection failure once per stream in flight (once if
// none was) and drops the connection, which is reopened on the next
// iteration. Failures caused by the trial stopping are not errors.
func (w *worker) failConn(k kind) {
	now := w.t.since()
	if !w.t.stop.Load() {
		counted := false
		for i := range w.h2.streams {
			if s := &w.h2.streams[i]; s.id != 0 {
				w.count(s.class, k, now)
				counted = true
			}
		}
		if !counted {
			w.count(int(w.t.seq[w.pos%len(w.t.seq)]), k, now)
		}
	}
	w.dropConn()
}

// handleFrame acts on one frame read from the server.
func (w *worker) handleFrame(f http2.Frame) kind {
	h := w.h2
	switch f := f.(type) {
	case *http2.DataFrame:
		return w.handleData(f)
	case *http2.HeadersFrame:
		return w.handleHeaders(f)
	case *http2.RSTStreamFrame:
		if s := h.stream(f.StreamID); s != nil {
			w.count(s.class, kindReset, w.t.since())
			h.close(s)
		}
	case *http2.SettingsFrame:
		if !f.IsAck() {
			h.applySettings(f)
			if h.settingsErr != nil {
				return kindParse
			}
		}
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			h.sendWin += int64(f.Increment)
		} else if s := h.stream(f.StreamID); s != nil {
			s.sendWin += int64(f.Increment)
		}
		h.resumeBodies()
	case *http2.PingFrame:
		if !f.IsAck() {
			h.fr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		w.handleGoAway(f)
	case *http2.PushPromiseFrame:
		return kindParse // SETTINGS_ENABLE_PUSH is 0
	}
	return kindOK
}

// handleData returns flow-control credit for a DATA frame and finishes its
// stream when the frame ends it.
func (w *worker) handleData(f *http2.DataFrame) kind {
	h := w.h2
	n := int64(f.Header().Length) // padding counts against the windows too
	if h.recvd += n; h.recvd >= h2ConnWindow/2 {
		h.fr.WriteWindowUpdate(0, uint32(h.recvd))
		h.recvd = 0
	}
	s := h.stream(f.StreamID)
	if s == nil {
		return kindOK // a stream we already closed (reset or timed out)
	}
	if f.StreamEnded() {
		return w.finish(s)
	}
	if s.recvd += n; s.recvd >= h2StreamWindow/2 {
		h.fr.WriteWindowUpdate(s.id, uint32(s.recvd))
		s.recvd = 0
	}
	return kindOK
}

// handleHeaders decodes a header block (with its CONTINUATION frames) and
// takes the response status from it.
func (w *worker) handleHeaders(f *http2.HeadersFrame) kind {
	h := w.h2
	// Every header block is decoded, even of a closed stream: the
	// server's HPACK table depends on it.
	h.status = 0
	h.dec.SetEmitEnabled(true)
	// f is valid only until the next read (CONTINUATION frames).
	id, endStream, ended := f.StreamID, f.StreamEnded(), f.HeadersEnded()
	if _, err := h.dec.Write(f.HeaderBlockFragment()); err != nil {
		return kindParse
	}
	for !ended {
		w.blockingReads()
		next, err := h.readFrame()
		if err != nil {
			return h2Kind(err)
		}
		c, ok := next.(*http2.ContinuationFrame)
		if !ok { // the Framer checks the sequence; this is a safeguard
			return kindParse
		}
		if _, err := h.dec.Write(c.HeaderBlockFragment()); err != nil {
			return kindParse
		}
		ended = c.HeadersEnded()
	}
	if err := h.dec.Close(); err != nil {
		return kindParse
	}
	s := h.stream(id)
	if s == nil {
		return kindOK
	}
	if s.status == 0 { // response headers, not trailers
		switch {
		case h.status == 0:
			return kindParse // no valid :status
		case h.status < 200:
			if endStream {
				return kindParse
			}
			return kindOK // 100 Continue, 103 Early Hints: the real one follows
		}
		s.status = h.status
	}
	if endStream {
		return w.finish(s)
	}
	return kindOK
}

// handleGoAway loses the streams above the last one the server will
// process; the others finish, then the worker opens a new connection. The
// GOAWAY itself counts once as "closed", as a "Connection: close" does over
// HTTP/1.1.
func (w *worker) handleGoAway(f *http2.GoAwayFrame) {
	h := w.h2
	w.count(int(w.t.seq[w.pos%len(w.t.seq)]), kindClosed, w.t.since())
	h.goAway = true
	for i := range h.streams {
		if s := &h.streams[i]; s.id != 0 && s.id > f.LastStreamID {
			w.count(s.class, kindClosed, w.t.since())
			h.close(s)
		}
	}
}

// finish accounts for a stream whose response ended.
func (w *worker) finish(s *h2stream) kind {
	h := w.h2
	end := w.t.since()
	ci, status, st := s.class, s.status, stamp{start: s.start, sent: s.sent, own: s.own}
	if len(s.body) > 0 {
		// The server answered before the whole body was sent (a WAF
		// denying early): stop sending it.
		h.fr.WriteRSTStream(s.id, http2.ErrCodeCancel)
	}
	h.close(s)
	if status == 0 {
		w.count(ci, kindParse, end) // END_STREAM before response headers
		return kindOK
	}
	if !w.complete(ci, status, end, st) {
		return kindStop
	}
	return kindOK
}
