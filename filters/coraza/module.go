package main

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"time"
	"unsafe"

	"wafbench/filters/coraza/engine"
)

// Counter indexes; names are prefixed with "wafbench_coraza_".
const (
	ctrRequests = iota
	ctrBlockedPhase1
	ctrBlockedPhase2
	ctrEngineErrors
	ctrStageHeadersNs
	ctrStageBodyNs
	ctrStageLoggingNs
	numCounters
)

var counterNames = [numCounters]string{
	ctrRequests:       "wafbench_coraza_requests",
	ctrBlockedPhase1:  "wafbench_coraza_blocked_phase1",
	ctrBlockedPhase2:  "wafbench_coraza_blocked_phase2",
	ctrEngineErrors:   "wafbench_coraza_engine_errors",
	ctrStageHeadersNs: "wafbench_coraza_stage_request_headers_ns",
	ctrStageBodyNs:    "wafbench_coraza_stage_request_body_ns",
	ctrStageLoggingNs: "wafbench_coraza_stage_logging_ns",
}

// stageTimersEnv enables the per-stage nanosecond counters when set to "1".
const stageTimersEnv = "WAFBENCH_STAGE_TIMERS"

// filterConfig is one filter_config: one WAF shared by all its streams.
type filterConfig struct {
	waf      *engine.WAF
	timers   bool
	counters [numCounters]C.size_t
	defined  [numCounters]bool
}

// filter is one HTTP stream. Envoy calls its hooks from one worker thread.
type filter struct {
	cfg      *filterConfig
	tx       *engine.Tx
	decided  bool // request verdict reached (passed or blocked)
	bodySize int
	headers  []C.envoy_dynamic_module_type_envoy_http_header
}

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

//export envoy_dynamic_module_on_http_filter_config_new
func envoy_dynamic_module_on_http_filter_config_new(envoyCfg C.envoy_dynamic_module_type_http_filter_config_envoy_ptr,
	name C.envoy_dynamic_module_type_envoy_buffer, config C.envoy_dynamic_module_type_envoy_buffer,
) C.envoy_dynamic_module_type_http_filter_config_module_ptr {
	cfgName := string(goBytes(name))
	ec, err := parseConfig(goBytes(config))
	if err != nil {
		logf(C.envoy_dynamic_module_type_log_level_Error, "wafbench_coraza filter %q: %v", cfgName, err)
		return nil
	}
	start := time.Now()
	w, err := engine.New(ec)
	if err != nil {
		logf(C.envoy_dynamic_module_type_log_level_Error, "wafbench_coraza filter %q: %v", cfgName, err)
		return nil
	}
	fc := &filterConfig{waf: w, timers: os.Getenv(stageTimersEnv) == "1"}
	n := ctrEngineErrors + 1
	if fc.timers {
		n = numCounters
	}
	for i := 0; i < n; i++ {
		cname := C.CString(counterNames[i])
		var id C.size_t
		res := C.envoy_dynamic_module_callback_http_filter_config_define_counter(envoyCfg,
			C.envoy_dynamic_module_type_module_buffer{ptr: cname, length: C.size_t(len(counterNames[i]))}, nil, 0, &id)
		C.free(unsafe.Pointer(cname))
		if res != C.envoy_dynamic_module_type_metrics_result_Success {
			logf(C.envoy_dynamic_module_type_log_level_Error, "wafbench_coraza filter %q: define counter %s: result %d", cfgName, counterNames[i], int(res))
			return nil
		}
		fc.counters[i], fc.defined[i] = id, true
	}
	logf(C.envoy_dynamic_module_type_log_level_Info, "wafbench_coraza filter %q: loaded %s in %v (inspect_response=%v max_body_bytes=%d stage_timers=%v)",
		cfgName, ec.RulesFile, time.Since(start).Round(time.Millisecond), ec.InspectResponse, w.Config().MaxBodyBytes, fc.timers)
	return C.envoy_dynamic_module_type_http_filter_config_module_ptr(C.wb_handle_ptr(C.uintptr_t(cgo.NewHandle(fc))))
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
	envoyFilter C.envoy_dynamic_module_type_http_filter_envoy_ptr,
) C.envoy_dynamic_module_type_http_filter_module_ptr {
	fc := cgo.Handle(C.wb_ptr_handle(unsafe.Pointer(cfgPtr))).Value().(*filterConfig)
	return C.envoy_dynamic_module_type_http_filter_module_ptr(C.wb_handle_ptr(C.uintptr_t(cgo.NewHandle(&filter{cfg: fc}))))
}

