package main

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"strconv"
	"time"
	"unsafe"

	"wafbench/filters/coraza/engine"
	"wafbench/filters/coraza/stream"
)

// buildName is the mode name of this build (preamble contract 3), set with
// -ldflags=-X main.buildName=coraza@re2; "coraza" is the default build.
var buildName = "coraza"

// Counter indexes and names: the contract's counters, shared with the
// proxy-wasm filter (package stream).
const (
	numCounters = int(stream.NumCounters)
	firstTimer  = int(stream.FirstTimer)
)

var counterNames = stream.CounterNames

// filterConfig is one filter_config: one WAF shared by all its streams.
type filterConfig struct {
	stream.Filter
	counters [numCounters]C.size_t
	// goStats is nil unless WAFBENCH_GO_STATS=1; then goCounters are the
	// Go runtime counters' ids.
	goStats    *stream.GoStats
	goCounters [stream.NumGoStats]C.size_t
}

type envoyFilter = C.envoy_dynamic_module_type_http_filter_envoy_ptr

// filter is one HTTP stream. Envoy calls its hooks from one worker thread.
type filter struct {
	cfg     *filterConfig
	ef      envoyFilter // the stream's Envoy side, refreshed by every hook
	s       *stream.Stream
	panicAt string // test builds only: the hook that panics (see testPanicHeader)
	headers []C.envoy_dynamic_module_type_envoy_http_header
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
	stream.DefaultMaxProcs(os.Getenv("GOMAXPROCS"))
	return C.wb_abi_version()
}

// configLog reports a failed filter config (nil stream).
type configLog string

func (c configLog) FailClosed(err error, _ bool) {
	logf(C.envoy_dynamic_module_type_log_level_Error, "wafbench_coraza filter %q: %v", string(c), err)
}

//export envoy_dynamic_module_on_http_filter_config_new
func envoy_dynamic_module_on_http_filter_config_new(envoyCfg C.envoy_dynamic_module_type_http_filter_config_envoy_ptr,
	name C.envoy_dynamic_module_type_envoy_buffer, config C.envoy_dynamic_module_type_envoy_buffer,
) (ptr C.envoy_dynamic_module_type_http_filter_config_module_ptr) {
	cfgName := configLog(goBytes(name))
	defer stream.Rescue(cfgName, &ptr, nil, false)
	fc, err := newFilterConfig(envoyCfg, string(cfgName), goBytes(config))
	if err != nil {
		cfgName.FailClosed(err, false)
		return nil
	}
	return C.envoy_dynamic_module_type_http_filter_config_module_ptr(C.wb_handle_ptr(C.uintptr_t(cgo.NewHandle(fc))))
}

func newFilterConfig(envoyCfg C.envoy_dynamic_module_type_http_filter_config_envoy_ptr, name string, raw []byte) (*filterConfig, error) {
	ec, rt, err := stream.ParseModuleConfig(raw)
	if err != nil {
		return nil, err
	}
	rt.Apply()
	start := time.Now()
	// match_log lines go to Envoy's log at info, as the C++ module's.
	w, err := engine.NewLogged(ec, nil, func(line string) {
		logf(C.envoy_dynamic_module_type_log_level_Info, "wafbench_coraza: %s", line)
	})
	if err != nil {
		return nil, err
	}
	fc := &filterConfig{Filter: stream.Filter{WAF: w, Timers: os.Getenv(stream.StageTimersEnv) == "1"}}
	for c := range stream.NumCounters {
		if !fc.Defined(c) {
			continue
		}
		if fc.counters[c], err = defineCounter(envoyCfg, counterNames[c]); err != nil {
			return nil, err
		}
	}
	if os.Getenv(stream.GoStatsEnv) == "1" {
		for c, cname := range stream.GoStatNames {
			if fc.goCounters[c], err = defineCounter(envoyCfg, cname); err != nil {
				return nil, err
			}
		}
		fc.goStats = stream.NewGoStats()
	}
	line, err := stream.InfoLine(buildName, w)
	if err != nil {
		return nil, err
	}
	logf(C.envoy_dynamic_module_type_log_level_Info, "%s", line)
	logf(C.envoy_dynamic_module_type_log_level_Info, "%s", stream.GoRuntimeLine())
	logf(C.envoy_dynamic_module_type_log_level_Info, "wafbench_coraza filter %q: loaded %s in %v (inspect_response=%v max_body_bytes=%d stage_timers=%v match_log=%v)",
		name, ec.RulesFile, time.Since(start).Round(time.Millisecond), ec.InspectResponse, w.Config().MaxBodyBytes, fc.Timers, ec.MatchLog)
	return fc, nil
}

