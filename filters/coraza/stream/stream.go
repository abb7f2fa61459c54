// Package stream is the request logic both wafbench Coraza filters share —
// the native Envoy dynamic module (filters/coraza) and the proxy-wasm
// filter (filters/coraza-wasm): which phase runs when, what is counted,
// when the filter answers itself and how it fails closed. Only the host
// glue differs: how headers, body chunks and attributes are read, how a
// counter is incremented and how a local reply is sent, which a filter
// supplies as a Host.
package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"wafbench/filters/coraza/engine"
)

// Counter indexes the module's counters (preamble contract 4). The stage
// timers come last and exist only when stage timers are on.
type Counter int

// The counters, in the order the modules define them.
const (
	requests      Counter = iota // every stream that reached the filter
	blockedPhase1                // rule verdicts in phase 1
	blockedPhase2                // rule verdicts in phase 2 (and on responses)
	bodyTooLarge                 // 413s from the filter's own body limit
	engineErrors                 // requests failed closed (engine error or panic), answered 500
	phase1Ns                     // ns: headers mapped and phase 1
	bodyNs                       // ns: feeding the buffered body to the engine
	phase2Ns                     // ns: phase 2
	loggingNs                    // ns: phase 5
	NumCounters
	FirstTimer = phase1Ns
)

// counterPrefix is the prefix of every counter name of the Coraza filters.
const counterPrefix = "wafbench_coraza_"

// CounterNames are the full counter names, the same in both Coraza filters
// and, with the engine's prefix, in the C++ module.
var CounterNames = [NumCounters]string{
	requests:      counterPrefix + "requests",
	blockedPhase1: counterPrefix + "blocked_phase1",
	blockedPhase2: counterPrefix + "blocked_phase2",
	bodyTooLarge:  counterPrefix + "body_too_large",
	engineErrors:  counterPrefix + "engine_errors",
	phase1Ns:      counterPrefix + "phase1_ns",
	bodyNs:        counterPrefix + "body_ns",
	phase2Ns:      counterPrefix + "phase2_ns",
	loggingNs:     counterPrefix + "logging_ns",
}

// StageTimersEnv enables the stage timers when set to "1".
const StageTimersEnv = "WAFBENCH_STAGE_TIMERS"

// Reason says why the filter answered a request itself.
type Reason int

// The local-reply reasons. The native module's glue.h indexes its details
// strings by these values.
const (
	replyPhase1 Reason = iota
	replyPhase2
	replyResponse
	replyBodyTooLarge
	replyEngineError
)

// Details is the response-code details string of r (Envoy's
// %RESPONSE_CODE_DETAILS%).
func (r Reason) Details() string {
	switch r {
	case replyPhase1:
		return "wafbench_coraza_phase1"
	case replyPhase2:
		return "wafbench_coraza_phase2"
	case replyResponse:
		return "wafbench_coraza_response"
	case replyBodyTooLarge:
		return "wafbench_coraza_body_too_large"
	}
	return "wafbench_coraza_engine_error"
}

// ReplyBody is the body of every local reply.
const ReplyBody = "Request blocked by wafbench coraza\n"

// moduleInfoPrefix starts the self-report line (preamble contract 3).
const moduleInfoPrefix = "wafbench-module "