func getFilter(p C.envoy_dynamic_module_type_http_filter_module_ptr) *filter {
	return cgo.Handle(C.wb_ptr_handle(unsafe.Pointer(p))).Value().(*filter)
}

//export envoy_dynamic_module_on_http_filter_destroy
func envoy_dynamic_module_on_http_filter_destroy(p C.envoy_dynamic_module_type_http_filter_module_ptr) {
	h := cgo.Handle(C.wb_ptr_handle(unsafe.Pointer(p)))
	f := h.Value().(*filter)
	if f.tx != nil {
		f.tx.Close()
		f.tx = nil
	}
	h.Delete()
}

func (f *filter) inc(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr, i int, v uint64) {
	if !f.cfg.defined[i] {
		return
	}
	C.envoy_dynamic_module_callback_http_filter_increment_counter(ef, f.cfg.counters[i], nil, 0, C.uint64_t(v))
}

func (f *filter) stage(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr, i int, start time.Time) {
	if f.cfg.timers {
		f.inc(ef, i, uint64(time.Since(start)))
	}
}

// attr reads a string attribute; "" when Envoy has none.
func attr(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr, id C.envoy_dynamic_module_type_attribute_id) string {
	var b C.envoy_dynamic_module_type_envoy_buffer
	if !C.envoy_dynamic_module_callback_http_filter_get_attribute_string(ef, id, &b) {
		return ""
	}
	return goString(b.ptr, b.length)
}

// block answers the request with the verdict's status and counts it.
func (f *filter) block(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr, v *engine.Verdict) {
	f.decided = true
	if v.Phase == 1 {
		f.inc(ef, ctrBlockedPhase1, 1)
	} else {
		f.inc(ef, ctrBlockedPhase2, 1)
	}
	C.envoy_dynamic_module_callback_http_send_response(ef, C.uint32_t(v.Status), nil, 0,
		C.wb_blocked_body(), C.wb_blocked_details())
}

// finishBody runs phase 2 and reports whether the request may continue.
func (f *filter) finishBody(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr) bool {
	f.decided = true
	v := f.tx.ProcessRequestBody()
	if err := f.tx.Err(); err != nil {
		f.inc(ef, ctrEngineErrors, 1)
		logf(C.envoy_dynamic_module_type_log_level_Debug, "wafbench_coraza: %v", err)
	}
	if v != nil {
		f.block(ef, v)
		return false
	}
	return true
}