// defineCounter defines the Envoy counter name in the filter config.
func defineCounter(envoyCfg C.envoy_dynamic_module_type_http_filter_config_envoy_ptr, name string) (C.size_t, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var id C.size_t
	res := C.envoy_dynamic_module_callback_http_filter_config_define_counter(envoyCfg,
		C.envoy_dynamic_module_type_module_buffer{ptr: cname, length: C.size_t(len(name))}, nil, 0, &id)
	if res != C.envoy_dynamic_module_type_metrics_result_Success {
		return 0, fmt.Errorf("define counter %s: result %d", name, int(res))
	}
	return id, nil
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
	f := &filter{cfg: fc, ef: ef}
	f.s = stream.New(&fc.Filter, f)
	return C.envoy_dynamic_module_type_http_filter_module_ptr(C.wb_handle_ptr(C.uintptr_t(cgo.NewHandle(f))))
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
	defer stream.Rescue(f.s, &st, st, false)
	f.s.Close()
}

// Inc implements stream.Host: Envoy counter c of the filter config.
func (f *filter) Inc(c stream.Counter, v uint64) {
	C.envoy_dynamic_module_callback_http_filter_increment_counter(f.ef, f.cfg.counters[c], nil, 0, C.uint64_t(v))
}

// Reply implements stream.Host: Envoy's local reply (static C strings, so
// no Go memory reaches C).
func (f *filter) Reply(status int, r stream.Reason) {
	C.envoy_dynamic_module_callback_http_send_response(f.ef, C.uint32_t(status), C.wb_reply_headers(), 1,
		C.wb_blocked_body(), C.wb_reply_details(C.int(r)))
}

// LogError implements stream.Host.
func (f *filter) LogError(msg string) {
	logf(C.envoy_dynamic_module_type_log_level_Error, "%s", msg)
}

// attr reads a string attribute; "" when Envoy has none.
func (f *filter) attr(id C.envoy_dynamic_module_type_attribute_id) string {
	var b C.envoy_dynamic_module_type_envoy_buffer
	if !C.envoy_dynamic_module_callback_http_filter_get_attribute_string(f.ef, id, &b) {
		return ""
	}
	return goString(b.ptr, b.length)
}

type headersStatus = C.envoy_dynamic_module_type_on_http_filter_request_headers_status

//export envoy_dynamic_module_on_http_filter_request_headers
func envoy_dynamic_module_on_http_filter_request_headers(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) (st headersStatus) {
	f := getFilter(p, ef)
	defer stream.Rescue(f.s, &st, C.envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration, true)
	return f.onRequestHeaders(bool(endOfStream))
}

func (f *filter) onRequestHeaders(endOfStream bool) headersStatus {
	const (
		cont = C.envoy_dynamic_module_type_on_http_filter_request_headers_status_Continue
		stop = C.envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration
	)
	f.s.Start()
	n := C.envoy_dynamic_module_callback_http_get_headers_size(f.ef, C.envoy_dynamic_module_type_http_header_type_RequestHeader)
	var raw [][2]string
	if n > 0 {
		if cap(f.headers) < int(n) {
			f.headers = make([]C.envoy_dynamic_module_type_envoy_http_header, n)
		}
		hs := f.headers[:n]
		if C.envoy_dynamic_module_callback_http_get_headers(f.ef, C.envoy_dynamic_module_type_http_header_type_RequestHeader, &hs[0]) {
			raw = copyHeaders(hs)
		}
	}
	if testPanicHeader != "" {
		f.panicAt = testPanicAt(raw)
	}
	req := stream.Request{
		Headers: raw,
		Client:  f.attr(C.envoy_dynamic_module_type_attribute_id_SourceAddress),
		Server:  f.attr(C.envoy_dynamic_module_type_attribute_id_DestinationAddress),
		Proto:   f.attr(C.envoy_dynamic_module_type_attribute_id_RequestProtocol),
	}
	if f.testPanic("headers") {
		panic("wafbench_coraza: test panic in headers")
	}
	if f.s.RequestHeaders(req, endOfStream) {
		return cont
	}
	if endOfStream || f.s.Replied() {
		return stop
	}
	// Hold the headers until the body has been inspected, and let Envoy
	// buffer past our own limit so that the module, not Envoy, answers 413.
	limit := uint64(C.envoy_dynamic_module_callback_http_get_buffer_limit(f.ef))
	want := uint64(f.cfg.MaxBodyBytes()) + 64<<10
	if limit != 0 && limit < want {
		C.envoy_dynamic_module_callback_http_set_buffer_limit(f.ef, C.uint64_t(want))
	}
	return stop
}

