// Package caddywaf is wafbench's Caddy HTTP handler around coraza/v3: the
// reference host ref-caddy-coraza. It evaluates every request with the same
// engine wrapper as the Envoy module (wafbench/filters/coraza/engine: one
// rule set, the same request mapping and the same verdicts), over the same
// rules file: phase 1 on the headers, the body buffered in full (up to the
// shared 1 MiB limit, answered 413 beyond it) and fed to the engine, phase 2,
// then the next handler (Caddy's reverse_proxy) with the buffered body. An
// intervention is answered with its status and a short body; an engine error
// or a panic fails the request closed with 500.
//
// The handler keeps the Envoy modules' counters, with their names and
// meaning (wafbench_coraza_requests, _blocked_phase1, _blocked_phase2,
// _body_too_large, _engine_errors) and its GOMAXPROCS, and serves them on Caddy's loopback admin
// endpoint at CountersPath in the shape of Envoy's admin /stats?format=json,
// so the driver reads both hosts' counters with one parser. On provisioning
// it logs the modules' self-report line to stderr.
package caddywaf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"wafbench/filters/coraza/engine"
)

// buildName is the mode name the host reports in its self-report line: the
// driver's modes.RefCaddyCoraza. The preflight compares the two, so a
// renamed mode shows up as a failed preflight, not as a silent mismatch.
var buildName = "ref-caddy-coraza"

// moduleName is the "module" field of the self-report line.
const moduleName = "wafbench_caddy_coraza"

// countersPath is the admin-endpoint path that serves the counters.
const countersPath = "/wafbench/stats"

// selfReportPrefix starts the self-report line (the Envoy modules' prefix).
const selfReportPrefix = "wafbench-module "

func init() {
	caddy.RegisterModule(handler{})
	caddy.RegisterModule(counters{})
}

// The process-wide counters (one handler instance per configuration; the
// admin module that serves them is a separate instance).
var (
	ctrRequests      atomic.Uint64
	ctrBlockedPhase1 atomic.Uint64
	ctrBlockedPhase2 atomic.Uint64
	ctrBodyTooLarge  atomic.Uint64
	ctrEngineErrors  atomic.Uint64
)

// counterList names the counters in the order they are served.
var counterList = []struct {
	name string
	c    *atomic.Uint64
}{
	{"wafbench_coraza_requests", &ctrRequests},
	{"wafbench_coraza_blocked_phase1", &ctrBlockedPhase1},
	{"wafbench_coraza_blocked_phase2", &ctrBlockedPhase2},
	{"wafbench_coraza_body_too_large", &ctrBodyTooLarge},
	{"wafbench_coraza_engine_errors", &ctrEngineErrors},
}

// handler is the http.handlers.wafbench_coraza module. Its JSON fields are
// the Envoy modules' filter_config fields that apply to it.
type handler struct {
	// RulesFile is the absolute path of the rule entry point (the main.conf
	// every WAF mode loads).
	RulesFile string `json:"rules_file"`
	// MaxBodyBytes caps the buffered request body; 0 means 1 MiB. It also
	// caps the response body buffered for phase 4.
	MaxBodyBytes int `json:"max_body_bytes,omitempty"`
	// InspectResponse runs phases 3 and 4 on the upstream's response (the
	// body too when the rules set SecResponseBodyAccess On), as the Envoy
	// modules' inspect_response.
	InspectResponse bool `json:"inspect_response,omitempty"`
	// MatchLog writes every rule match Coraza logs to stderr as one
	// `wafbench-match [id "…"] [msg "…"] [data "…"] [tx "…"]` line (the
	// Envoy modules' match_log; CRS conformance runs only).
	MatchLog bool `json:"match_log,omitempty"`

	waf *engine.WAF
}

// CaddyModule returns the Caddy module information.
func (handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.wafbench_coraza", New: func() caddy.Module { return new(handler) }}
}

