package main

/*
#include "glue.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/cgo"
	"runtime/debug"
	"strconv"
	"time"
	"unsafe"

	"wafbench/filters/coraza/engine"
)

// buildName is the mode name of this build (preamble contract 3), set with
// -ldflags=-X main.buildName=coraza@re2; "coraza" is the default build.
var buildName = "coraza"

// Counter indexes; names are prefixed with "wafbench_coraza_". The stage
// timers come last and are defined only when stage timers are on.
const (
	ctrRequests = iota
	ctrBlockedPhase1
	ctrBlockedPhase2
	ctrBodyTooLarge
	ctrEngineErrors
	ctrPhase1Ns
	ctrBodyNs
	ctrPhase2Ns
	ctrLoggingNs
	numCounters
	firstTimer = ctrPhase1Ns
)

// counterNames match the C++ module's, with the engine's prefix: requests
// counts every stream that reached the filter; blocked_phase1/2 the rule
// verdicts; body_too_large the 413s of the module's own body limit;
// engine_errors every request failed closed (engine error or Go panic,
// answered 500). The timers accumulate nanoseconds: phase1_ns (headers
// mapped and phase 1), body_ns (feeding the buffered body to the engine),
// phase2_ns, logging_ns.
var counterNames = [numCounters]string{
	ctrRequests:      "wafbench_coraza_requests",
	ctrBlockedPhase1: "wafbench_coraza_blocked_phase1",
	ctrBlockedPhase2: "wafbench_coraza_blocked_phase2",
	ctrBodyTooLarge:  "wafbench_coraza_body_too_large",
	ctrEngineErrors:  "wafbench_coraza_engine_errors",
	ctrPhase1Ns:      "wafbench_coraza_phase1_ns",
	ctrBodyNs:        "wafbench_coraza_body_ns",
	ctrPhase2Ns:      "wafbench_coraza_phase2_ns",
	ctrLoggingNs:     "wafbench_coraza_logging_ns",
}

// Local-reply reasons; the indexes of wb_reply_details in glue.h.
const (
	replyPhase1 = iota
	replyPhase2
	replyResponse
	replyBodyTooLarge
	replyEngineError
)

// stageTimersEnv enables the stage timers when set to "1".
const stageTimersEnv = "WAFBENCH_STAGE_TIMERS"

// moduleInfo is the module-info line of the shared contract, logged once
// per filter config.
type moduleInfo struct {
	Module        string `json:"module"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Build         string `json:"build"`
	Rules         int    `json:"rules"`
}

// filterConfig is one filter_config: one WAF shared by all its streams.
type filterConfig struct {
	waf      *engine.WAF
	timers   bool
	counters [numCounters]C.size_t
	defined  [numCounters]bool
}

// now reads the clock only when stage timers are on.
func (c *filterConfig) now() time.Time {
	if !c.timers {
		return time.Time{}
	}
	return time.Now()
}

type envoyFilter = C.envoy_dynamic_module_type_http_filter_envoy_ptr

// filter is one HTTP stream. Envoy calls its hooks from one worker thread.
type filter struct {
	cfg          *filterConfig
	ef           envoyFilter // the stream's Envoy side, refreshed by every hook
	tx           *engine.Tx
	passed       bool // phase 2 let the request through
	replied      bool // a local reply was sent (verdict, 413 or failed closed)
	errorCounted bool
	panicAt      string // test builds only: the hook that panics (see testPanicHeader)
	headers      []C.envoy_dynamic_module_type_envoy_http_header
}

// failCloser is what rescue needs of a stream.
type failCloser interface {
	// failClosed counts the request in engine_errors (once) and, when
	// reply is set and no local reply was sent yet, answers it with 500.
	failClosed(err error, reply bool)
}

// rescue is deferred by every exported hook that runs Go code beyond a
// handle look-up: it recovers a panic, so that none reaches Envoy, sets the
// hook's status to closed and fails the request closed. reply is false for
// hooks that run after the response (stream complete, destroy).
func rescue[S any](fc failCloser, st *S, closed S, reply bool) {
	r := recover()
	if r == nil {
		return
	}
	*st = closed
	fc.failClosed(fmt.Errorf("panic: %v\n%s", r, debug.Stack()), reply)
}

// noStatus is the status type of hooks that return nothing.
type noStatus struct{}

func logf(level C.envoy_dynamic_module_type_log_level, format string, args ...any) {
	if !C.envoy_dynamic_module_callback_log_enabled(level) {
		return
	}
	msg := C.CString(fmt.Sprintf(format, args...))
	defer C.free(unsafe.Pointer(msg))
	C.envoy_dynamic_module_callback_log(level, C.envoy_dynamic_module_type_module_buffer{ptr: msg, length: C.size_t(C.strlen(msg))})
}

func goBytes(b C.envoy_dynamic_module_type_envoy_buffer) []byte {
	if b.ptr == nil || b.length == 0 {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(b.ptr), C.int(b.length))
}

func goString(p C.envoy_dynamic_module_type_buffer_envoy_ptr, n C.size_t) string {
	if p == nil || n == 0 {
		return ""
	}
	return C.GoStringN(p, C.int(n))
}

//export envoy_dynamic_module_on_program_init
func envoy_dynamic_module_on_program_init() C.envoy_dynamic_module_type_abi_version_module_ptr {
	return C.wb_abi_version()
}

// configLog reports a failed filter config (nil stream).
type configLog string

func (c configLog) failClosed(err error, _ bool) {
	logf(C.envoy_dynamic_module_type_log_level_Error, "wafbench_coraza filter %q: %v", string(c), err)
}

//export envoy_dynamic_module_on_http_filter_config_new
func envoy_dynamic_module_on_http_filter_config_new(envoyCfg C.envoy_dynamic_module_type_http_filter_config_envoy_ptr,
	name C.envoy_dynamic_module_type_envoy_buffer, config C.envoy_dynamic_module_type_envoy_buffer,
) (ptr C.envoy_dynamic_module_type_http_filter_config_module_ptr) {
	cfgName := configLog(goBytes(name))
	defer rescue(cfgName, &ptr, nil, false)
	fc, err := newFilterConfig(envoyCfg, string(cfgName), goBytes(config))
	if err != nil {
		cfgName.failClosed(err, false)
		return nil
	}
	return C.envoy_dynamic_module_type_http_filter_config_module_ptr(C.wb_handle_ptr(C.uintptr_t(cgo.NewHandle(fc))))
}

func newFilterConfig(envoyCfg C.envoy_dynamic_module_type_http_filter_config_envoy_ptr, name string, raw []byte) (*filterConfig, error) {
	ec, err := parseConfig(raw)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	w, err := engine.New(ec)
	if err != nil {
		return nil, err
	}
	fc := &filterConfig{waf: w, timers: os.Getenv(stageTimersEnv) == "1"}
	for i := range numCounters {
		if i >= firstTimer && !fc.timers {
			break
		}
		cname := C.CString(counterNames[i])
		var id C.size_t
		res := C.envoy_dynamic_module_callback_http_filter_config_define_counter(envoyCfg,
			C.envoy_dynamic_module_type_module_buffer{ptr: cname, length: C.size_t(len(counterNames[i]))}, nil, 0, &id)
		C.free(unsafe.Pointer(cname))
		if res != C.envoy_dynamic_module_type_metrics_result_Success {
			return nil, fmt.Errorf("define counter %s: result %d", counterNames[i], int(res))
		}
		fc.counters[i], fc.defined[i] = id, true
	}
	info, err := json.Marshal(moduleInfo{Module: "wafbench_coraza", Engine: "coraza", EngineVersion: engine.Version(),
		Build: buildName, Rules: w.Rules()})
	if err != nil {
		return nil, err
	}
	logf(C.envoy_dynamic_module_type_log_level_Info, "wafbench-module %s", info)
	logf(C.envoy_dynamic_module_type_log_level_Info, "wafbench_coraza filter %q: loaded %s in %v (inspect_response=%v max_body_bytes=%d stage_timers=%v)",
		name, ec.RulesFile, time.Since(start).Round(time.Millisecond), ec.InspectResponse, w.Config().MaxBodyBytes, fc.timers)
	return fc, nil
}

//export envoy_dynamic_module_on_http_filter_config_destroy
func envoy_dynamic_module_on_http_filter_config_destroy(p C.envoy_dynamic_module_type_http_filter_config_module_ptr) {
	cgo.Handle(C.wb_ptr_handle(unsafe.Pointer(p))).Delete()
}

//export envoy_dynamic_module_on_http_filter_per_route_config_new
func envoy_dynamic_module_on_http_filter_per_route_config_new(name, config C.envoy_dynamic_module_type_envoy_buffer) C.envoy_dynamic_module_type_http_filter_per_route_config_module_ptr {
	logf(C.envoy_dynamic_module_type_log_level_Error, "wafbench_coraza: per-route config is not supported")
	return nil
}

//export envoy_dynamic_module_on_http_filter_per_route_config_destroy
func envoy_dynamic_module_on_http_filter_per_route_config_destroy(p C.envoy_dynamic_module_type_http_filter_per_route_config_module_ptr) {
}

//export envoy_dynamic_module_on_http_filter_new
func envoy_dynamic_module_on_http_filter_new(cfgPtr C.envoy_dynamic_module_type_http_filter_config_module_ptr,
	ef envoyFilter,
) C.envoy_dynamic_module_type_http_filter_module_ptr {
	fc := cgo.Handle(C.wb_ptr_handle(unsafe.Pointer(cfgPtr))).Value().(*filterConfig)
	return C.envoy_dynamic_module_type_http_filter_module_ptr(C.wb_handle_ptr(C.uintptr_t(cgo.NewHandle(&filter{cfg: fc, ef: ef}))))
}

// getFilter returns the stream of handle p and records its Envoy side.
func getFilter(p C.envoy_dynamic_module_type_http_filter_module_ptr, ef envoyFilter) *filter {
	f := cgo.Handle(C.wb_ptr_handle(unsafe.Pointer(p))).Value().(*filter)
	f.ef = ef
	return f
}

//export envoy_dynamic_module_on_http_filter_destroy
func envoy_dynamic_module_on_http_filter_destroy(p C.envoy_dynamic_module_type_http_filter_module_ptr) {
	h := cgo.Handle(C.wb_ptr_handle(unsafe.Pointer(p)))
	f := h.Value().(*filter)
	defer h.Delete()
	var st noStatus
	defer rescue(f, &st, st, false)
	f.closeTx()
}

func (f *filter) closeTx() {
	if f.tx != nil {
		tx := f.tx
		f.tx = nil
		tx.Close()
	}
}

func (f *filter) inc(i int, v uint64) {
	if !f.cfg.defined[i] {
		return
	}
	C.envoy_dynamic_module_callback_http_filter_increment_counter(f.ef, f.cfg.counters[i], nil, 0, C.uint64_t(v))
}

// addTime adds the time since start to timer i (stage timers on only).
func (f *filter) addTime(i int, start time.Time) {
	if f.cfg.timers {
		f.inc(i, uint64(time.Since(start)))
	}
}

// attr reads a string attribute; "" when Envoy has none.
func (f *filter) attr(id C.envoy_dynamic_module_type_attribute_id) string {
	var b C.envoy_dynamic_module_type_envoy_buffer
	if !C.envoy_dynamic_module_callback_http_filter_get_attribute_string(f.ef, id, &b) {
		return ""
	}
	return goString(b.ptr, b.length)
}

// reply sends the local reply once.
func (f *filter) reply(status int, reason int) {
	if f.replied {
		return
	}
	f.replied = true
	C.envoy_dynamic_module_callback_http_send_response(f.ef, C.uint32_t(status), C.wb_reply_headers(), 1,
		C.wb_blocked_body(), C.wb_reply_details(C.int(reason)))
}

func (f *filter) failClosed(err error, reply bool) {
	logf(C.envoy_dynamic_module_type_log_level_Error, "wafbench_coraza: failing closed: %v", err)
	if !f.errorCounted {
		f.errorCounted = true
		f.inc(ctrEngineErrors, 1)
	}
	if reply {
		f.reply(500, replyEngineError)
	}
}

// block answers a verdict: an engine error fails closed (500, counted in
// engine_errors), a rule's verdict is counted by its phase.
func (f *filter) block(v *engine.Verdict) {
	if err := f.tx.Err(); err != nil {
		f.failClosed(err, true)
		return
	}
	switch v.Phase {
	case 1:
		f.inc(ctrBlockedPhase1, 1)
		f.reply(v.Status, replyPhase1)
	case 2:
		f.inc(ctrBlockedPhase2, 1)
		f.reply(v.Status, replyPhase2)
	default:
		// No separate counter, as in the C++ module: response inspection
		// is off in the benchmark setup.
		f.inc(ctrBlockedPhase2, 1)
		f.reply(v.Status, replyResponse)
	}
}

// phase2 runs phase 2 and reports whether the request may continue.
func (f *filter) phase2() bool {
	t0 := f.cfg.now()
	v := f.tx.ProcessRequestBody()
	f.addTime(ctrPhase2Ns, t0)
	if v != nil {
		f.block(v)
		return false
	}
	f.passed = true
	return true
}

type headersStatus = C.envoy_dynamic_module_type_on_http_filter_request_headers_status

//export envoy_dynamic_module_on_http_filter_request_headers
func envoy_dynamic_module_on_http_filter_request_headers(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) (st headersStatus) {
	f := getFilter(p, ef)
	defer rescue(f, &st, C.envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration, true)
	return f.onRequestHeaders(bool(endOfStream))
}

func (f *filter) onRequestHeaders(endOfStream bool) headersStatus {
	const (
		cont = C.envoy_dynamic_module_type_on_http_filter_request_headers_status_Continue
		stop = C.envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration
	)
	f.inc(ctrRequests, 1)
	t0 := f.cfg.now()
	f.tx = f.cfg.waf.NewTx()

	n := C.envoy_dynamic_module_callback_http_get_headers_size(f.ef, C.envoy_dynamic_module_type_http_header_type_RequestHeader)
	var raw [][2]string
	if n > 0 {
		if cap(f.headers) < int(n) {
			f.headers = make([]C.envoy_dynamic_module_type_envoy_http_header, n)
		}
		hs := f.headers[:n]
		if C.envoy_dynamic_module_callback_http_get_headers(f.ef, C.envoy_dynamic_module_type_http_header_type_RequestHeader, &hs[0]) {
			raw = make([][2]string, 0, n)
			for _, h := range hs {
				raw = append(raw, [2]string{goString(h.key_ptr, h.key_length), goString(h.value_ptr, h.value_length)})
			}
		}
	}
	rl, hdrs := engine.MapHeaders(nil, raw)
	if testPanicHeader != "" {
		f.panicAt = testPanicAt(hdrs)
	}
	f.testPanic("headers")

	cip, cport, _ := engine.ParseAddr(f.attr(C.envoy_dynamic_module_type_attribute_id_SourceAddress))
	sip, sport, _ := engine.ParseAddr(f.attr(C.envoy_dynamic_module_type_attribute_id_DestinationAddress))
	f.tx.ProcessConnection(cip, cport, sip, sport)
	proto := f.attr(C.envoy_dynamic_module_type_attribute_id_RequestProtocol)
	if proto == "" {
		proto = "HTTP/1.1"
	}
	f.tx.ProcessURI(rl.Path, rl.Method, proto)
	for _, h := range hdrs {
		f.tx.AddHeader(h[0], h[1])
	}
	v := f.tx.ProcessRequestHeaders()
	f.addTime(ctrPhase1Ns, t0)
	if v != nil {
		f.block(v)
		return stop
	}
	if endOfStream {
		if !f.phase2() {
			return stop
		}
		return cont
	}
	// Hold the headers until the body has been inspected, and let Envoy
	// buffer past our own limit so that the module, not Envoy, answers 413.
	limit := uint64(C.envoy_dynamic_module_callback_http_get_buffer_limit(f.ef))
	want := uint64(f.cfg.waf.Config().MaxBodyBytes) + 64<<10
	if limit != 0 && limit < want {
		C.envoy_dynamic_module_callback_http_set_buffer_limit(f.ef, C.uint64_t(want))
	}
	return stop
}

// writeChunks feeds a body (received or buffered) to the engine.
func (f *filter) writeChunks(bt C.envoy_dynamic_module_type_http_body_type) *engine.Verdict {
	n := C.envoy_dynamic_module_callback_http_get_body_chunks_size(f.ef, bt)
	if n == 0 {
		return nil
	}
	chunks := make([]C.envoy_dynamic_module_type_envoy_buffer, n)
	if !C.envoy_dynamic_module_callback_http_get_body_chunks(f.ef, bt, &chunks[0]) {
		return nil
	}
	for _, c := range chunks {
		if c.length == 0 {
			continue
		}
		// The engine copies the chunk; Envoy's memory is not kept.
		if v, _ := f.tx.WriteBody(unsafe.Slice((*byte)(unsafe.Pointer(c.ptr)), int(c.length))); v != nil {
			return v
		}
	}
	return nil
}

type bodyStatus = C.envoy_dynamic_module_type_on_http_filter_request_body_status

const (
	bodyContinue = C.envoy_dynamic_module_type_on_http_filter_request_body_status_Continue
	bodyStop     = C.envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer
	bodyBuffer   = C.envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationAndBuffer
)

//export envoy_dynamic_module_on_http_filter_request_body
func envoy_dynamic_module_on_http_filter_request_body(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) (st bodyStatus) {
	f := getFilter(p, ef)
	defer rescue(f, &st, bodyStop, true)
	return f.onRequestBody(bool(endOfStream))
}

func (f *filter) onRequestBody(endOfStream bool) bodyStatus {
	if f.replied || f.tx == nil {
		return bodyStop
	}
	if f.passed {
		return bodyContinue
	}
	// The body so far: the buffered part plus this event's chunk, unless a
	// previous filter buffered everything and handed it on at once.
	replayed := bool(C.envoy_dynamic_module_callback_http_received_buffered_request_body(f.ef))
	total := uint64(C.envoy_dynamic_module_callback_http_get_body_size(f.ef, C.envoy_dynamic_module_type_http_body_type_ReceivedRequestBody))
	if !replayed {
		total += uint64(C.envoy_dynamic_module_callback_http_get_body_size(f.ef, C.envoy_dynamic_module_type_http_body_type_BufferedRequestBody))
	}
	if total > uint64(f.cfg.waf.Config().MaxBodyBytes) {
		f.inc(ctrBodyTooLarge, 1)
		f.reply(413, replyBodyTooLarge)
		return bodyStop
	}
	if !endOfStream {
		return bodyBuffer
	}
	return f.inspectBody(!replayed, true)
}

// inspectBody feeds the whole body to the engine (the buffered chunks when
// withBuffered, then this event's received chunk when withReceived) and runs
// phase 2.
func (f *filter) inspectBody(withBuffered, withReceived bool) bodyStatus {
	f.testPanic("body")
	t0 := f.cfg.now()
	var v *engine.Verdict
	if withBuffered {
		v = f.writeChunks(C.envoy_dynamic_module_type_http_body_type_BufferedRequestBody)
	}
	if v == nil && withReceived {
		v = f.writeChunks(C.envoy_dynamic_module_type_http_body_type_ReceivedRequestBody)
	}
	f.addTime(ctrBodyNs, t0)
	if v != nil {
		f.block(v)
		return bodyStop
	}
	if !f.phase2() {
		return bodyStop
	}
	return bodyContinue
}

type trailersStatus = C.envoy_dynamic_module_type_on_http_filter_request_trailers_status

//export envoy_dynamic_module_on_http_filter_request_trailers
func envoy_dynamic_module_on_http_filter_request_trailers(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr,
) (st trailersStatus) {
	const (
		cont = C.envoy_dynamic_module_type_on_http_filter_request_trailers_status_Continue
		stop = C.envoy_dynamic_module_type_on_http_filter_request_trailers_status_StopIteration
	)
	f := getFilter(p, ef)
	defer rescue(f, &st, stop, true)
	if f.replied {
		return stop
	}
	if f.passed || f.tx == nil {
		return cont
	}
	// Trailers end the stream: the whole body is in the buffer.
	if f.inspectBody(true, false) != bodyContinue {
		return stop
	}
	return cont
}

type responseHeadersStatus = C.envoy_dynamic_module_type_on_http_filter_response_headers_status

//export envoy_dynamic_module_on_http_filter_response_headers
func envoy_dynamic_module_on_http_filter_response_headers(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) (st responseHeadersStatus) {
	const (
		cont = C.envoy_dynamic_module_type_on_http_filter_response_headers_status_Continue
		stop = C.envoy_dynamic_module_type_on_http_filter_response_headers_status_StopIteration
	)
	f := getFilter(p, ef)
	if f.tx == nil || !f.passed || f.replied || !f.cfg.waf.Config().InspectResponse {
		return cont
	}
	defer rescue(f, &st, stop, true)
	n := C.envoy_dynamic_module_callback_http_get_headers_size(f.ef, C.envoy_dynamic_module_type_http_header_type_ResponseHeader)
	status := 0
	if n > 0 {
		hs := make([]C.envoy_dynamic_module_type_envoy_http_header, n)
		if C.envoy_dynamic_module_callback_http_get_headers(f.ef, C.envoy_dynamic_module_type_http_header_type_ResponseHeader, &hs[0]) {
			for _, h := range hs {
				k, v := goString(h.key_ptr, h.key_length), goString(h.value_ptr, h.value_length)
				if k == ":status" {
					status, _ = strconv.Atoi(v)
					continue
				}
				if len(k) > 0 && k[0] == ':' {
					continue
				}
				f.tx.AddResponseHeader(k, v)
			}
		}
	}
	proto := f.attr(C.envoy_dynamic_module_type_attribute_id_RequestProtocol)
	if v := f.tx.ProcessResponse(status, proto); v != nil {
		f.block(v)
		return stop
	}
	return cont
}

//export envoy_dynamic_module_on_http_filter_response_body
func envoy_dynamic_module_on_http_filter_response_body(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) C.envoy_dynamic_module_type_on_http_filter_response_body_status {
	return C.envoy_dynamic_module_type_on_http_filter_response_body_status_Continue
}

//export envoy_dynamic_module_on_http_filter_response_trailers
func envoy_dynamic_module_on_http_filter_response_trailers(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr,
) C.envoy_dynamic_module_type_on_http_filter_response_trailers_status {
	return C.envoy_dynamic_module_type_on_http_filter_response_trailers_status_Continue
}

//export envoy_dynamic_module_on_http_filter_stream_complete
func envoy_dynamic_module_on_http_filter_stream_complete(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr,
) {
	f := getFilter(p, ef)
	if f.tx == nil {
		return
	}
	var st noStatus
	defer rescue(f, &st, st, false)
	defer f.closeTx()
	f.testPanic("logging")
	t0 := f.cfg.now()
	f.tx.ProcessLogging()
	f.addTime(ctrLoggingNs, t0)
}

// testPanicAt is the value of the test panic header in hs, or "".
func testPanicAt(hs [][2]string) string {
	for _, h := range hs {
		if h[0] == testPanicHeader {
			return h[1]
		}
	}
	return ""
}

// testPanic panics when the request asked for a panic in hook (test builds
// only; a no-op, removed by the compiler, in real builds).
func (f *filter) testPanic(hook string) {
	if testPanicHeader != "" && f.panicAt == hook {
		panic("wafbench_coraza: test panic in " + hook)
	}
}