// moduleInfo is the self-report of one filter configuration.
type moduleInfo struct {
	Module        string `json:"module"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Build         string `json:"build"`
	Rules         int    `json:"rules"`
}

// InfoLine is the self-report line of a filter of build running w, e.g.
// `wafbench-module {"module":"wafbench_coraza",...}`.
func InfoLine(build string, w *engine.WAF) (string, error) {
	b, err := json.Marshal(moduleInfo{Module: "wafbench_coraza", Engine: "coraza", EngineVersion: engine.Version(),
		Build: build, Rules: w.Rules()})
	if err != nil {
		return "", err
	}
	return moduleInfoPrefix + string(b), nil
}

// ParseConfig decodes a filter configuration (the filter_config JSON of
// the native module, the plugin configuration of the Wasm filter),
// rejecting unknown fields and trailing data.
func ParseConfig(raw []byte) (engine.Config, error) {
	var c engine.Config
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return c, fmt.Errorf("filter_config: %w", err)
	}
	if d.More() {
		return c, fmt.Errorf("filter_config: trailing data after the JSON object")
	}
	return c, c.Validate()
}

// Host is what a stream needs of the proxy it runs in.
type Host interface {
	// Inc adds v to counter c (only called for defined counters).
	Inc(c Counter, v uint64)
	// Reply sends the local reply (called at most once per stream).
	Reply(status int, r Reason)
	// LogError logs an error of this stream.
	LogError(msg string)
}

// Filter is one filter configuration: one WAF shared by its streams.
type Filter struct {
	WAF *engine.WAF
	// Timers turns the stage timers on (WAFBENCH_STAGE_TIMERS=1).
	Timers bool
}

// Defined reports whether counter c exists in f's configuration.
func (f *Filter) Defined(c Counter) bool { return c < FirstTimer || f.Timers }

// MaxBodyBytes is the filter's own request-body limit.
func (f *Filter) MaxBodyBytes() int { return f.WAF.Config().MaxBodyBytes }

// Stream is one request. A proxy calls its methods from one thread.
type Stream struct {
	f            *Filter
	h            Host
	tx           *engine.Tx
	t0           time.Time // when Start ran (stage timers on only)
	passed       bool      // phase 2 let the request through
	replied      bool      // a local reply was sent
	respBody     bool      // phase 4 waits for the response body
	errorCounted bool
}

// New is a stream of f on host h. Start counts the request.
func New(f *Filter, h Host) *Stream { return &Stream{f: f, h: h} }

// Started reports whether Start began a transaction that is not closed
// yet.
func (s *Stream) Started() bool { return s.tx != nil }

// Passed reports whether phase 2 let the request through.
func (s *Stream) Passed() bool { return s.passed }

// Replied reports whether the filter answered the request itself.
func (s *Stream) Replied() bool { return s.replied }

func (s *Stream) inc(c Counter, v uint64) {
	if s.f.Defined(c) {
		s.h.Inc(c, v)
	}
}

func (s *Stream) now() time.Time {
	if !s.f.Timers {
		return time.Time{}
	}
	return time.Now()
}

func (s *Stream) addTime(c Counter, t0 time.Time) {
	if s.f.Timers {
		s.inc(c, uint64(time.Since(t0)))
	}
}

func (s *Stream) reply(status int, r Reason) {
	if s.replied {
		return
	}
	s.replied = true
	s.h.Reply(status, r)
}

// FailClosed counts the request in engine_errors (once) and, when reply is
// set and no local reply was sent yet, answers it with 500.
func (s *Stream) FailClosed(err error, reply bool) {
	s.h.LogError(fmt.Sprintf("wafbench_coraza: failing closed: %v", err))
	if !s.errorCounted {
		s.errorCounted = true
		s.inc(engineErrors, 1)
	}
	if reply {
		s.reply(http.StatusInternalServerError, replyEngineError)
	}
}

// block answers a verdict: an engine error fails closed, a rule's verdict
// is counted by its phase.
func (s *Stream) block(v *engine.Verdict) {
	if err := s.tx.Err(); err != nil {
		s.FailClosed(err, true)
		return
	}
	switch v.Phase {
	case 1:
		s.inc(blockedPhase1, 1)
		s.reply(v.Status, replyPhase1)
	case 2:
		s.inc(blockedPhase2, 1)
		s.reply(v.Status, replyPhase2)
	default:
		// No separate counter, as in the C++ module: response inspection
		// is off in the benchmark setup.
		s.inc(blockedPhase2, 1)
		s.reply(v.Status, replyResponse)
	}
}

// Request is what a proxy knows of a request when its headers arrive.
type Request struct {
	Headers        [][2]string // as the proxy presents them, pseudo-headers included
	Client, Server string      // source and destination address attributes ("ip:port")
	Proto          string      // e.g. "HTTP/1.1"; "" means HTTP/1.1
}

// Start counts the request and starts its transaction; call it first
// when the request headers arrive.
func (s *Stream) Start() {
	s.inc(requests, 1)
	s.t0 = s.now()
	s.tx = s.f.WAF.NewTx()
}

// RequestHeaders runs phase 1 on the headers of a started stream, and
// phase 2 too when the request has no body (endOfStream). It reports
// whether the proxy may forward the request now: false means the filter
// answered it, or is waiting for the body.
func (s *Stream) RequestHeaders(req Request, endOfStream bool) bool {
	t0 := s.t0
	rl, hdrs := engine.MapHeaders(nil, req.Headers)
	cip, cport, _ := engine.ParseAddr(req.Client)
	sip, sport, _ := engine.ParseAddr(req.Server)
	s.tx.ProcessConnection(cip, cport, sip, sport)
	proto := req.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	s.tx.ProcessURI(rl.Path, rl.Method, proto)
	for _, h := range hdrs {
		s.tx.AddHeader(h[0], h[1])
	}
	v := s.tx.ProcessRequestHeaders()
	s.addTime(phase1Ns, t0)
	if v != nil {
		s.block(v)
		return false
	}
	if endOfStream {
		return s.phase2()
	}
	return false
}

// CheckBodySize answers 413 when the body buffered so far (total bytes)
// exceeds the filter's limit, and reports whether it did.
func (s *Stream) CheckBodySize(total uint64) bool {
	if total <= uint64(s.f.MaxBodyBytes()) {
		return false
	}
	s.inc(bodyTooLarge, 1)
	s.reply(http.StatusRequestEntityTooLarge, replyBodyTooLarge)
	return true
}

// Body feeds the whole request body, in chunks, to the engine and runs
// phase 2. It reports whether the proxy may forward the request. The
// engine copies each chunk, so the chunks may alias proxy memory that is
// valid only during the call.
func (s *Stream) Body(chunks [][]byte) bool {
	t0 := s.now()
	var v *engine.Verdict
	for _, c := range chunks {
		if len(c) == 0 {
			continue
		}
		if v, _ = s.tx.WriteBody(c); v != nil {
			break
		}
	}
	s.addTime(bodyNs, t0)
	if v != nil {
		s.block(v)
		return false
	}
	return s.phase2()
}

// phase2 runs phase 2 and reports whether the request may continue.
func (s *Stream) phase2() bool {
	t0 := s.now()
	v := s.tx.ProcessRequestBody()
	s.addTime(phase2Ns, t0)
	if v != nil {
		s.block(v)
		return false
	}
	s.passed = true
	return true
}

// InspectsResponse reports whether ResponseHeaders has work to do.
func (s *Stream) InspectsResponse() bool {
	return s.tx != nil && s.passed && !s.replied && s.f.WAF.Config().InspectResponse
}

// ResponseHeaders runs phase 3 on a response (status, headers without
// pseudo-headers) and then phase 4, unless the engine reads the response
// body (SecResponseBodyAccess On, a content type SecResponseBodyMimeType
// names) and a body follows (endOfStream false): then WantsResponseBody
// reports true, the proxy holds the headers and buffers the body, and
// ResponseBody runs phase 4. It reports whether the response may go on now.
func (s *Stream) ResponseHeaders(status int, headers [][2]string, proto string, endOfStream bool) bool {
	for _, h := range headers {
		s.tx.AddResponseHeader(h[0], h[1])
	}
	if v := s.tx.ProcessResponseHeaders(status, proto); v != nil {
		s.block(v)
		return false
	}
	if !endOfStream && s.tx.WantsResponseBody() {
		s.respBody = true
		return false
	}
	return s.phase4()
}

// WantsResponseBody reports whether phase 4 waits for the response body.
func (s *Stream) WantsResponseBody() bool { return s.respBody && s.tx != nil && !s.replied }

// ResponseBody feeds the buffered response body (chunks may alias proxy
// memory valid during the call only: the engine copies them) and runs
// phase 4. It reports whether the response may go on.
func (s *Stream) ResponseBody(chunks [][]byte) bool {
	s.respBody = false
	for _, c := range chunks {
		if v := s.tx.WriteResponseBody(c); v != nil {
			s.block(v)
			return false
		}
	}
	return s.phase4()
}

// phase4 runs phase 4 and reports whether the response may go on.
func (s *Stream) phase4() bool {
	if v := s.tx.ProcessResponseBody(); v != nil {
		s.block(v)
		return false
	}
	return true
}

// Log runs phase 5 (when a transaction was started) and closes the
// transaction.
func (s *Stream) Log() {
	if s.tx == nil {
		return
	}
	defer s.Close()
	t0 := s.now()
	s.tx.ProcessLogging()
	s.addTime(loggingNs, t0)
}

// Close releases the transaction; later calls do nothing.
func (s *Stream) Close() {
	if s.tx != nil {
		tx := s.tx
		s.tx = nil
		tx.Close()
	}
}

// failCloser is what Rescue needs of a stream.
type failCloser interface {
	FailClosed(err error, reply bool)
}

// Rescue is deferred by every hook that runs Go code beyond a handle
// look-up: it recovers a panic, so that none reaches the proxy, sets the
// hook's status to closed and fails the request closed. reply is false for
// hooks that run after the response (logging, destroy).
func Rescue[S any](fc failCloser, st *S, closed S, reply bool) {
	r := recover()
	if r == nil {
		return
	}
	*st = closed
	fc.FailClosed(fmt.Errorf("panic: %v\n%s", r, debug.Stack()), reply)
}