// copyHeaders copies headers out of Envoy's memory in two allocations,
// whatever their number: one for every key and value byte (the strings
// share it and keep it alive as long as the engine holds any of them), one
// for the pairs.
func copyHeaders(hs []C.envoy_dynamic_module_type_envoy_http_header) [][2]string {
	size := 0
	for _, h := range hs {
		size += int(h.key_length) + int(h.value_length)
	}
	buf := make([]byte, 0, size)
	str := func(p C.envoy_dynamic_module_type_buffer_envoy_ptr, n C.size_t) string {
		if p == nil || n == 0 {
			return ""
		}
		at := len(buf)
		buf = append(buf, unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))...)
		return unsafe.String(&buf[at], int(n))
	}
	raw := make([][2]string, 0, len(hs))
	for _, h := range hs {
		raw = append(raw, [2]string{str(h.key_ptr, h.key_length), str(h.value_ptr, h.value_length)})
	}
	return raw
}

// chunks returns views of a body (received or buffered) in Envoy's memory,
// valid during the hook only.
func (f *filter) chunks(dst [][]byte, bt C.envoy_dynamic_module_type_http_body_type) [][]byte {
	n := C.envoy_dynamic_module_callback_http_get_body_chunks_size(f.ef, bt)
	if n == 0 {
		return dst
	}
	cs := make([]C.envoy_dynamic_module_type_envoy_buffer, n)
	if !C.envoy_dynamic_module_callback_http_get_body_chunks(f.ef, bt, &cs[0]) {
		return dst
	}
	for _, c := range cs {
		if c.length > 0 {
			dst = append(dst, unsafe.Slice((*byte)(unsafe.Pointer(c.ptr)), int(c.length)))
		}
	}
	return dst
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
	defer stream.Rescue(f.s, &st, bodyStop, true)
	return f.onRequestBody(bool(endOfStream))
}

func (f *filter) onRequestBody(endOfStream bool) bodyStatus {
	if f.s.Replied() || !f.s.Started() {
		return bodyStop
	}
	if f.s.Passed() {
		return bodyContinue
	}
	// The body so far: the buffered part plus this event's chunk, unless a
	// previous filter buffered everything and handed it on at once.
	replayed := bool(C.envoy_dynamic_module_callback_http_received_buffered_request_body(f.ef))
	total := uint64(C.envoy_dynamic_module_callback_http_get_body_size(f.ef, C.envoy_dynamic_module_type_http_body_type_ReceivedRequestBody))
	if !replayed {
		total += uint64(C.envoy_dynamic_module_callback_http_get_body_size(f.ef, C.envoy_dynamic_module_type_http_body_type_BufferedRequestBody))
	}
	if f.s.CheckBodySize(total) {
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
	if f.testPanic("body") {
		panic("wafbench_coraza: test panic in body")
	}
	var body [][]byte
	if withBuffered {
		body = f.chunks(body, C.envoy_dynamic_module_type_http_body_type_BufferedRequestBody)
	}
	if withReceived {
		body = f.chunks(body, C.envoy_dynamic_module_type_http_body_type_ReceivedRequestBody)
	}
	if f.s.Body(body) {
		return bodyContinue
	}
	return bodyStop
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
	defer stream.Rescue(f.s, &st, stop, true)
	if f.s.Replied() {
		return stop
	}
	if f.s.Passed() || !f.s.Started() {
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
	if !f.s.InspectsResponse() {
		return cont
	}
	defer stream.Rescue(f.s, &st, stop, true)
	n := C.envoy_dynamic_module_callback_http_get_headers_size(f.ef, C.envoy_dynamic_module_type_http_header_type_ResponseHeader)
	status := 0
	var hdrs [][2]string
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
				hdrs = append(hdrs, [2]string{k, v})
			}
		}
	}
	if f.s.ResponseHeaders(status, hdrs, f.attr(C.envoy_dynamic_module_type_attribute_id_RequestProtocol), bool(endOfStream)) {
		return cont
	}
	return stop // answered, or phase 4 waits for the body (headers held)
}

