//go:build modsecurity_engine

package waf

/*
#cgo CPPFLAGS: -I${SRCDIR}/../../modsecurity
#cgo LDFLAGS: -L${SRCDIR}/../../../build/filters -lwafbench_modsecurity_engine -lstdc++
#cgo pkg-config: modsecurity
#include <stdlib.h>
#include "engine_tx_c.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// ModSecurityLinked reports whether this binary links the ModSecurity
// engine (build tag modsecurity_engine).
const ModSecurityLinked = true

// msEngine is one filter configuration of the ModSecurity module's engine.
type msEngine struct {
	p               *C.wafbench_msc_waf
	ctrs            *counters
	timers          bool
	maxBody         uint64
	inspectResponse bool
	info            string
}

func openModSecurity(config []byte, build string, timers bool) (Engine, error) {
	var errbuf [4096]C.char
	var cfg *C.char
	if len(config) > 0 {
		cfg = (*C.char)(unsafe.Pointer(&config[0]))
	}
	p := C.wafbench_msc_waf_new(cfg, C.size_t(len(config)), &errbuf[0], C.size_t(len(errbuf)))
	if p == nil {
		return nil, errors.New(strings.TrimSpace(strings.ReplaceAll(C.GoString(&errbuf[0]), "\n", " ")))
	}
	rules := int(C.wafbench_msc_waf_num_rules(p))
	e := &msEngine{
		p:               p,
		ctrs:            newCounters(msCounterNames, msPhase1Ns, timers),
		timers:          timers,
		maxBody:         uint64(C.wafbench_msc_waf_max_body_bytes(p)),
		inspectResponse: C.wafbench_msc_waf_inspect_response(p) != 0,
		info:            selfReportLine("modsecurity", C.GoString(C.wafbench_msc_waf_version(p)), build, rules),
	}
	fmt.Fprintf(os.Stderr, "wafbench_modsecurity: loaded %d rules (inspect_response=%v max_body_bytes=%d stage_timers=%v)\n",
		rules, e.inspectResponse, e.maxBody, timers)
	return e, nil
}

func (e *msEngine) Name() string       { return "modsecurity" }
func (e *msEngine) SelfReport() string { return e.info }
func (e *msEngine) MaxBodyBytes() int  { return int(e.maxBody) }
func (e *msEngine) Stats() []Stat      { return e.ctrs.stats() }

func (e *msEngine) Close() {
	C.wafbench_msc_waf_free(e.p)
	e.p = nil
}

func (e *msEngine) NewStream() Stream { return &msStream{e: e} }

// msStream is one request, step for step what the module's Filter does
// (module.cc): the same counters, phases, replies and fail-closed rules.
type msStream struct {
	e            *msEngine
	tx           *C.wafbench_msc_tx
	reply        *Reply
	errorCounted bool
	phase2Done   bool
}

func (s *msStream) count(i int) { s.e.ctrs.add(i, 1) }

func (s *msStream) now() time.Time {
	if !s.e.timers {
		return time.Time{}
	}
	return time.Now()
}

func (s *msStream) addTime(i int, t0 time.Time) {
	if s.e.timers {
		s.e.ctrs.add(i, uint64(time.Since(t0)))
	}
}

// reject answers a verdict (the module's Filter::Reject): an engine error
// is 500 and counted once, a rule's verdict is counted in counter.
func (s *msStream) reject(status int, counter int, details string) *Reply {
	if s.tx != nil && C.wafbench_msc_tx_engine_error(s.tx) != 0 {
		return s.failClosed(true)
	}
	s.count(counter)
	s.reply = &Reply{Status: status, Body: msBlockedBody, Details: details}
	return s.reply
}

// failClosed counts the request as an engine error (once) and, when
// respond is set and no reply was given, answers 500 (Filter::FailClosed).
func (s *msStream) failClosed(respond bool) *Reply {
	if !s.errorCounted {
		s.errorCounted = true
		s.count(msEngineErrors)
	}
	if respond && s.reply == nil {
		s.reply = &Reply{Status: 500, Body: msErrorBody, Details: msErrorDetails}
	}
	return s.reply
}

// guard turns a panic of step into a fail-closed 500, as the module's hooks
// turn an exception.
func (s *msStream) guard(step func() *Reply) (r *Reply) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "wafbench_modsecurity: failing closed: panic: %v\n", p)
			r = s.failClosed(true)
		}
	}()
	return step()
}

// cstr is a C view of s without copying (the C side copies what it keeps).
func cstr(s string) (*C.char, C.size_t) {
	if s == "" {
		return nil, 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

func (s *msStream) RequestHeaders(req Request, endOfStream bool) *Reply {
	return s.guard(func() *Reply {
		s.count(msRequests)
		t0 := s.now()
		path, method := "/", "GET"
		var authority string
		haveHost := false
		for _, h := range req.Headers {
			switch h[0] {
			case ":path":
				path = h[1]
			case ":method":
				method = h[1]
			case ":authority":
				authority = h[1]
			case "host":
				haveHost = true
			}
		}
		clientIP, clientPort := splitHostPort(req.Client, "0.0.0.0")
		serverIP, serverPort := splitHostPort(req.Server, "0.0.0.0")
		version := "1.1"
		if p := strings.TrimPrefix(req.Proto, "HTTP/"); p != "" {
			version = p
		}
		s.tx = C.wafbench_msc_tx_new(s.e.p)
		if s.tx == nil {
			return s.failClosed(true)
		}
		cip, cipn := cstr(clientIP)
		sip, sipn := cstr(serverIP)
		v := int(C.wafbench_msc_tx_connection(s.tx, cip, cipn, C.int(clientPort), sip, sipn, C.int(serverPort)))
		if v == 0 {
			u, un := cstr(path)
			m, mn := cstr(method)
			hv, hvn := cstr(version)
			v = int(C.wafbench_msc_tx_uri(s.tx, u, un, m, mn, hv, hvn))
		}
		if v == 0 {
			if !haveHost && authority != "" {
				s.addHeader("Host", authority)
			}
			for _, h := range req.Headers {
				if h[0] == "" || h[0][0] == ':' {
					continue
				}
				s.addHeader(h[0], h[1])
			}
			v = int(C.wafbench_msc_tx_process_headers(s.tx))
		}
		s.addTime(msPhase1Ns, t0)
		if v != 0 {
			return s.reject(v, msBlockedPhase1, "wafbench_modsecurity_phase1")
		}
		if !endOfStream {
			return nil
		}
		if v = s.phase2(nil); v != 0 {
			return s.reject(v, msBlockedPhase2, "wafbench_modsecurity_phase2")
		}
		return nil
	})
}

func (s *msStream) addHeader(k, v string) {
	kp, kn := cstr(k)
	vp, vn := cstr(v)
	C.wafbench_msc_tx_add_header(s.tx, kp, kn, vp, vn)
}

// phase2 feeds body (when not nil) and runs phase 2 (Filter::RunPhase2).
func (s *msStream) phase2(body []byte) int {
	s.phase2Done = true
	if body != nil {
		t0 := s.now()
		v := 0
		if len(body) > 0 {
			v = int(C.wafbench_msc_tx_append_body(s.tx, (*C.char)(unsafe.Pointer(&body[0])), C.size_t(len(body))))
		}
		s.addTime(msBodyNs, t0)
		if v != 0 {
			return v
		}
	}
	t1 := s.now()
	v := int(C.wafbench_msc_tx_process_body(s.tx))
	s.addTime(msPhase2Ns, t1)
	return v
}

func (s *msStream) RequestBody(body []byte) *Reply {
	return s.guard(func() *Reply {
		if s.reply != nil || s.tx == nil || s.phase2Done {
			return s.reply
		}
		if uint64(len(body)) > s.e.maxBody {
			return s.reject(413, msBodyTooLarge, "wafbench_modsecurity_body_too_large")
		}
		if body == nil {
			body = []byte{}
		}
		if v := s.phase2(body); v != 0 {
			return s.reject(v, msBlockedPhase2, "wafbench_modsecurity_phase2")
		}
		return nil
	})
}

func (s *msStream) ResponseHeaders(status int, headers [][2]string) *Reply {
	if !s.e.inspectResponse || s.reply != nil || s.tx == nil {
		return nil
	}
	return s.guard(func() *Reply {
		for _, h := range headers {
			kp, kn := cstr(h[0])
			vp, vn := cstr(h[1])
			C.wafbench_msc_tx_add_response_header(s.tx, kp, kn, vp, vn)
		}
		proto, pn := cstr("HTTP/1.1")
		if v := int(C.wafbench_msc_tx_process_response_headers(s.tx, C.int(status), proto, pn)); v != 0 {
			// No separate counter, as in the module.
			return s.reject(v, msBlockedPhase2, "wafbench_modsecurity_phase3")
		}
		// The response body is not sent to this server: phase 4 at once.
		if v := int(C.wafbench_msc_tx_process_response_body(s.tx)); v != 0 {
			return s.reject(v, msBlockedPhase2, "wafbench_modsecurity_phase4")
		}
		return nil
	})
}

func (s *msStream) Close() {
	if s.tx == nil {
		return
	}
	t0 := s.now()
	C.wafbench_msc_tx_logging(s.tx)
	s.addTime(msLoggingNs, t0)
	if C.wafbench_msc_tx_engine_error(s.tx) != 0 && !s.errorCounted {
		s.errorCounted = true
		s.count(msEngineErrors)
	}
	C.wafbench_msc_tx_free(s.tx)
	s.tx = nil
}

// splitHostPort splits "1.2.3.4:80" or "[::1]:80" as the module's
// SplitHostPort does: without a port the whole input is the host and the
// port is 0; an empty address is def.
func splitHostPort(addr, def string) (string, int) {
	if addr == "" {
		return def, 0
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	p, _ := strconv.Atoi(port)
	return host, p
}