// selfReport is the self-report line's JSON: the Envoy modules' fields.
type selfReport struct {
	Module        string `json:"module"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Build         string `json:"build"`
	Rules         int    `json:"rules"`
}

// Provision loads the rules and logs the self-report line.
func (h *handler) Provision(caddy.Context) error {
	w, err := engine.NewLogged(engine.Config{RulesFile: h.RulesFile, MaxBodyBytes: h.MaxBodyBytes,
		InspectResponse: h.InspectResponse, MatchLog: h.MatchLog}, nil, writeMatchLine)
	if err != nil {
		return fmt.Errorf("wafbench_coraza: %w", err)
	}
	h.waf = w
	line, err := json.Marshal(selfReport{Module: moduleName, Engine: "coraza", EngineVersion: engine.Version(),
		Build: buildName, Rules: w.Rules()})
	if err != nil {
		return err
	}
	// Straight to stderr, not through Caddy's JSON logger, which would
	// quote the JSON object inside its message string.
	fmt.Fprintf(os.Stderr, "%s%s\n", selfReportPrefix, line)
	return nil
}

// writeMatchLine writes one match_log line to stderr in one write, so lines
// of concurrent requests do not interleave.
func writeMatchLine(line string) { os.Stderr.WriteString(line + "\n") }

// blockedBody is the body of every intervention's answer.
const blockedBody = "Request blocked by wafbench caddy-coraza\n"

// ServeHTTP evaluates the request and hands it to next when it passes. The
// transaction stays open until next has answered (phase 5 runs last, as in
// the Envoy module at stream end).
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	ctrRequests.Add(1)
	tx := h.waf.NewTx()
	defer tx.Close()
	defer tx.ProcessLogging()
	if !h.inspect(w, r, tx) {
		return nil
	}
	if !h.InspectResponse {
		return next.ServeHTTP(w, r)
	}
	return h.serveInspected(w, r, next, tx)
}

// serveInspected runs next with the response recorded: phase 3 when next
// writes the headers, then either phase 4 right away and the response
// streamed on, or (when phase 3 intervened, or the engine reads the
// response body) the response buffered — up to the body limit, beyond
// which phase 4 sees the first MaxBodyBytes — phase 4, and the response
// or the intervention's answer written.
func (h *handler) serveInspected(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, tx *engine.Tx) error {
	var verdict *engine.Verdict
	wantBody := false
	buf := new(bytes.Buffer)
	rec := caddyhttp.NewResponseRecorder(w, buf, func(status int, hdr http.Header) bool {
		for k, vs := range hdr {
			for _, v := range vs {
				tx.AddResponseHeader(k, v)
			}
		}
		if verdict = tx.ProcessResponseHeaders(status, r.Proto); verdict != nil {
			return true
		}
		if wantBody = tx.WantsResponseBody(); wantBody {
			return true
		}
		verdict = tx.ProcessResponseBody()
		return verdict != nil
	})
	if err := next.ServeHTTP(rec, r); err != nil {
		return err
	}
	if !rec.Buffered() {
		return nil
	}
	if wantBody {
		body := buf.Bytes()
		if max := h.waf.Config().MaxBodyBytes; len(body) > max {
			body = body[:max]
		}
		if verdict = tx.WriteResponseBody(body); verdict == nil {
			verdict = tx.ProcessResponseBody()
		}
	}
	if verdict == nil {
		return rec.WriteResponse()
	}
	if tx.Err() != nil {
		ctrEngineErrors.Add(1)
		fmt.Fprintf(os.Stderr, "wafbench_coraza: failing closed: %v\n", tx.Err())
	} else {
		ctrBlockedPhase2.Add(1) // as in the Envoy modules: responses count as phase 2
	}
	answer(w, verdict.Status)
	return nil
}

// answer writes an intervention's response.
func answer(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(blockedBody)))
	w.WriteHeader(status)
	io.WriteString(w, blockedBody)
}

// inspect runs phases 1 and 2 on r, buffering its body, and reports whether
// r may go on; when not, it has answered. A panic in the engine or in this
// code fails the request closed (500, engine_errors); a panic in next is
// not ours to count and is left to Caddy.
func (h *handler) inspect(w http.ResponseWriter, r *http.Request, tx *engine.Tx) (pass bool) {
	answered := false
	reply := func(status int) bool {
		answered = true
		answer(w, status)
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			ctrEngineErrors.Add(1)
			fmt.Fprintf(os.Stderr, "wafbench_coraza: failing closed: panic: %v\n", p)
			if !answered {
				answer(w, http.StatusInternalServerError)
			}
			pass = false
		}
	}()
	block := func(v *engine.Verdict) bool {
		switch {
		case tx.Err() != nil:
			ctrEngineErrors.Add(1)
			fmt.Fprintf(os.Stderr, "wafbench_coraza: failing closed: %v\n", tx.Err())
		case v.Status == http.StatusRequestEntityTooLarge && v.RuleID == 0:
			ctrBodyTooLarge.Add(1)
		case v.Phase == 1:
			ctrBlockedPhase1.Add(1)
		default:
			ctrBlockedPhase2.Add(1)
		}
		return reply(v.Status)
	}

	cip, cport, _ := engine.ParseAddr(r.RemoteAddr)
	var sip string
	var sport int
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		sip, sport, _ = engine.ParseAddr(a.String())
	}
	tx.ProcessConnection(cip, cport, sip, sport)
	tx.ProcessURI(r.RequestURI, r.Method, r.Proto)
	for _, h := range requestHeaders(r) {
		tx.AddHeader(h[0], h[1])
	}
	if v := tx.ProcessRequestHeaders(); v != nil {
		return block(v)
	}

	max := h.waf.Config().MaxBodyBytes
	if r.ContentLength > int64(max) {
		ctrBodyTooLarge.Add(1)
		return reply(http.StatusRequestEntityTooLarge)
	}
	if r.Body != nil && r.Body != http.NoBody {
		body, v, err := h.feedBody(tx, r.Body, max)
		if v != nil {
			return block(v)
		}
		if err != nil {
			// The client's body could not be read in full: nothing was
			// inspected that could be forwarded.
			return reply(http.StatusBadRequest)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.TransferEncoding = nil
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if v := tx.ProcessRequestBody(); v != nil {
		return block(v)
	}
	return true
}

// feedBody reads the whole body (at most max+1 bytes, so a longer one is
// seen to be too long) and writes it to the engine as it arrives. It returns
// the body, or the engine's verdict, or the read error.
func (h *handler) feedBody(tx *engine.Tx, body io.Reader, max int) ([]byte, *engine.Verdict, error) {
	buf := make([]byte, 0, 4096)
	lr := io.LimitReader(body, int64(max)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			chunk := buf[len(buf) : len(buf)+n]
			buf = buf[:len(buf)+n]
			if v, _ := tx.WriteBody(chunk); v != nil {
				return nil, v, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return buf, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read request body: %w", err)
		}
	}
}

// requestHeaders lists the request's headers as the engine is given them:
// Host first (Go moves it out of the header map), then every header value,
// then Transfer-Encoding (also moved out by Go) when the request had one.
// The order of the other names is Go's map order; CRS does not depend on it.
func requestHeaders(r *http.Request) [][2]string {
	out := make([][2]string, 0, len(r.Header)+2)
	if r.Host != "" {
		out = append(out, [2]string{"Host", r.Host})
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			out = append(out, [2]string{k, v})
		}
	}
	if len(r.TransferEncoding) > 0 {
		out = append(out, [2]string{"Transfer-Encoding", strings.Join(r.TransferEncoding, ", ")})
	}
	return out
}

// counters is the admin.api.wafbench module: it serves the handler's
// counters at CountersPath on Caddy's admin endpoint.
type counters struct{}

// CaddyModule returns the Caddy module information.
func (counters) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "admin.api.wafbench", New: func() caddy.Module { return new(counters) }}
}

// Routes registers CountersPath.
func (counters) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: countersPath, Handler: caddy.AdminHandlerFunc(serveCounters)}}
}

// statsDoc is the shape of Envoy's admin /stats?format=json.
type statsDoc struct {
	Stats []statEntry `json:"stats"`
}

type statEntry struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// gomaxprocsStat is the gauge beside the counters that reports the
// process's GOMAXPROCS, so the driver can check the host ran with the
// thread budget it was given.
const gomaxprocsStat = "wafbench_caddy_gomaxprocs"

// countersJSON is the counters document CountersPath serves.
func countersJSON() []byte {
	doc := statsDoc{Stats: make([]statEntry, 0, len(counterList))}
	for _, c := range counterList {
		doc.Stats = append(doc.Stats, statEntry{Name: c.name, Value: c.c.Load()})
	}
	doc.Stats = append(doc.Stats, statEntry{Name: gomaxprocsStat, Value: uint64(runtime.GOMAXPROCS(0))})
	b, _ := json.Marshal(doc)
	return b
}

func serveCounters(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("%s %s: want GET", r.Method, countersPath)}
	}
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(countersJSON())
	return err
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*handler)(nil)
	_ caddy.AdminRouter           = counters{}
)