type responseBodyStatus = C.envoy_dynamic_module_type_on_http_filter_response_body_status

//export envoy_dynamic_module_on_http_filter_response_body
func envoy_dynamic_module_on_http_filter_response_body(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) (st responseBodyStatus) {
	const (
		cont   = C.envoy_dynamic_module_type_on_http_filter_response_body_status_Continue
		buffer = C.envoy_dynamic_module_type_on_http_filter_response_body_status_StopIterationAndBuffer
		stop   = C.envoy_dynamic_module_type_on_http_filter_response_body_status_StopIterationNoBuffer
	)
	f := getFilter(p, ef)
	if !f.s.WantsResponseBody() {
		return cont
	}
	defer stream.Rescue(f.s, &st, stop, true)
	// As for the request body: buffer to the end (or to the filter's body
	// limit; Coraza keeps at most SecResponseBodyLimit anyway), then feed
	// the buffered chunks and this event's.
	replayed := bool(C.envoy_dynamic_module_callback_http_received_buffered_response_body(f.ef))
	total := uint64(C.envoy_dynamic_module_callback_http_get_body_size(f.ef, C.envoy_dynamic_module_type_http_body_type_ReceivedResponseBody))
	if !replayed {
		total += uint64(C.envoy_dynamic_module_callback_http_get_body_size(f.ef, C.envoy_dynamic_module_type_http_body_type_BufferedResponseBody))
	}
	if !endOfStream && total < uint64(f.cfg.MaxBodyBytes()) {
		return buffer
	}
	var body [][]byte
	if !replayed {
		body = f.chunks(body, C.envoy_dynamic_module_type_http_body_type_BufferedResponseBody)
	}
	body = f.chunks(body, C.envoy_dynamic_module_type_http_body_type_ReceivedResponseBody)
	if f.s.ResponseBody(body) {
		return cont
	}
	return stop
}

type responseTrailersStatus = C.envoy_dynamic_module_type_on_http_filter_response_trailers_status

//export envoy_dynamic_module_on_http_filter_response_trailers
func envoy_dynamic_module_on_http_filter_response_trailers(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr,
) (st responseTrailersStatus) {
	const (
		cont = C.envoy_dynamic_module_type_on_http_filter_response_trailers_status_Continue
		stop = C.envoy_dynamic_module_type_on_http_filter_response_trailers_status_StopIteration
	)
	f := getFilter(p, ef)
	if !f.s.WantsResponseBody() {
		return cont
	}
	defer stream.Rescue(f.s, &st, stop, true)
	// Trailers end the response: the whole body is in the buffer.
	if f.s.ResponseBody(f.chunks(nil, C.envoy_dynamic_module_type_http_body_type_BufferedResponseBody)) {
		return cont
	}
	return stop
}

//export envoy_dynamic_module_on_http_filter_stream_complete
func envoy_dynamic_module_on_http_filter_stream_complete(ef envoyFilter,
	p C.envoy_dynamic_module_type_http_filter_module_ptr,
) {
	f := getFilter(p, ef)
	if !f.s.Started() {
		return
	}
	var st noStatus
	defer stream.Rescue(f.s, &st, st, false)
	defer f.s.Close()
	if f.testPanic("logging") {
		panic("wafbench_coraza: test panic in logging")
	}
	f.s.Log()
	if f.cfg.goStats != nil {
		f.countGoStats()
	}
}

// countGoStats adds the Go runtime's counters' increase since the last
// stream that counted them (WAFBENCH_GO_STATS=1 only). The increments are
// Go→C calls themselves: go_to_c_calls includes these NumGoStats per
// request.
func (f *filter) countGoStats() {
	for c, d := range f.cfg.goStats.Deltas() {
		C.envoy_dynamic_module_callback_http_filter_increment_counter(f.ef, f.cfg.goCounters[c], nil, 0, C.uint64_t(d))
	}
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

// testPanic reports whether the request asked for a panic in hook (test
// builds only; always false, removed by the compiler, in real builds).
func (f *filter) testPanic(hook string) bool {
	return testPanicHeader != "" && f.panicAt == hook
}