//export envoy_dynamic_module_on_http_filter_request_headers
func envoy_dynamic_module_on_http_filter_request_headers(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) C.envoy_dynamic_module_type_on_http_filter_request_headers_status {
	f := getFilter(p)
	start := time.Now()
	f.inc(ef, ctrRequests, 1)
	f.tx = f.cfg.waf.NewTx()

	n := C.envoy_dynamic_module_callback_http_get_headers_size(ef, C.envoy_dynamic_module_type_http_header_type_RequestHeader)
	var raw [][2]string
	if n > 0 {
		if cap(f.headers) < int(n) {
			f.headers = make([]C.envoy_dynamic_module_type_envoy_http_header, n)
		}
		hs := f.headers[:n]
		if C.envoy_dynamic_module_callback_http_get_headers(ef, C.envoy_dynamic_module_type_http_header_type_RequestHeader, &hs[0]) {
			for _, h := range hs {
				raw = append(raw, [2]string{goString(h.key_ptr, h.key_length), goString(h.value_ptr, h.value_length)})
			}
		}
	}
	rl, hdrs := engine.MapHeaders(nil, raw)

	cip, cport, _ := engine.ParseAddr(attr(ef, C.envoy_dynamic_module_type_attribute_id_SourceAddress))
	sip, sport, _ := engine.ParseAddr(attr(ef, C.envoy_dynamic_module_type_attribute_id_DestinationAddress))
	f.tx.ProcessConnection(cip, cport, sip, sport)
	proto := attr(ef, C.envoy_dynamic_module_type_attribute_id_RequestProtocol)
	if proto == "" {
		proto = "HTTP/1.1"
	}
	f.tx.ProcessURI(rl.Path, rl.Method, proto)
	for _, h := range hdrs {
		f.tx.AddHeader(h[0], h[1])
	}
	if v := f.tx.ProcessRequestHeaders(); v != nil {
		f.block(ef, v)
		f.stage(ef, ctrStageHeadersNs, start)
		return C.envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration
	}
	if !bool(endOfStream) {
		f.stage(ef, ctrStageHeadersNs, start)
		// Hold the headers until the body has been inspected.
		return C.envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration
	}
	ok := f.finishBody(ef)
	f.stage(ef, ctrStageHeadersNs, start)
	if !ok {
		return C.envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration
	}
	return C.envoy_dynamic_module_type_on_http_filter_request_headers_status_Continue
}

// writeChunks feeds a body (received or buffered) to the engine.
func (f *filter) writeChunks(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr, bt C.envoy_dynamic_module_type_http_body_type) *engine.Verdict {
	n := C.envoy_dynamic_module_callback_http_get_body_chunks_size(ef, bt)
	if n == 0 {
		return nil
	}
	chunks := make([]C.envoy_dynamic_module_type_envoy_buffer, n)
	if !C.envoy_dynamic_module_callback_http_get_body_chunks(ef, bt, &chunks[0]) {
		return nil
	}
	for _, c := range chunks {
		if c.length == 0 {
			continue
		}
		v, err := f.tx.WriteBody(unsafe.Slice((*byte)(unsafe.Pointer(c.ptr)), int(c.length)))
		if err != nil {
			f.inc(ef, ctrEngineErrors, 1)
			return nil
		}
		if v != nil {
			return v
		}
	}
	return nil
}

//export envoy_dynamic_module_on_http_filter_request_body
func envoy_dynamic_module_on_http_filter_request_body(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) C.envoy_dynamic_module_type_on_http_filter_request_body_status {
	f := getFilter(p)
	if f.decided || f.tx == nil {
		return C.envoy_dynamic_module_type_on_http_filter_request_body_status_Continue
	}
	start := time.Now()
	f.bodySize += int(C.envoy_dynamic_module_callback_http_get_body_size(ef, C.envoy_dynamic_module_type_http_body_type_ReceivedRequestBody))
	if f.bodySize > f.cfg.waf.Config().MaxBodyBytes {
		f.block(ef, &engine.Verdict{Status: 413, Phase: 2})
		f.stage(ef, ctrStageBodyNs, start)
		return C.envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer
	}
	if !bool(endOfStream) {
		return C.envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationAndBuffer
	}
	status := f.inspectBody(ef, true)
	f.stage(ef, ctrStageBodyNs, start)
	return status
}

// inspectBody feeds the whole body (buffered chunks, then the latest
// received chunk when it is not the buffer itself) and runs phase 2.
func (f *filter) inspectBody(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr, withReceived bool) C.envoy_dynamic_module_type_on_http_filter_request_body_status {
	v := f.writeChunks(ef, C.envoy_dynamic_module_type_http_body_type_BufferedRequestBody)
	if v == nil && withReceived && !bool(C.envoy_dynamic_module_callback_http_received_buffered_request_body(ef)) {
		v = f.writeChunks(ef, C.envoy_dynamic_module_type_http_body_type_ReceivedRequestBody)
	}
	if v != nil {
		f.block(ef, v)
		return C.envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer
	}
	if !f.finishBody(ef) {
		return C.envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer
	}
	return C.envoy_dynamic_module_type_on_http_filter_request_body_status_Continue
}

//export envoy_dynamic_module_on_http_filter_request_trailers
func envoy_dynamic_module_on_http_filter_request_trailers(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr,
	p C.envoy_dynamic_module_type_http_filter_module_ptr,
) C.envoy_dynamic_module_type_on_http_filter_request_trailers_status {
	f := getFilter(p)
	if f.decided || f.tx == nil {
		return C.envoy_dynamic_module_type_on_http_filter_request_trailers_status_Continue
	}
	// Trailers end the stream: the body is complete in the buffer.
	start := time.Now()
	st := f.inspectBody(ef, false)
	f.stage(ef, ctrStageBodyNs, start)
	if st != C.envoy_dynamic_module_type_on_http_filter_request_body_status_Continue {
		return C.envoy_dynamic_module_type_on_http_filter_request_trailers_status_StopIteration
	}
	return C.envoy_dynamic_module_type_on_http_filter_request_trailers_status_Continue
}

//export envoy_dynamic_module_on_http_filter_response_headers
func envoy_dynamic_module_on_http_filter_response_headers(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) C.envoy_dynamic_module_type_on_http_filter_response_headers_status {
	f := getFilter(p)
	if f.tx == nil || !f.cfg.waf.Config().InspectResponse || !f.decided {
		return C.envoy_dynamic_module_type_on_http_filter_response_headers_status_Continue
	}
	n := C.envoy_dynamic_module_callback_http_get_headers_size(ef, C.envoy_dynamic_module_type_http_header_type_ResponseHeader)
	status := 0
	if n > 0 {
		hs := make([]C.envoy_dynamic_module_type_envoy_http_header, n)
		if C.envoy_dynamic_module_callback_http_get_headers(ef, C.envoy_dynamic_module_type_http_header_type_ResponseHeader, &hs[0]) {
			for _, h := range hs {
				k, v := goString(h.key_ptr, h.key_length), goString(h.value_ptr, h.value_length)
				if k == ":status" {
					fmt.Sscanf(v, "%d", &status)
					continue
				}
				if len(k) > 0 && k[0] == ':' {
					continue
				}
				f.tx.AddResponseHeader(k, v)
			}
		}
	}
	proto := attr(ef, C.envoy_dynamic_module_type_attribute_id_RequestProtocol)
	if v := f.tx.ProcessResponse(status, proto); v != nil && v.Phase >= 3 {
		C.envoy_dynamic_module_callback_http_send_response(ef, C.uint32_t(v.Status), nil, 0,
			C.wb_blocked_body(), C.wb_blocked_details())
		return C.envoy_dynamic_module_type_on_http_filter_response_headers_status_StopIteration
	}
	return C.envoy_dynamic_module_type_on_http_filter_response_headers_status_Continue
}

//export envoy_dynamic_module_on_http_filter_response_body
func envoy_dynamic_module_on_http_filter_response_body(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr,
	p C.envoy_dynamic_module_type_http_filter_module_ptr, endOfStream C.bool,
) C.envoy_dynamic_module_type_on_http_filter_response_body_status {
	return C.envoy_dynamic_module_type_on_http_filter_response_body_status_Continue
}

//export envoy_dynamic_module_on_http_filter_response_trailers
func envoy_dynamic_module_on_http_filter_response_trailers(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr,
	p C.envoy_dynamic_module_type_http_filter_module_ptr,
) C.envoy_dynamic_module_type_on_http_filter_response_trailers_status {
	return C.envoy_dynamic_module_type_on_http_filter_response_trailers_status_Continue
}

//export envoy_dynamic_module_on_http_filter_stream_complete
func envoy_dynamic_module_on_http_filter_stream_complete(ef C.envoy_dynamic_module_type_http_filter_envoy_ptr,
	p C.envoy_dynamic_module_type_http_filter_module_ptr,
) {
	f := getFilter(p)
	if f.tx == nil {
		return
	}
	start := time.Now()
	f.tx.ProcessLogging()
	f.tx.Close()
	f.tx = nil
	f.stage(ef, ctrStageLoggingNs, start)
}
